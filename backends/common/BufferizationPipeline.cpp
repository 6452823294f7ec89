//===- BufferizationPipeline.cpp - kiln on tensors to linalg on buffers ---===//
//
// The steps every backend shares, in two pieces around what each backend
// does to its fused kernels before they are inlined:
//
// buildLinalgPipeline:
//   0. kiln-sparse-updates (an embedding's gradient scaled and added into
//      its table row by row); with `fuse`, the canonicalizer (kiln's folds and
//      canonical forms, e.g. keepdims reshapes absorbed into broadcasts), then
//      kiln-fuse groups kiln ops into kiln.fused regions;
//   1. with `collectives`, the collectives in the communicator's
//      flat forms and kiln.rank a call (kiln-decompose-collectives,
//      kiln-collective-calls); the remaining collectives bufferize into
//      calls (CollectiveCalls.cpp);
//      kiln -> linalg/tensor/scf on tensors, each kiln.fused region lowered
//      into a kiln.fused_kernel; then kiln-fuse-linalg-groups fuses the
//      linalg ops of each kernel.
// The backend then canonicalizes and runs CSE, shapes the kernels (on the
// CPU, kiln-cpu-tile-fused-reductions makes each reduction kernel one row
// loop) and inlines them (kiln-inline-fused-kernels), in the order it
// needs.
//
// buildBufferizationPipeline:
//   2. one-shot bufferization of the whole module, the public functions'
//      arguments read only (kiln-read-only-arguments), identity layouts at
//      function boundaries (call operands that are slices copied first,
//      kiln-copy-sliced-call-operands, on CUDA also loops' inits),
//      copies as linalg.copy (so they become loops or kernels and never
//      call a runtime helper);
//   3. results become out-params: each returned buffer is made a distinct
//      allocation first (kiln-fresh-results), then hoisted to the caller,
//      so outputs are written in place; a result tied to a donated
//      argument is written into that argument instead, and its out-param
//      left alone (kiln-tied-results).
//
// buildDeallocationPipeline, after the backend's own buffer passes:
//   4. ownership-based deallocation, its simplification, on the CPU
//      kiln-free-after-last-use, and the lowering of the deallocations.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/Fusion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

static LogicalResult copyWithLinalg(OpBuilder &builder, Location loc,
                                    Value from, Value to) {
  builder.create<linalg::CopyOp>(loc, from, to);
  return success();
}

void mlir::kiln::buildLinalgPipeline(OpPassManager &pm, bool fuse,
                                     bool rowLoops, bool collectives,
                                     bool recomputeTranscendentals) {
  // Embedding gradients added into their tables row by row, not as tables
  // of zeros (SparseUpdates.cpp).
  pm.addNestedPass<func::FuncOp>(createSparseUpdates());
  // The attention ops no fused kernel took (CpuPipeline.cpp outlines the
  // ones it has kernels for), as the composition they stand for.
  pm.addPass(createDecomposeAttention());
  // Sorts as sorting networks of kiln ops (DecomposeSort.cpp).
  pm.addPass(createDecomposeSort());
  if (fuse) {
    // Folds and canonical forms first (e.g. numpy's keepdims reshapes
    // absorbed into broadcasts), so that fusion groups what the program
    // computes rather than how it was written down.
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createFusion());
  }
  if (collectives) {
    // After fusion, which must see the exchanges as the kiln ops they are
    // (ops on either side of one are never fused together).
    pm.addNestedPass<func::FuncOp>(createKilnDecomposeCollectives());
    pm.addPass(createKilnCollectiveCalls());
  }
  ConvertKilnToLinalgOptions lowering;
  lowering.rowLoops = rowLoops;
  lowering.collectives = collectives;
  pm.addNestedPass<func::FuncOp>(createConvertKilnToLinalg(lowering));
  if (fuse) {
    FuseLinalgGroupsOptions groups;
    groups.recomputeTranscendentals = recomputeTranscendentals;
    pm.addNestedPass<func::FuncOp>(createFuseLinalgGroups(groups));
  }
}

void mlir::kiln::buildBufferizationPipeline(OpPassManager &pm,
                                            bool copySlicedLoopInits) {
  KilnCopySlicedCallOperandsOptions sliced;
  sliced.loopInits = copySlicedLoopInits;
  pm.addNestedPass<func::FuncOp>(createKilnCopySlicedCallOperands(sliced));
  // The caller's buffers are read only (kiln-read-only-arguments).
  pm.addPass(createKilnReadOnlyArguments());
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
  pm.addNestedPass<func::FuncOp>(createKilnTiedResults());
  pm.addNestedPass<func::FuncOp>(createKilnForwardCallResults());
}

void mlir::kiln::buildDeallocationPipeline(OpPassManager &pm,
                                           bool freeAfterLastUse) {
  // Upstream's buildBufferDeallocationPipeline with default options, with
  // room for kiln-free-after-last-use where the deallocations are still
  // bufferization.dealloc ops. Its canonicalizations are on buffers, so
  // they are kiln-canonicalize-buffers: the plain canonicalizer erases an
  // in-place kernel whose body folded to a constant (CanonicalizeBuffers.cpp).
  pm.addNestedPass<func::FuncOp>(
      memref::createExpandReallocPass(/*emitDeallocs=*/false));
  pm.addNestedPass<func::FuncOp>(createKilnCanonicalizeBuffers());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createKilnCanonicalizeBuffers());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  // The simplification decides ownerships that loops carry (false where a
  // region yields a buffer it does not own); canonicalizing then folds an
  // scf.while's ownership argument that is false on entry and on every
  // iteration, and with it the deallocation it guards, before that
  // deallocation is lowered to a call of the generic helper that no later
  // folding can take out (and that keeps the loop off a CUDA graph).
  pm.addNestedPass<func::FuncOp>(createKilnCanonicalizeBuffers());
  // What a kiln.for ends with is freed apart from what it started from;
  // the simplification then splits what is left where it can tell the
  // buffers apart (two allocations a kiln.for started from, say), which
  // it could not while the loop's results were in the same dealloc.
  pm.addNestedPass<func::FuncOp>(createKilnSplitCountedDeallocs());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  if (freeAfterLastUse)
    pm.addNestedPass<func::FuncOp>(createKilnFreeAfterLastUse());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createKilnCanonicalizeBuffers());
}
