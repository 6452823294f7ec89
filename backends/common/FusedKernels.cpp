//===- FusedKernels.cpp - Checking and inlining kiln.fused_kernel ---------===//
//
// kiln-to-linalg lowers each kiln.fused region into a kiln.fused_kernel
// (FusedLowering.cpp): the group that kiln-fuse decided to compute as one
// kernel stays one op, its body in linalg on tensors, while the backend
// shapes it into that kernel. Two things here serve every pass that reads
// kernels:
//
//  - verifyFusedKernelKind checks that a body still holds what its kind
//    promises. A kernel that reads its own group's reduction or matmul from
//    outside (the op was moved out of the body), or that holds a reduction
//    or matmul its kind does not allow (moved in from another group), was
//    changed by a rewrite that did not respect the group; the passes that
//    read kernels fail on it, naming the kernel, instead of compiling the
//    group as something slower. A member that was dead may be gone: a
//    loop body's copy of a group whose reduction only fed the loop's
//    condition keeps its elementwise ops only.
//
//  - kiln-inline-fused-kernels replaces each kernel by its body once the
//    backend is done with the grouping (before bufferization, which knows
//    nothing of kernels): the body's block arguments become the kernel's
//    inputs and its yielded values the kernel's results.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_INLINEFUSEDKERNELS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

/// A matmul as kiln.matmul lowers it: a named op (linalg.matmul,
/// batch_matmul and their transposed forms).
static bool isNamedMatmul(linalg::LinalgOp op) {
  return isa<linalg::ContractionOpInterface>(op.getOperation());
}

/// A matmul of a matmul epilogue kernel: a named one, or the generic that
/// linalg's fusion makes of it when it folds a reshape of an operand in
/// (linalg's structural test, isaContractionOpInterface).
static bool isContraction(linalg::LinalgOp op) {
  return linalg::isaContractionOpInterface(op);
}

/// A reduction of a reduction kernel: any op with a reduction loop but a
/// named matmul. A generic reduction of a product (the sum over rows of
/// dy * x that a broadcast's gradient computes) is one, although linalg's
/// structural test calls it a contraction too.
static bool isReduction(linalg::LinalgOp op) {
  return !isNamedMatmul(op) && op.getNumReductionLoops() > 0;
}

/// The first linalg op outside `kernel` that `kind` accepts and whose
/// result the kernel reads (as an input, or directly from its body), or
/// null.
static Operation *readFromOutside(FusedKernelOp kernel,
                                  bool (*kind)(linalg::LinalgOp)) {
  llvm::SetVector<Value> read(kernel.getInputs().begin(),
                              kernel.getInputs().end());
  getUsedValuesDefinedAbove(kernel.getBody(), read);
  for (Value value : read)
    if (auto producer = value.getDefiningOp<linalg::LinalgOp>())
      if (kind(producer))
        return producer;
  return nullptr;
}

LogicalResult kiln::verifyFusedKernelKind(FusedKernelOp kernel) {
  // Ops with a reduction loop, and among them the named matmuls and the
  // contractions of either form.
  // Only the body's own ops count: once kiln-cpu-tile-fused-reductions has
  // made the kernel a row loop, the (split) reductions inside that loop are
  // its tiles, not members.
  unsigned reducing = 0, namedMatmuls = 0, contractions = 0;
  for (Operation &member : kernel.getBody().front()) {
    auto op = dyn_cast<linalg::LinalgOp>(&member);
    if (!op)
      continue;
    reducing += op.getNumReductionLoops() > 0;
    namedMatmuls += isNamedMatmul(op);
    contractions += isContraction(op);
  }
  // What the body holds beyond its kind came from another group.
  auto foreign = [&](StringRef what) {
    return kernel.emitOpError("of kind ")
           << stringifyFusionKind(kernel.getKind()) << " holds " << what
           << ": an op of another group was moved into it";
  };
  // What the body lacks may have been dead and erased (a loop body's copy
  // of a group whose reduction only fed the loop's condition); it was lost
  // when the kernel now reads it from outside.
  auto lost = [&](StringRef what, Operation *producer) {
    InFlightDiagnostic diag =
        kernel.emitOpError("of kind ")
        << stringifyFusionKind(kernel.getKind()) << " holds no " << what
        << " but reads one computed outside it: its group lost a member";
    diag.attachNote(producer->getLoc()) << "computed here";
    return diag;
  };
  switch (kernel.getKind()) {
  case FusionKind::elementwise:
    if (contractions)
      return foreign("a contraction");
    if (reducing)
      return foreign("a reduction");
    break;
  case FusionKind::reduction: {
    if (namedMatmuls)
      return foreign("a contraction");
    // A tiled kernel's reductions are inside its row loop; it may read a
    // reduction of another group like any kernel.
    bool tiledReduction = false;
    kernel.getBody().walk([&](linalg::LinalgOp op) {
      tiledReduction |= op->getParentOp() != kernel.getOperation() &&
                        op.getNumReductionLoops() > 0;
    });
    if (!reducing && !tiledReduction)
      if (Operation *producer = readFromOutside(kernel, isReduction))
        return lost("reduction", producer);
    break;
  }
  case FusionKind::matmul_epilogue:
    if (reducing > contractions)
      return foreign("a reduction");
    if (contractions > 1)
      return foreign("a second contraction");
    if (!contractions)
      if (Operation *producer = readFromOutside(kernel, isContraction))
        return lost("contraction", producer);
    break;
  }
  return success();
}

namespace {
struct InlineFusedKernelsPass
    : kiln::impl::InlineFusedKernelsBase<InlineFusedKernelsPass> {
  void runOnOperation() override {
    SmallVector<FusedKernelOp> kernels;
    getOperation().walk([&](FusedKernelOp kernel) {
      kernels.push_back(kernel);
    });
    // All kernels are checked before any is inlined: once a kernel is
    // inlined, its reduction is an op outside the kernels, and a later
    // kernel that reads it (as an input, like any result of another group)
    // would look like one that lost that reduction.
    for (FusedKernelOp kernel : kernels)
      if (failed(verifyFusedKernelKind(kernel)))
        return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (FusedKernelOp kernel : kernels) {
      Block *body = &kernel.getBody().front();
      auto yield = cast<YieldOp>(body->getTerminator());
      rewriter.inlineBlockBefore(body, kernel, kernel.getInputs());
      // Read after inlining: a yielded block argument is now the input.
      SmallVector<Value> results(yield.getValues());
      rewriter.replaceOp(kernel, results);
      rewriter.eraseOp(yield);
    }
  }
};
} // namespace
