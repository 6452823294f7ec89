//===- DeviceAllocations.cpp - Host-code buffers in device memory ---------===//
//
// The buffers kiln-cuda-plan-arena left alone (results, loop-carried values,
// dynamically shaped ones) are allocated through the runtime: a buffer
// whose elements only kernels, stream-ordered copies and library calls
// touch becomes device memory (`gpu.alloc`), one whose elements the host
// code reads or writes itself (HostTouchedBuffers) CUDA managed memory
// (`gpu.alloc host_shared`). `memref.dealloc` becomes `gpu.dealloc async`
// on the stream (`gpu.wait async`), not waited for: the runtime returns the
// buffer to its pool, and work queued on the one stream that still uses it
// runs before any later use of the bytes. Kernels allocate nothing, and ops
// inside a `gpu.launch` are left alone. Buffers only the host code touches
// (the deallocation's bookkeeping, HostBuffers.h) stay memref.alloc.
//
// The arguments of the functions the runtime calls (through their
// kiln_entry_ wrappers) are device memory too, allocated by the runtime or
// handed in by the caller as device tensors, so the host code must not
// touch their elements: a function whose host code would is refused here,
// naming the argument, rather than left to fault at run time.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "HostBuffers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDADEVICEALLOCATIONS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCudaDeviceAllocationsPass
    : kiln::impl::KilnCudaDeviceAllocationsBase<
          KilnCudaDeviceAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    kiln::HostTouchedBuffers touched(module);
    if (failed(checkArguments(module, touched)))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isDeclaration())
        allocate(func, touched);
  }

  /// Fails, with an error naming the argument, when the host code of a
  /// function the runtime calls touches an argument's elements.
  static LogicalResult checkArguments(ModuleOp module,
                                      kiln::HostTouchedBuffers &touched) {
    bool ok = true;
    for (auto entry : module.getOps<func::FuncOp>()) {
      if (entry.isDeclaration() ||
          !entry.getName().starts_with(kiln::kEntryPrefix))
        continue;
      entry.walk([&](func::CallOp call) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee)
          return;
        for (BlockArgument argument : callee.getArguments())
          if (touched.isHostTouched(argument)) {
            callee.emitError("the host code reads or writes the elements "
                             "of argument #")
                << argument.getArgNumber()
                << " itself, but a CUDA function's arguments live in device "
                   "memory";
            ok = false;
          }
      });
    }
    return success(ok);
  }

  static void allocate(func::FuncOp func, kiln::HostTouchedBuffers &touched) {
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::DeallocOp> deallocs;
    func.walk([&](Operation *op) {
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
    auto tokenType = gpu::AsyncTokenType::get(func.getContext());
    for (memref::AllocOp alloc : allocs) {
      if (hostOnly.contains(alloc))
        continue;
      OpBuilder builder(alloc);
      // Device memory is allocated on the stream (the runtime takes it
      // from its pool), managed memory synchronously.
      bool hostShared = touched.isHostTouched(alloc.getMemref());
      Type token;
      SmallVector<Value, 1> after;
      if (!hostShared) {
        token = tokenType;
        after.push_back(
            builder.create<gpu::WaitOp>(alloc.getLoc(), tokenType, ValueRange())
                .getAsyncToken());
      }
      auto device = builder.create<gpu::AllocOp>(
          alloc.getLoc(), alloc.getType(), token, after,
          alloc.getDynamicSizes(), alloc.getSymbolOperands(), hostShared);
      alloc.replaceAllUsesWith(device.getMemref());
      alloc.erase();
    }
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
