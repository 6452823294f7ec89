//===- Rules.h - VJP rules defined outside VjpRules.cpp ---------*- C++ -*-===//
//
// The control-flow rules (ControlFlowRules.cpp) are long enough to get their
// own file; the table in VjpRules.cpp registers them like every other rule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_AUTODIFF_RULES_H
#define KILN_PASSES_AUTODIFF_RULES_H

#include "Differentiator.h"

namespace mlir {
namespace kiln {
namespace autodiff {

/// kiln.cond: a backward kiln.cond on the same predicate.
LogicalResult differentiateCond(CondOp op, VjpContext &context);

/// kiln.for: a backward kiln.for running the iterations in reverse, reading
/// what the forward loop stored per iteration.
LogicalResult differentiateFor(ForOp op, VjpContext &context);
/// kiln.while: the forward loop counts its trips and pushes what the
/// backward loop needs onto stacks; a backward kiln.while pops them in
/// reverse.
LogicalResult differentiateWhile(WhileOp op, VjpContext &context);

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_RULES_H
