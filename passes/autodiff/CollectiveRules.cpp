//===- CollectiveRules.cpp - VJPs of the collective ops -------------------===//
//
// A differentiated SPMD program computes the gradient of the sum over ranks
// of each rank's objective, so a collective's adjoint sends each cotangent
// back to where its value came from:
//   all_reduce sum      -> all_reduce sum of the cotangents
//   all_reduce mean     -> all_reduce mean
//   all_reduce max/min  -> the summed cotangent, to the ranks that hold the
//                          extreme, split evenly between ties (as kiln.max
//                          splits it); NaN gets none
//   all_gather          -> reduce_scatter sum along the same dim
//   reduce_scatter sum  -> all_gather (mean: divided by the group size;
//                          max/min: as all_reduce, block by block)
//   collective_broadcast-> the summed cotangent on the root, zeros elsewhere
//   all_to_all          -> all_to_all with split and concat swapped
//   collective_permute  -> collective_permute along the reversed pairs
// A start op has its synchronous op's rule (the backward exchange is
// synchronous), and kiln.collective_wait passes the cotangent to it.
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"
#include "RuleBuilder.h"
#include "Rules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::autodiff;

namespace {

/// The share of the summed cotangent `total` that goes to a rank whose
/// operand `x` is (where `holds`) one of the extremes: total / ties there,
/// 0 elsewhere.
Value extremeShare(OpBuilder &b, Location loc, Value holds, Value total,
                   Groups groups) {
  Type type = total.getType();
  Value ties = allReduce(b, loc, b.create<CastOp>(loc, type, holds),
                         CollectiveReduction::Sum, groups);
  return b.create<SelectOp>(loc, holds, b.create<DivOp>(loc, total, ties),
                            buildZeros(b, loc, type));
}
} // namespace

template <typename OpTy>
LogicalResult autodiff::differentiateAllReduce(OpTy op, VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  OpBuilder &b = context.getBuilder();
  Location loc = context.getLoc();
  Value g = context.getResultAdjoint(0);
  Groups groups = groupsOf(op);
  switch (op.getKind()) {
  case CollectiveReduction::Sum:
  case CollectiveReduction::Mean:
    context.addGradient(0, allReduce(b, loc, g, op.getKind(), groups));
    return success();
  case CollectiveReduction::Max:
  case CollectiveReduction::Min: {
    Value total = allReduce(b, loc, g, CollectiveReduction::Sum, groups);
    Value holds = b.create<CompareOp>(loc, CompareDirection::eq,
                                      op.getOperand(), op.getResult());
    context.addGradient(0, extremeShare(b, loc, holds, total, groups));
    return success();
  }
  }
  return op.emitOpError("has no gradient rule for this kind");
}

template <typename OpTy>
LogicalResult autodiff::differentiateAllGather(OpTy op, VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  OpBuilder &b = context.getBuilder();
  Groups groups = groupsOf(op);
  context.addGradient(
      0, b.create<ReduceScatterOp>(
             context.getLoc(), context.getResultAdjoint(0),
             CollectiveReductionAttr::get(b.getContext(),
                                          CollectiveReduction::Sum),
             op.getDimensionAttr(), groups.ranks, groups.size));
  return success();
}

template <typename OpTy>
LogicalResult autodiff::differentiateReduceScatter(OpTy op,
                                                   VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  OpBuilder &b = context.getBuilder();
  Location loc = context.getLoc();
  Groups groups = groupsOf(op);
  auto gather = [&](Value x) -> Value {
    return b.create<AllGatherOp>(loc, x, op.getDimensionAttr(), groups.ranks,
                                 groups.size);
  };
  Value whole = gather(context.getResultAdjoint(0));
  switch (op.getKind()) {
  case CollectiveReduction::Sum:
    context.addGradient(0, whole);
    return success();
  case CollectiveReduction::Mean:
    context.addGradient(
        0, b.create<DivOp>(loc, whole,
                           buildSplat(b, loc, whole.getType(),
                                      static_cast<double>(op.getGroupSize()))));
    return success();
  case CollectiveReduction::Max:
  case CollectiveReduction::Min: {
    Value holds = b.create<CompareOp>(loc, CompareDirection::eq,
                                      op.getOperand(), gather(op.getResult()));
    context.addGradient(0, extremeShare(b, loc, holds, whole, groups));
    return success();
  }
  }
  return op.emitOpError("has no gradient rule for this kind");
}

// The synchronous ops and their start forms share the rules.
template LogicalResult autodiff::differentiateAllReduce(AllReduceOp,
                                                        VjpContext &);
template LogicalResult autodiff::differentiateAllReduce(AllReduceStartOp,
                                                        VjpContext &);
template LogicalResult autodiff::differentiateAllGather(AllGatherOp,
                                                        VjpContext &);
template LogicalResult autodiff::differentiateAllGather(AllGatherStartOp,
                                                        VjpContext &);
template LogicalResult autodiff::differentiateReduceScatter(ReduceScatterOp,
                                                            VjpContext &);
template LogicalResult
autodiff::differentiateReduceScatter(ReduceScatterStartOp, VjpContext &);

/// The wait hands on the pending value: its cotangent goes to the start op
/// unchanged; `source` only keeps storage alive and gets none.
LogicalResult autodiff::differentiateCollectiveWait(CollectiveWaitOp op,
                                                    VjpContext &context) {
  if (context.needsGradient(0))
    context.addGradient(0, context.getResultAdjoint(0));
  return success();
}

LogicalResult autodiff::differentiateCollectiveBroadcast(
    CollectiveBroadcastOp op, VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  OpBuilder &b = context.getBuilder();
  Location loc = context.getLoc();
  Groups groups = groupsOf(op);
  Value total = allReduce(b, loc, context.getResultAdjoint(0),
                          CollectiveReduction::Sum, groups);
  // Whether this rank is its group's root: its rank is one of the roots.
  Value rank = b.create<RankOp>(loc);
  auto predicate = RankedTensorType::get({}, b.getI1Type());
  Value isRoot;
  for (ArrayRef<int64_t> group : op.getGroupRows()) {
    Value root = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(cast<ShapedType>(rank.getType()),
                                    group[op.getRoot()]));
    Value here = b.create<CompareOp>(loc, CompareDirection::eq, rank, root);
    isRoot = isRoot ? b.create<OrOp>(loc, predicate, isRoot, here) : here;
  }
  context.addGradient(0, b.create<SelectOp>(loc, isRoot, total,
                                            buildZeros(b, loc,
                                                       total.getType())));
  return success();
}

LogicalResult autodiff::differentiateAllToAll(AllToAllOp op,
                                              VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  OpBuilder &b = context.getBuilder();
  Groups groups = groupsOf(op);
  context.addGradient(
      0, b.create<AllToAllOp>(context.getLoc(), context.getResultAdjoint(0),
                              op.getConcatDimAttr(), op.getSplitDimAttr(),
                              groups.ranks, groups.size));
  return success();
}

LogicalResult autodiff::differentiateCollectivePermute(CollectivePermuteOp op,
                                                       VjpContext &context) {
  if (!context.needsGradient(0))
    return success();
  SmallVector<int64_t> reversed;
  ArrayRef<int64_t> pairs = op.getPairs();
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    reversed.push_back(pairs[i + 1]);
    reversed.push_back(pairs[i]);
  }
  OpBuilder &b = context.getBuilder();
  context.addGradient(0, b.create<CollectivePermuteOp>(
                             context.getLoc(), context.getResultAdjoint(0),
                             b.getDenseI64ArrayAttr(reversed)));
  return success();
}
