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

#include "GradientBuckets.h"

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

struct Member {
  mutable ReduceScatterOp scatter;
  int64_t def;
  int64_t use;
  Operation *firstUser;
};

int64_t byteSize(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

/// Step 3 for one bucket.
void emitBucket(ArrayRef<Member> bucket, Block &block, bool overlap) {
  ReduceScatterOp first = bucket.front().scatter;
  MLIRContext *context = first.getContext();
  SmallVector<Location> locs = llvm::map_to_vector(
      bucket, [](const Member &m) { return m.scatter.getLoc(); });
  Location loc = FusedLoc::get(context, locs);
  int64_t ranks = static_cast<int64_t>(first.getGroupSize());
  const Member *lastDef = &bucket.front(), *firstUse = &bucket.front();
  for (const Member &m : bucket) {
    if (m.def > lastDef->def)
      lastDef = &m;
    if (m.use < firstUse->use)
      firstUse = &m;
  }

  OpBuilder builder(context);
  if (!overlap)
    builder.setInsertionPoint(firstUse->firstUser);
  else if (Operation *def = lastDef->scatter.getOperand().getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&block);

  Value source;
  if (bucket.size() == 1) {
    source = first.getOperand();
  } else {
    SmallVector<Value> rows;
    for (const Member &m : bucket) {
      Value operand = m.scatter.getOperand();
      auto type = cast<RankedTensorType>(operand.getType());
      rows.push_back(builder.create<ReshapeOp>(
          loc,
          RankedTensorType::get({ranks, type.getNumElements() / ranks},
                                type.getElementType()),
          operand));
    }
    source = builder.create<ConcatOp>(loc, rows, 1);
  }
  Value pending = builder.create<ReduceScatterStartOp>(
      loc, source, CollectiveReduction::Sum, 0, first.getGroups(),
      first.getGroupSize());

  builder.setInsertionPoint(firstUse->firstUser);
  Value row = builder.create<CollectiveWaitOp>(loc, pending, source);
  int64_t offset = 0;
  for (const Member &m : bucket) {
    Value part = row;
    if (bucket.size() > 1) {
      auto type = m.scatter.getType();
      int64_t size = type.getNumElements();
      part = builder.create<SliceOp>(
          m.scatter.getLoc(), row, ArrayRef<int64_t>{0, offset},
          ArrayRef<int64_t>{1, offset + size}, ArrayRef<int64_t>{1, 1});
      part = builder.create<ReshapeOp>(m.scatter.getLoc(), type, part);
      offset += size;
    }
    m.scatter.getResult().replaceAllUsesWith(part);
    m.scatter.erase();
  }
}

} // namespace

void mlir::kiln::bucketScatters(Block &block,
                                ArrayRef<ReduceScatterOp> scatters,
                                int64_t capBytes, bool overlap) {
  // 1.
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  llvm::MapVector<Type, SmallVector<Member>> byType;
  for (ReduceScatterOp scatter : scatters) {
    Member m{scatter, -1, std::numeric_limits<int64_t>::max(), nullptr};
    if (Operation *def = scatter.getOperand().getDefiningOp())
      m.def = position.lookup(def);
    for (Operation *user : scatter->getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      int64_t at = position.lookup(inBlock);
      if (at < m.use) {
        m.use = at;
        m.firstUser = inBlock;
      }
    }
    if (!m.firstUser)
      m.firstUser = block.getTerminator();
    byType[scatter.getType().getElementType()].push_back(m);
  }

  // 2.
  SmallVector<SmallVector<Member>> buckets;
  for (auto &[type, members] : byType)
    llvm::append_range(
        buckets, formBuckets(std::move(members), capBytes, [](const Member &m) {
          return byteSize(m.scatter.getOperand());
        }));

  // 3.
  for (ArrayRef<Member> bucket : buckets)
    emitBucket(bucket, block, overlap);
}
