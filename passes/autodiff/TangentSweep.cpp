//===- TangentSweep.cpp - Forward sweep over kiln blocks ------------------===//
//
// The forward sweep over one block:
//
//  1. The caller seeds the tangent map with the tangents of the block's
//     arguments (the tangent arguments of the derived function, or a
//     region's tangent block arguments).
//  2. The block's ops are visited first to last. An op none of whose
//     operands has a tangent contributes nothing (its results' tangents are
//     zero) and is skipped, so only the computations between the
//     differentiated arguments and the results get tangent code. Otherwise
//     the op's rule emits, right after it, the tangents of its results.
//  3. The caller reads the tangents of the terminator's operands.
//
// Unlike the reverse sweep, nothing has to be stored: each tangent is
// computed next to its primal value, from values that are already there,
// so loops simply carry their tangents along (ControlFlowJvpRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "Tangents.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

Value JvpContext::getTangentOrZero(unsigned index) {
  if (Value tangent = getTangent(index))
    return tangent;
  return buildZeros(builder, getLoc(), op->getOperand(index).getType());
}

LogicalResult TangentSweep::sweepBlock(Block &block, TangentMap &tangents) {
  OpBuilder builder(block.getParentOp()->getContext());
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value operand) { return tangents.count(operand); }))
      continue;
    // The activity analysis has rejected ops without a rule that see a
    // varied operand, and only varied values have tangents.
    const JvpRule *rule = lookupJvpRule(&op);
    assert(rule && "a tangent reached an op without a rule");
    if (!rule->differentiable)
      continue;
    builder.setInsertionPointAfter(&op);
    JvpContext context(*this, &op, builder, tangents);
    if (failed(rule->apply(&op, context)))
      return failure();
  }
  return success();
}
