//===- DeviceAllocations.cpp - Host-code buffers in managed memory --------===//
//
// The buffers kiln-cuda-plan-arena left alone (results, loop-carried values,
// dynamically shaped ones) may be read by the host code as well as by
// kernels, so each is allocated as CUDA managed memory: `memref.alloc` ->
// `gpu.alloc host_shared`, and `memref.dealloc` -> `gpu.dealloc async` on
// the stream (`gpu.wait async`), not waited for: the runtime returns the
// buffer to its pool, and work queued on the one stream that still uses it
// runs before any later use of the bytes. Kernels allocate nothing, and ops
// inside a `gpu.launch` are left alone. Buffers only the host code touches
// (the deallocation's bookkeeping, HostBuffers.h) stay memref.alloc.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "HostBuffers.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDADEVICEALLOCATIONS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCudaDeviceAllocationsPass
    : kiln::impl::KilnCudaDeviceAllocationsBase<
          KilnCudaDeviceAllocationsPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        deallocs.push_back(dealloc);
    });
    // The deallocation's bookkeeping stays host memory (HostBuffers.h),
    // and so do its frees.
    llvm::SmallPtrSet<Operation *, 8> hostOnly;
    for (memref::AllocOp alloc : allocs)
      if (kiln::isHostOnlyBuffer(alloc.getMemref()))
        hostOnly.insert(alloc);
    llvm::erase_if(deallocs, [&](memref::DeallocOp dealloc) {
      Value freed = dealloc.getMemref();
      while (auto cast = freed.getDefiningOp<memref::CastOp>())
        freed = cast.getSource();
      return hostOnly.contains(freed.getDefiningOp());
    });
    for (memref::AllocOp alloc : allocs) {
      if (hostOnly.contains(alloc))
        continue;
      OpBuilder builder(alloc);
      auto device = builder.create<gpu::AllocOp>(
          alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/true);
      alloc.replaceAllUsesWith(device.getMemref());
      alloc.erase();
    }
    auto tokenType = gpu::AsyncTokenType::get(&getContext());
    for (memref::DeallocOp dealloc : deallocs) {
      OpBuilder builder(dealloc);
      Location loc = dealloc.getLoc();
      Value stream =
          builder.create<gpu::WaitOp>(loc, tokenType, ValueRange())
              .getAsyncToken();
      builder.create<gpu::DeallocOp>(loc, tokenType, ValueRange{stream},
                                     dealloc.getMemref());
      dealloc.erase();
    }
  }
};
} // namespace
