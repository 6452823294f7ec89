//===- ScatterBuckets.cpp - Bucketed asynchronous reduce-scatters ---------===//
//
// kiln-zero reduce-scatters each gradient that only the sharded update
// reads: a vector of N * c elements, rank r keeping elements [r c, (r+1) c).
// As with the all-reduces of kiln-data-parallel (GradientBuckets.cpp), few
// large exchanges started early beat many small ones started late, so the
// reduce-scatters are bucketed. A bucket cannot simply concatenate its
// vectors, because a reduce-scatter of the concatenation would hand rank r
// a contiguous run of the concatenation rather than its block of each
// gradient. So the bucket lays the gradients out as PyTorch FSDP lays out
// its flat parameter, block-major:
//
//   g_i [N * c_i]  ->  reshape [N, c_i]  ->  concat along 1: [N, C]
//
// Row r of that matrix is block r of every gradient, and a reduce-scatter
// along dimension 0 hands rank r exactly row r, [1, C], whose columns
// [o_i, o_i + c_i) are its block of g_i.
//
//  1. Number the ops of the block; for each reduce-scatter, `def` is the
//     position of its operand's definition and `use` the first position
//     that uses its result.
//  2. Per element type, in `def` order, fill buckets of at most the cap,
//     closing one early when the next operand is defined at or after the
//     first use of a member's result.
//  3. Per bucket: kiln.reduce_scatter_start of the layout above right after
//     the last operand (or, without overlap, right before the first use);
//     kiln.collective_wait right before the first use; slices of the row
//     replace the members. A bucket of one scatters the vector itself.
//
//===----------------------------------------------------------------------===//

#include "ScatterBuckets.h"

#include "Buckets.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Step 3's layout: each operand [N * c_i] as [N, c_i], joined along 1.
Value packBlockMajor(OpBuilder &builder, Location loc,
                     ArrayRef<BucketMember> bucket) {
  auto first = cast<ReduceScatterOp>(bucket.front().exchange);
  int64_t ranks = static_cast<int64_t>(first.getGroupSize());
  SmallVector<Value> rows;
  for (const BucketMember &m : bucket) {
    Value operand = m.exchange->getOperand(0);
    auto type = cast<RankedTensorType>(operand.getType());
    rows.push_back(builder.create<ReshapeOp>(
        loc,
        RankedTensorType::get({ranks, type.getNumElements() / ranks},
                              type.getElementType()),
        operand));
  }
  return builder.create<ConcatOp>(loc, rows, 1);
}

Value startReduceScatter(OpBuilder &builder, Location loc, Operation *first,
                         Value source) {
  auto scatter = cast<ReduceScatterOp>(first);
  return builder.create<ReduceScatterStartOp>(
      loc, source, CollectiveReduction::Sum, 0, scatter.getGroups(),
      scatter.getGroupSize());
}

/// Columns [offset, offset + c) of this rank's row.
Value unpackRow(OpBuilder &builder, Operation *member, Value row,
                int64_t offset) {
  auto type = cast<RankedTensorType>(member->getResult(0).getType());
  int64_t size = type.getNumElements();
  Value part = builder.create<SliceOp>(
      member->getLoc(), row, ArrayRef<int64_t>{0, offset},
      ArrayRef<int64_t>{1, offset + size}, ArrayRef<int64_t>{1, 1});
  return builder.create<ReshapeOp>(member->getLoc(), type, part);
}

} // namespace

void mlir::kiln::bucketScatters(Block &block,
                                ArrayRef<ReduceScatterOp> scatters,
                                int64_t capBytes, bool overlap) {
  // 1-3.
  SmallVector<Operation *> exchanges(scatters.begin(), scatters.end());
  BucketLayout layout{packBlockMajor, startReduceScatter, unpackRow};
  for (ArrayRef<BucketMember> bucket : formBuckets(block, exchanges, capBytes))
    emitBucket(bucket, block, overlap, layout);
}
