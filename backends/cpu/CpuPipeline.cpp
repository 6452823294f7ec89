//===- CpuPipeline.cpp - kiln to the LLVM dialect -------------------------===//
//
// The pipeline, in order:
//   1. kiln -> linalg/tensor/scf on tensors, then canonicalize and CSE;
//   2. one-shot bufferization of the whole module, identity layouts at
//      function boundaries, copies as linalg.copy (so they become loops and
//      never call a runtime helper);
//   3. results become out-params (each returned buffer made a distinct
//      allocation first, then hoisted to the caller, so outputs are written
//      in place), then the native entry wrappers;
//   4. ownership-based deallocation;
//   5. linalg -> loops, then everything -> the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Cpu.h"
#include "kiln/Backends/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

static LogicalResult copyWithLinalg(OpBuilder &builder, Location loc,
                                    Value from, Value to) {
  builder.create<linalg::CopyOp>(loc, from, to);
  return success();
}

void kiln::buildCpuLoweringPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createConvertKilnToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.memCpyFn = copyWithLinalg;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));

  pm.addNestedPass<func::FuncOp>(createKilnFreshResults());
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  outParams.memCpyFn = copyWithLinalg;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createKilnCpuEntryPoints());

  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createCanonicalizerPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createBufferizationToMemRefPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::registerCpuPipelines() {
  PassPipelineRegistration<>(
      "kiln-cpu-lowering",
      "Lower kiln functions to the LLVM dialect with native entry wrappers",
      [](OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
}
