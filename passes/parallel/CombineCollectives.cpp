//===- CombineCollectives.cpp - Few large exchanges for many small ones ---===//
//
// kiln-partition writes one exchange per value that needs one: a DLRM step
// split over two ranks gathers every table's ids, reduce-scatters every
// table's looked-up rows and gathers every table's row gradients, 78
// exchanges of a few kilobytes each, one after another, where each costs a
// round trip between the ranks. XLA's all-gather, reduce-scatter and
// all-reduce combiners, and DDP's gradient buckets, make such exchanges
// one; this pass does that on kiln IR:
//
//  1. Move every pure op that computes what a synchronous kiln.all_gather,
//     kiln.reduce_scatter (both along dimension 0) or kiln.all_reduce
//     sends up to where its operands are ready (Buckets.h), so that the
//     exchanges of independent values, traced one after another, become
//     ready together.
//  2. Group the exchanges by kind, replica groups and reduction (and per
//     element type), and fill buckets of at most `capBytes` as
//     kiln-data-parallel does (formBuckets): a bucket closes where the next
//     operand is only computed after a result of the bucket is needed.
//  3. Per bucket, one asynchronous exchange of the members' operands laid
//     out side by side, started once the last is computed and waited for
//     right before the first result is used (emitBucket), and each
//     member's result sliced out of it:
//       all_reduce: the flattened operands concatenated;
//       all_gather: the flattened operands concatenated, so the gathered
//         vector is one row per rank, each member's part a column range;
//       reduce_scatter: each operand as a matrix of one row per rank's
//         block, the matrices side by side, so each rank's reduced row
//         holds every member's block.
//  Steps 1-3 repeat per kind (gathers, then scatters, then reductions)
//  until nothing changes, since a combined gather lets the scatters that
//  read it move up in turn.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Passes.h"

#include "Buckets.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <tuple>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_COMBINECOLLECTIVES
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value reshape(OpBuilder &builder, Location loc, Value value,
              ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(value).getElementType());
  return type == value.getType() ? value
                                 : builder.create<ReshapeOp>(loc, type, value);
}

/// The flattened operands, concatenated (all_reduce, all_gather).
Value packFlat(OpBuilder &builder, Location loc,
               ArrayRef<BucketMember> bucket) {
  SmallVector<Value> flat;
  for (const BucketMember &m : bucket) {
    Value operand = m.exchange->getOperand(0);
    flat.push_back(
        reshape(builder, loc, operand, {typeOf(operand).getNumElements()}));
  }
  return builder.create<ConcatOp>(loc, flat, 0);
}

/// Each operand as [ranks, its elements / ranks], side by side, flattened
/// (reduce_scatter): rank r's block of every member is then row r.
Value packRows(OpBuilder &builder, Location loc,
               ArrayRef<BucketMember> bucket) {
  int64_t ranks = cast<ReduceScatterOp>(bucket.front().exchange).getGroupSize();
  SmallVector<Value> matrices;
  int64_t columns = 0;
  for (const BucketMember &m : bucket) {
    Value operand = m.exchange->getOperand(0);
    int64_t width = typeOf(operand).getNumElements() / ranks;
    matrices.push_back(reshape(builder, loc, operand, {ranks, width}));
    columns += width;
  }
  Value side = builder.create<ConcatOp>(loc, matrices, 1);
  return reshape(builder, loc, side, {ranks * columns});
}

Value startAllReduce(OpBuilder &builder, Location loc, Operation *first,
                     Value source) {
  auto op = cast<AllReduceOp>(first);
  return builder.create<AllReduceStartOp>(loc, source, op.getKind(),
                                          op.getGroups(), op.getGroupSize());
}

Value startAllGather(OpBuilder &builder, Location loc, Operation *first,
                     Value source) {
  auto op = cast<AllGatherOp>(first);
  return builder.create<AllGatherStartOp>(loc, source, 0, op.getGroups(),
                                          op.getGroupSize());
}

Value startReduceScatter(OpBuilder &builder, Location loc, Operation *first,
                         Value source) {
  auto op = cast<ReduceScatterOp>(first);
  return builder.create<ReduceScatterStartOp>(
      loc, source, op.getKind(), 0, op.getGroups(), op.getGroupSize());
}

/// Elements [offset, offset + n) of the vector `whole`, as `member`'s
/// result (all_reduce, reduce_scatter: members follow one another).
Value unpackRun(OpBuilder &builder, Operation *member, Value whole,
                int64_t offset) {
  RankedTensorType type = typeOf(member->getResult(0));
  Value part = builder.create<SliceOp>(
      member->getLoc(), whole, ArrayRef<int64_t>{offset},
      ArrayRef<int64_t>{offset + type.getNumElements()}, ArrayRef<int64_t>{1});
  return reshape(builder, member->getLoc(), part, type.getShape());
}

/// `member`'s columns of the gathered [ranks, columns] matrix (its result
/// has ranks times its operand's elements, so `offset`, the results'
/// running count, is ranks times its first column).
Value unpackColumns(OpBuilder &builder, Operation *member, Value whole,
                    int64_t offset) {
  auto gather = cast<AllGatherOp>(member);
  int64_t ranks = gather.getGroupSize();
  Location loc = member->getLoc();
  RankedTensorType type = typeOf(gather.getResult());
  int64_t width = type.getNumElements() / ranks;
  int64_t columns = typeOf(whole).getNumElements() / ranks;
  Value matrix = reshape(builder, loc, whole, {ranks, columns});
  int64_t first = offset / ranks;
  Value part = builder.create<SliceOp>(
      loc, matrix, ArrayRef<int64_t>{0, first},
      ArrayRef<int64_t>{ranks, first + width}, ArrayRef<int64_t>{1, 1});
  return reshape(builder, loc, part, type.getShape());
}

/// What must agree for exchanges to share one: the kind, the replica
/// groups and the reduction (element types are kept apart by formBuckets).
using Key = std::tuple<StringRef, ArrayRef<int64_t>, int64_t, int64_t>;

/// The exchanges of `block` of kind `Op` that can be combined, by key.
template <typename Op>
llvm::MapVector<Key, SmallVector<Operation *>> candidates(Block &block) {
  llvm::MapVector<Key, SmallVector<Operation *>> byKey;
  for (auto op : block.getOps<Op>()) {
    int64_t reduction = -1;
    if constexpr (std::is_same_v<Op, AllGatherOp>) {
      if (op.getDimension() != 0)
        continue;
    } else if constexpr (std::is_same_v<Op, ReduceScatterOp>) {
      if (op.getDimension() != 0)
        continue;
      reduction = static_cast<int64_t>(op.getKind());
    } else {
      reduction = static_cast<int64_t>(op.getKind());
    }
    if (op.getResult().use_empty())
      continue;
    Key key{Op::getOperationName(), op.getGroups(),
            static_cast<int64_t>(op.getGroupSize()), reduction};
    byKey[key].push_back(op);
  }
  return byKey;
}

/// Whether `op` (in `block`, or null) is one of `exchanges` or computed
/// from one; `memo` remembers each op's answer.
bool readsExchange(Operation *op, Block &block,
                   const llvm::DenseSet<Operation *> &exchanges,
                   llvm::DenseMap<Operation *, bool> &memo) {
  if (!op || op->getBlock() != &block)
    return false;
  if (exchanges.contains(op))
    return true;
  auto [it, inserted] = memo.try_emplace(op, false);
  if (!inserted)
    return it->second;
  bool reads = llvm::any_of(op->getOperands(), [&](Value operand) {
    return readsExchange(operand.getDefiningOp(), block, exchanges, memo);
  });
  memo[op] = reads;
  return reads;
}

/// Steps 1-3 for the exchanges of kind `Op` in `block`; whether any were
/// combined. An exchange whose operand is computed from another of its key
/// waits for a later round (its source then is the combined exchange).
template <typename Op>
bool combine(Block &block, int64_t capBytes, const BucketLayout &layout) {
  llvm::MapVector<Key, SmallVector<Operation *>> byKey = candidates<Op>(block);
  llvm::DenseSet<Operation *> visited;
  auto any = [](Operation *) { return true; };
  for (auto &[key, exchanges] : byKey)
    for (Operation *exchange : exchanges)
      moveUpToOperands(exchange->getOperand(0).getDefiningOp(), block, any,
                       visited);
  bool changed = false;
  for (auto &[key, exchanges] : byKey) {
    llvm::DenseSet<Operation *> all(exchanges.begin(), exchanges.end());
    llvm::DenseMap<Operation *, bool> memo;
    SmallVector<Operation *> independent;
    for (Operation *exchange : exchanges)
      if (!readsExchange(exchange->getOperand(0).getDefiningOp(), block, all,
                         memo))
        independent.push_back(exchange);
    for (ArrayRef<BucketMember> bucket :
         formBuckets(block, independent, capBytes)) {
      if (bucket.size() < 2)
        continue;
      emitBucket(bucket, block, /*overlap=*/true, layout);
      changed = true;
    }
  }
  return changed;
}

} // namespace

void mlir::kiln::combineCollectives(Block &block, int64_t capBytes) {
  BucketLayout gathers{packFlat, startAllGather, unpackColumns};
  BucketLayout scatters{packRows, startReduceScatter, unpackRun};
  BucketLayout reductions{packFlat, startAllReduce, unpackRun};
  // Each round can free the next (see the file comment); a bucket holds two
  // or more exchanges, so this ends.
  for (bool changed = true; changed;) {
    changed = combine<AllGatherOp>(block, capBytes, gathers);
    changed |= combine<ReduceScatterOp>(block, capBytes, scatters);
    changed |= combine<AllReduceOp>(block, capBytes, reductions);
  }
}

namespace {
struct CombineCollectivesPass
    : kiln::impl::CombineCollectivesBase<CombineCollectivesPass> {
  using CombineCollectivesBase::CombineCollectivesBase;

  void runOnOperation() override {
    if (!(capMb > 0)) {
      getOperation().emitError("kiln-combine-collectives: cap-mb must be "
                               "> 0, not ")
          << capMb;
      return signalPassFailure();
    }
    auto capBytes = static_cast<int64_t>(std::floor(capMb * 1024 * 1024));
    getOperation().walk(
        [&](Block *block) { combineCollectives(*block, capBytes); });
  }
};
} // namespace
