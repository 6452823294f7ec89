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

/// Step 1 for `op` and, first, the movable ops and constants it reads.
void moveUp(Operation *op, Block &block,
            const llvm::DenseSet<Operation *> &movable,
            llvm::DenseSet<Operation *> &visited) {
  if (!op || op->getBlock() != &block || !visited.insert(op).second)
    return;
  bool constantLike = op->getNumOperands() == 0;
  if (!(movable.contains(op) || constantLike) || !isPure(op) ||
      op->getNumRegions() != 0)
    return;
  Operation *latest = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || def->getBlock() != &block)
      continue;
    moveUp(def, block, movable, visited);
    if (!latest || latest->isBeforeInBlock(def))
      latest = def;
  }
  if (latest)
    op->moveAfter(latest);
  else
    op->moveBefore(&block.front());
}

int64_t byteSize(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

struct Member {
  mutable AllReduceOp reduction;
  int64_t def;
  int64_t use;
  Operation *firstUser;
};

/// Step 4 for one bucket.
void emitBucket(ArrayRef<Member> bucket, Block &block, bool overlap) {
  AllReduceOp first = bucket.front().reduction;
  MLIRContext *context = first.getContext();
  SmallVector<Location> locs = llvm::map_to_vector(
      bucket, [](const Member &m) { return m.reduction.getLoc(); });
  Location loc = FusedLoc::get(context, locs);
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
  else if (Operation *def = lastDef->reduction.getOperand().getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&block);

  Value source;
  if (bucket.size() == 1) {
    source = first.getOperand();
  } else {
    SmallVector<Value> flat;
    for (const Member &m : bucket) {
      Value operand = m.reduction.getOperand();
      auto type = cast<RankedTensorType>(operand.getType());
      auto vector =
          RankedTensorType::get({type.getNumElements()}, type.getElementType());
      flat.push_back(type == vector
                         ? operand
                         : builder.create<ReshapeOp>(loc, vector, operand));
    }
    source = builder.create<ConcatOp>(loc, flat, 0);
  }
  Value pending =
      builder.create<AllReduceStartOp>(loc, source, CollectiveReduction::Sum,
                                       first.getGroups(), first.getGroupSize());

  builder.setInsertionPoint(firstUse->firstUser);
  Value whole = builder.create<CollectiveWaitOp>(loc, pending, source);
  int64_t offset = 0;
  for (const Member &m : bucket) {
    Value part = whole;
    if (bucket.size() > 1) {
      auto type = cast<RankedTensorType>(m.reduction.getType());
      int64_t size = type.getNumElements();
      part = builder.create<SliceOp>(
          m.reduction.getLoc(), whole, ArrayRef<int64_t>{offset},
          ArrayRef<int64_t>{offset + size}, ArrayRef<int64_t>{1});
      if (type.getRank() != 1)
        part = builder.create<ReshapeOp>(m.reduction.getLoc(), type, part);
      offset += size;
    }
    m.reduction.getResult().replaceAllUsesWith(part);
    m.reduction.erase();
  }
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
  for (AllReduceOp reduction : live)
    moveUp(reduction.getOperand().getDefiningOp(), block, movable, visited);

  // 2.
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  llvm::MapVector<Type, SmallVector<Member>> byType;
  for (AllReduceOp reduction : live) {
    Member m{reduction, -1, std::numeric_limits<int64_t>::max(), nullptr};
    if (Operation *def = reduction.getOperand().getDefiningOp())
      m.def = position.lookup(def);
    for (Operation *user : reduction->getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      int64_t at = position.lookup(inBlock);
      if (at < m.use) {
        m.use = at;
        m.firstUser = inBlock;
      }
    }
    byType[reduction.getType().getElementType()].push_back(m);
  }

  // 3.
  SmallVector<SmallVector<Member>> buckets;
  for (auto &[type, members] : byType)
    llvm::append_range(
        buckets, formBuckets(std::move(members), capBytes, [](const Member &m) {
          return byteSize(m.reduction.getOperand());
        }));

  // 4.
  for (ArrayRef<Member> bucket : buckets)
    emitBucket(bucket, block, overlap);
}
