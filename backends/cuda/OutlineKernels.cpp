//===- OutlineKernels.cpp - Kernel outlining that keeps occupancy hints ---===//
//
// ptxas chooses the registers of a kernel's threads by itself, and a few
// more than a multiple allows cost whole blocks per multiprocessor: the
// attention gradient's kernel of 256 threads runs two blocks per SM at 128
// registers and one at 129. Its code shape decides which ptxas picks (the
// same kernel took 127 registers for one program and 165 for another
// whose indices LLVM could bound), so the pass that builds such a kernel
// states the occupancy it needs on its launch, `kiln.min_blocks_per_sm`,
// and the PTX carries it to ptxas as `.minnctapersm` (LLVM's NVPTX backend
// emits it from `nvvm.minctasm` on the kernel).
//
// Upstream gpu-kernel-outlining drops a launch's attributes but keeps those
// of the ops in its body, which it clones into the kernel. So this pass
// moves each launch's hint onto the first op of its body, runs the
// upstream outlining, and moves the hint from the kernel's ops onto the
// kernel.
//
//===----------------------------------------------------------------------===//

#include "LaunchHints.h"

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCUDAOUTLINEKERNELS
#include "kiln/Backends/CudaPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

struct KilnCudaOutlineKernelsPass
    : kiln::impl::KilnCudaOutlineKernelsBase<KilnCudaOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult carried = module.walk([&](gpu::LaunchOp launch) {
      Attribute hint = launch->removeAttr(kiln::kMinBlocksPerSmAttr);
      if (!hint)
        return WalkResult::advance();
      if (!isa<IntegerAttr>(hint)) {
        launch.emitError() << "'" << kiln::kMinBlocksPerSmAttr
                           << "' must be an integer";
        return WalkResult::interrupt();
      }
      // A body of its terminator alone (which outlining replaces) needs
      // no registers to bound.
      Operation &first = launch.getBody().front().front();
      if (!isa<gpu::TerminatorOp>(first))
        first.setAttr(kiln::kMinBlocksPerSmAttr, hint);
      return WalkResult::advance();
    });
    if (carried.wasInterrupted())
      return signalPassFailure();

    OpPassManager outlining(ModuleOp::getOperationName());
    outlining.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(outlining, module)))
      return signalPassFailure();

    module.walk([&](gpu::GPUFuncOp kernel) {
      int64_t blocks = 0;
      kernel.walk([&](Operation *op) {
        if (auto hint =
                op->getAttrOfType<IntegerAttr>(kiln::kMinBlocksPerSmAttr)) {
          blocks = std::max(blocks, hint.getInt());
          op->removeAttr(kiln::kMinBlocksPerSmAttr);
        }
      });
      if (blocks > 0)
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        Builder(kernel).getI32IntegerAttr(blocks));
    });
  }
};

} // namespace
