//===- GlobalsToBuffers.cpp - Constants a kernel can read -----------------===//
//
// A bufferized constant is a `memref.get_global` of read-only host data; a
// CUDA kernel handed that pointer would fault. Each get_global is replaced
// by an allocation filled from the global on the host. The pass runs before
// the deallocation pipeline, which then frees these buffers like any other.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGLOBALSTOBUFFERS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
struct KilnCudaGlobalsToBuffersPass
    : kiln::impl::KilnCudaGlobalsToBuffersBase<KilnCudaGlobalsToBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> globals;
    getOperation().walk(
        [&](memref::GetGlobalOp op) { globals.push_back(op); });
    for (memref::GetGlobalOp global : globals) {
      auto type = cast<MemRefType>(global.getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        global.emitOpError("has type ")
            << type << "; the CUDA backend copies only statically shaped, "
                       "identity-layout constants to device memory";
        return signalPassFailure();
      }
      OpBuilder builder(global);
      builder.setInsertionPointAfter(global);
      auto buffer = builder.create<memref::AllocOp>(
          global.getLoc(), MemRefType::get(type.getShape(),
                                           type.getElementType()));
      global.getResult().replaceAllUsesWith(buffer.getResult());
      builder.create<memref::CopyOp>(global.getLoc(), global.getResult(),
                                     buffer.getResult());
    }
  }
};
} // namespace
