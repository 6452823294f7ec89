//===- DynamicSharedMemory.cpp - Workgroup buffers over 48 KiB ------------===//
//
// A CUDA block may allocate 48 KiB of shared memory statically (ptxas
// refuses a kernel whose `.shared` arrays exceed it); what a block has
// beyond that, up to its architecture's opt-in maximum, is dynamic shared
// memory: one extern array whose size the launch gives, and which the
// kernel must be allowed (the runtime sets the kernel's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES before such a launch).
//
// The passes that build kernels keep to one form for their buffers,
// workgroup attributions of the gpu.launch, so that kiln-cuda-check-launches
// and kiln-cuda-launches-on-cpu treat every launch alike. On the CUDA
// target, this pass rewrites a launch whose attributions take more than
// 48 KiB: each becomes a memref.view of gpu.dynamic_shared_memory at its
// offset (the buffers one after the other at 16-byte boundaries, the
// alignment of the widest access and of the extern array), and the launch
// asks for their total. Launches within 48 KiB keep their static buffers,
// which need no attribute and no size at launch.
//
//===----------------------------------------------------------------------===//

#include "LaunchHints.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDADYNAMICSHAREDMEMORY
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// Places the workgroup attributions of `launch` in dynamic shared memory
/// where they exceed kMaxStaticSharedBytes.
LogicalResult placeDynamically(gpu::LaunchOp launch) {
  ArrayRef<BlockArgument> buffers = launch.getWorkgroupAttributions();
  if (buffers.empty())
    return success();
  TypeRange types = ValueRange(buffers).getTypes();
  SmallVector<int64_t> offsets;
  std::optional<int64_t> total = kiln::sharedBytesOf(types, &offsets);
  if (!total)
    return launch.emitError(
        "a workgroup buffer of a dynamic size cannot be allocated");
  if (*total <= kiln::kMaxStaticSharedBytes)
    return success();
  if (launch.getDynamicSharedMemorySize())
    return launch.emitError("workgroup buffers of ")
           << *total
           << " bytes need dynamic shared memory, which the launch already "
              "asks for itself";
  for (Type type : types) {
    auto memref = cast<MemRefType>(type);
    if (!memref.getLayout().isIdentity())
      return launch.emitError("a workgroup buffer of type ")
             << type
             << " cannot be a view of dynamic shared memory (its layout is "
                "not the identity)";
  }

  MLIRContext *context = launch.getContext();
  Location loc = launch.getLoc();
  Block &body = launch.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  auto bytesType = MemRefType::get(
      {ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
  Value base = b.create<gpu::DynamicSharedMemoryOp>(loc, bytesType);
  for (auto [buffer, offset] : llvm::zip_equal(buffers, offsets)) {
    Value view = b.create<memref::ViewOp>(
        loc, buffer.getType(), base,
        b.create<arith::ConstantIndexOp>(loc, offset), ValueRange());
    BlockArgument(buffer).replaceAllUsesWith(view);
  }
  unsigned first = buffers.front().getArgNumber();
  unsigned count = buffers.size();
  body.eraseArguments(first, count);
  launch->removeAttr(gpu::LaunchOp::getNumWorkgroupAttributionsAttrName());
  b.setInsertionPoint(launch);
  launch.getDynamicSharedMemorySizeMutable().assign(
      b.create<arith::ConstantIntOp>(loc, *total, 32));
  return success();
}

struct KilnCudaDynamicSharedMemoryPass
    : kiln::impl::KilnCudaDynamicSharedMemoryBase<
          KilnCudaDynamicSharedMemoryPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](gpu::LaunchOp launch) {
      return failed(placeDynamically(launch)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
