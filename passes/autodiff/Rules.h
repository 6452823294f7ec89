//===- Rules.h - VJP rules defined outside VjpRules.cpp ---------*- C++ -*-===//
//
// The control-flow rules (ControlFlowRules.cpp) and the collectives' rules
// (CollectiveRules.cpp) have files of their own; the table in VjpRules.cpp
// registers them like every other rule.
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

/// The collectives (CollectiveRules.cpp): each adjoint sends the
/// cotangents back along the exchange.
/// Each for the synchronous op and its start form (instantiated for both in
/// CollectiveRules.cpp); the wait passes its cotangent through.
template <typename OpTy>
LogicalResult differentiateAllReduce(OpTy op, VjpContext &context);
template <typename OpTy>
LogicalResult differentiateAllGather(OpTy op, VjpContext &context);
template <typename OpTy>
LogicalResult differentiateReduceScatter(OpTy op, VjpContext &context);
LogicalResult differentiateCollectiveWait(CollectiveWaitOp op,
                                          VjpContext &context);
LogicalResult differentiateCollectiveBroadcast(CollectiveBroadcastOp op,
                                               VjpContext &context);
LogicalResult differentiateAllToAll(AllToAllOp op, VjpContext &context);
LogicalResult differentiateCollectivePermute(CollectivePermuteOp op,
                                             VjpContext &context);

} // namespace autodiff
} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_AUTODIFF_RULES_H
