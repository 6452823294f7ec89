//===- KilnFusionOps.cpp - The kiln.fused region ops ----------------------===//
//
// Verification of kiln.fused and kiln.fused_kernel. Backends build one
// kernel per region from its `kind`, so the verifier of kiln.fused checks
// that the body holds what the kind promises (a backend can then rely on it
// instead of rediscovering the shape of the group) as well as the usual
// block-argument and yield types. kiln.fused_kernel holds the same group
// lowered out of the kiln dialect; its verifier checks the types only, and
// the backends, which know the lowered ops, check its kind.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnFusionOps.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::kiln;

#include "kiln/IR/KilnFusionEnums.cpp.inc"

static bool isReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMaxOp, ReduceMeanOp>(op);
}

/// The checks both region ops share: at least one result, block arguments
/// of the inputs' types, a kiln.yield of the results' types.
static LogicalResult verifySignature(Operation *op, Block &block,
                                     ValueRange inputs) {
  if (op->getNumResults() == 0)
    return op->emitOpError("must produce at least one result");
  if (block.getNumArguments() != inputs.size())
    return op->emitOpError("body takes ")
           << block.getNumArguments() << " arguments but the op has "
           << inputs.size() << " inputs";
  for (auto [i, arg, input] :
       llvm::enumerate(block.getArgumentTypes(), inputs.getTypes()))
    if (arg != input)
      return op->emitOpError("body argument #")
             << i << " has type " << arg << " but input #" << i << " has type "
             << input;

  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(&block.back());
  if (!yield)
    return op->emitOpError("body must end with kiln.yield");
  if (yield.getValues().size() != op->getNumResults())
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values but the " << op->getName()
           << " has " << op->getNumResults() << " results";
  for (auto [i, got, want] :
       llvm::enumerate(yield.getValues().getTypes(), op->getResultTypes()))
    if (got != want)
      return yield.emitOpError("value #")
             << i << " has type " << got << " but result #" << i << " has type "
             << want;
  return success();
}

LogicalResult FusedKernelOp::verifyRegions() {
  return verifySignature(*this, getBody().front(), getInputs());
}

LogicalResult FusedOp::verifyRegions() {
  Block &block = getBody().front();
  if (failed(verifySignature(*this, block, getInputs())))
    return failure();

  unsigned reductions = 0, matmuls = 0;
  for (Operation &op : block.without_terminator()) {
    if (!isa<KilnDialect>(op.getDialect()))
      return op.emitOpError("is not a kiln op; a kiln.fused body holds kiln "
                            "ops only");
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions; a kiln.fused body holds ops "
                            "without regions");
    reductions += isReduction(&op);
    matmuls += isa<MatmulOp>(op);
  }

  switch (getKind()) {
  case FusionKind::elementwise:
    if (reductions || matmuls)
      return emitOpError("of kind elementwise contains ")
             << (reductions ? "a reduction" : "a matmul");
    break;
  case FusionKind::reduction:
    if (!reductions)
      return emitOpError("of kind reduction contains no reduction");
    if (matmuls)
      return emitOpError("of kind reduction contains a matmul");
    break;
  case FusionKind::matmul_epilogue:
    if (matmuls != 1)
      return emitOpError("of kind matmul_epilogue contains ")
             << matmuls << " matmuls but needs exactly one";
    if (reductions)
      return emitOpError("of kind matmul_epilogue contains a reduction");
    break;
  }
  return success();
}

#define GET_OP_CLASSES
#include "kiln/IR/KilnFusionOps.cpp.inc"
