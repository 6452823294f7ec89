//===- Buckets.cpp - Exchanges grouped into buckets -----------------------===//

#include "Buckets.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

static int64_t byteSize(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

void mlir::kiln::moveUpToOperands(Operation *op, Block &block,
                                  function_ref<bool(Operation *)> canMove,
                                  llvm::DenseSet<Operation *> &visited) {
  if (!op || op->getBlock() != &block || !visited.insert(op).second)
    return;
  if (!canMove(op) || !isPure(op) || op->getNumRegions() != 0)
    return;
  Operation *latest = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || def->getBlock() != &block)
      continue;
    moveUpToOperands(def, block, canMove, visited);
    if (!latest || latest->isBeforeInBlock(def))
      latest = def;
  }
  if (latest)
    op->moveAfter(latest);
  else
    op->moveBefore(&block.front());
}

SmallVector<SmallVector<BucketMember>>
mlir::kiln::formBuckets(Block &block, ArrayRef<Operation *> exchanges,
                        int64_t capBytes) {
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  llvm::MapVector<Type, SmallVector<BucketMember>> byType;
  for (Operation *exchange : exchanges) {
    BucketMember m{exchange, -1, std::numeric_limits<int64_t>::max(),
                   nullptr};
    if (Operation *def = exchange->getOperand(0).getDefiningOp())
      m.def = position.lookup(def);
    for (Operation *user : exchange->getUsers()) {
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      int64_t at = position.lookup(inBlock);
      if (at < m.use) {
        m.use = at;
        m.firstUser = inBlock;
      }
    }
    if (!m.firstUser)
      m.firstUser = block.getTerminator();
    byType[getElementTypeOrSelf(exchange->getResult(0).getType())].push_back(
        m);
  }

  SmallVector<SmallVector<BucketMember>> buckets;
  for (auto &[type, members] : byType) {
    llvm::stable_sort(members, [](const BucketMember &a,
                                  const BucketMember &b) {
      return a.def < b.def;
    });
    SmallVector<BucketMember> current;
    int64_t bytes = 0, use = std::numeric_limits<int64_t>::max();
    for (const BucketMember &m : members) {
      int64_t size = byteSize(m.exchange->getOperand(0));
      if (!current.empty() && (bytes + size > capBytes || m.def >= use)) {
        buckets.push_back(std::move(current));
        current.clear();
        bytes = 0;
        use = std::numeric_limits<int64_t>::max();
      }
      current.push_back(m);
      bytes += size;
      use = std::min(use, m.use);
    }
    if (!current.empty())
      buckets.push_back(std::move(current));
  }
  return buckets;
}

void mlir::kiln::emitBucket(ArrayRef<BucketMember> bucket, Block &block,
                            bool overlap, const BucketLayout &layout) {
  Operation *first = bucket.front().exchange;
  MLIRContext *context = first->getContext();
  SmallVector<Location> locs = llvm::map_to_vector(
      bucket, [](const BucketMember &m) { return m.exchange->getLoc(); });
  Location loc = FusedLoc::get(context, locs);
  const BucketMember *lastDef = &bucket.front(), *firstUse = &bucket.front();
  for (const BucketMember &m : bucket) {
    if (m.def > lastDef->def)
      lastDef = &m;
    if (m.use < firstUse->use)
      firstUse = &m;
  }

  OpBuilder builder(context);
  if (!overlap)
    builder.setInsertionPoint(firstUse->firstUser);
  else if (Operation *def = lastDef->exchange->getOperand(0).getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&block);

  Value source = bucket.size() == 1 ? first->getOperand(0)
                                    : layout.pack(builder, loc, bucket);
  Value pending = layout.start(builder, loc, first, source);

  builder.setInsertionPoint(firstUse->firstUser);
  Value whole = builder.create<CollectiveWaitOp>(loc, pending, source);
  int64_t offset = 0;
  for (const BucketMember &m : bucket) {
    Value result = m.exchange->getResult(0);
    Value part = whole;
    if (bucket.size() > 1) {
      part = layout.unpack(builder, m.exchange, whole, offset);
      offset += cast<RankedTensorType>(result.getType()).getNumElements();
    }
    result.replaceAllUsesWith(part);
    m.exchange->erase();
  }
}
