//===- GradientBuckets.cpp - Bucketed asynchronous all-reduces ------------===//
//
// PyTorch DDP reduces gradients in buckets of about 25 MB, each started as
// soon as the backward pass has produced all its gradients, so that the
// exchange overlaps the rest of the backward pass and few large messages
// replace many small ones. kiln-data-parallel does the same with the
// all_reduce sums it inserted, in the IR:
//
//  1. Move each reduction's operand up to where it can first be computed:
//     the ops between a finished partial gradient and its reduction (a
//     scaling by the learning rate, a negation) were traced after the whole
//     backward pass, and would otherwise hold the exchange back until then.
//     Only the ops that compute PartialSums and the constants they read
//     move; each goes right after the last definition of its operands.
//
//  2. Number the ops of the block. For each reduction, `def` is the
//     position of its operand's definition and `use` the first position
//     that uses its result.
//
//  3. Per element type, take the reductions in `def` order and fill buckets
//     greedily: the next reduction joins the current bucket unless the
//     bucket would exceed the cap, or its operand is defined at or after
//     the first use of a bucket member's result (the bucket's exchange
//     must complete before that use, so it cannot wait for a later
//     operand). A tensor larger than the cap is a bucket of its own.
//
//  4. Per bucket: right after the last operand's definition (or, without
//     overlap, right before the first use), reshape each operand to 1-D,
//     concatenate and kiln.all_reduce_start the result; right before the
//     first use, kiln.collective_wait, then slice and reshape each member's
//     part and let it replace the member's all_reduce. A bucket of one
//     tensor starts on the tensor itself.
//
//===----------------------------------------------------------------------===//

#include "GradientBuckets.h"

#include "Buckets.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Step 4's layout: the operands flattened and concatenated.
Value packFlat(OpBuilder &builder, Location loc, ArrayRef<BucketMember> bucket) {
  SmallVector<Value> flat;
  for (const BucketMember &m : bucket) {
    Value operand = m.exchange->getOperand(0);
    auto type = cast<RankedTensorType>(operand.getType());
    auto vector =
        RankedTensorType::get({type.getNumElements()}, type.getElementType());
    flat.push_back(type == vector
                       ? operand
                       : builder.create<ReshapeOp>(loc, vector, operand));
  }
  return builder.create<ConcatOp>(loc, flat, 0);
}

Value startAllReduce(OpBuilder &builder, Location loc, Operation *first,
                     Value source) {
  auto reduction = cast<AllReduceOp>(first);
  return builder.create<AllReduceStartOp>(
      loc, source, CollectiveReduction::Sum, reduction.getGroups(),
      reduction.getGroupSize());
}

Value unpackFlat(OpBuilder &builder, Operation *member, Value whole,
                 int64_t offset) {
  auto type = cast<RankedTensorType>(member->getResult(0).getType());
  int64_t size = type.getNumElements();
  Value part = builder.create<SliceOp>(
      member->getLoc(), whole, ArrayRef<int64_t>{offset},
      ArrayRef<int64_t>{offset + size}, ArrayRef<int64_t>{1});
  if (type.getRank() != 1)
    part = builder.create<ReshapeOp>(member->getLoc(), type, part);
  return part;
}

} // namespace

void mlir::kiln::bucketPartialSums(Block &block,
                                   ArrayRef<AllReduceOp> reductions,
                                   const llvm::DenseSet<Operation *> &movable,
                                   int64_t capBytes, bool overlap) {
  // A reduction whose result nobody reads (its reader was dead code) goes.
  SmallVector<AllReduceOp> live;
  for (AllReduceOp reduction : reductions) {
    if (reduction.getResult().use_empty())
      reduction.erase();
    else
      live.push_back(reduction);
  }

  // 1.
  llvm::DenseSet<Operation *> visited;
  auto canMove = [&](Operation *op) {
    return movable.contains(op) || op->getNumOperands() == 0;
  };
  for (AllReduceOp reduction : live)
    moveUpToOperands(reduction.getOperand().getDefiningOp(), block, canMove,
                     visited);

  // 2-4.
  SmallVector<Operation *> exchanges(live.begin(), live.end());
  BucketLayout layout{packFlat, startAllReduce, unpackFlat};
  for (ArrayRef<BucketMember> bucket : formBuckets(block, exchanges, capBytes))
    emitBucket(bucket, block, overlap, layout);
}
