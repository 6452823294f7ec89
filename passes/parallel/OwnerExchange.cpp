//===- OwnerExchange.cpp - Lookups in a table split by rows ---------------===//
//
// The buckets (OwnerExchange.h). For this rank's ids, clamped to the table:
//
//   owner = id / R, local = id - owner R          (R = rows / N)
//   pos   = how many earlier ids have the same owner
//           (an exclusive running sum of the one-hot owners, [n, N])
//   slot  = owner C + pos; the id fits if pos < C
//   send  = [N, C]: local + 1 scattered at the slots of the ids that fit,
//           minus 1 (-1 marks an empty slot)
//
// and the group's overflow flag, the all-reduced largest bucket > C. Then a
// kiln.cond on the flag runs either
//
//   the exchange: all_to_all of send (row j of rank i becomes row i of rank
//   j: each owner receives the [N, C] ids it owns), the owner's rows of
//   them looked up, all_to_all of the [N, C, ...] rows back, and each id
//   reads its slot; in the backward pass the updates scattered into [N, C,
//   ...] by slot, all_to_all to the owners with the ids, and scatter-added
//   into the owner's rows (an empty slot adds a zero row);
//
// or, when some bucket overflowed, the exchange that gathers every rank's
// ids (and updates), in which each rank looks up (adds) those in its rows
// and the rows are reduce-scattered back (nothing is sent back).
//
// Every rank of a group takes the same branch, so the collectives inside
// match (kiln's collectives are group-local, KilnCollectiveOps.td).
//
//===----------------------------------------------------------------------===//

#include "OwnerExchange.h"

#include "kiln/IR/KilnOps.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::kiln;

/// A splat of `value` in the type of `like` (an integer tensor).
static Value splatLike(OpBuilder &b, Location loc, Value like, int64_t value) {
  auto type = cast<RankedTensorType>(like.getType());
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, b.getIntegerAttr(type.getElementType(), value)));
}

Value mlir::kiln::clampToRows(OpBuilder &b, Location loc, Value ids,
                              int64_t rows) {
  Value low = b.create<MaxOp>(loc, ids, splatLike(b, loc, ids, 0));
  return b.create<MinOp>(loc, low, splatLike(b, loc, ids, rows - 1));
}

OwnedIds mlir::kiln::idsOwnedHere(OpBuilder &b, Location loc,
                                  Value clampedIds, int64_t ownedRows,
                                  Value offset) {
  auto type = cast<RankedTensorType>(clampedIds.getType());
  Value local = b.create<SubOp>(
      loc, clampedIds,
      b.create<BroadcastInDimOp>(loc, type, offset, ArrayRef<int64_t>{}));
  Value atLeastFirst = b.create<CompareOp>(loc, CompareDirection::ge, local,
                                           splatLike(b, loc, local, 0));
  Value beforeEnd = b.create<CompareOp>(loc, CompareDirection::lt, local,
                                        splatLike(b, loc, local, ownedRows));
  return {local, b.create<AndOp>(loc, atLeastFirst, beforeEnd)};
}

Value mlir::kiln::rowsWhere(OpBuilder &b, Location loc, Value keep,
                            Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  SmallVector<int64_t> leading(
      cast<RankedTensorType>(keep.getType()).getRank());
  std::iota(leading.begin(), leading.end(), 0);
  Value mask = b.create<BroadcastInDimOp>(loc, type.clone(b.getI1Type()), keep,
                                          leading);
  Value zeros = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  return b.create<SelectOp>(loc, mask, rows, zeros);
}

namespace {

/// Builds the ops of one exchange with `b` at `loc`.
struct Emitter {
  OpBuilder &b;
  Location loc;
  const OwnerExchange &x;

  Type indexElement;

  int64_t ownedRows() const { return x.tableRows / x.ranks; }

  Value splat(int64_t value, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, indexElement);
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getIntegerAttr(indexElement,
                                                           value)));
  }
  Value zeros(RankedTensorType type) {
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type,
                                    b.getZeroAttr(type.getElementType())));
  }
  Value broadcast(Value v, RankedTensorType type, ArrayRef<int64_t> dims) {
    return b.create<BroadcastInDimOp>(loc, type, v, dims);
  }
  struct Buckets {
    Value send, slot, fits, overflow;
  };

  Buckets bucket(Value ids) {
    int64_t n = cast<RankedTensorType>(ids.getType()).getDimSize(0);
    int64_t N = x.ranks, C = x.capacity;
    Value clamped = clampToRows(b, loc, ids, x.tableRows);
    Value owner = b.create<DivOp>(loc, clamped, splat(ownedRows(), {n}));
    Value local = b.create<SubOp>(
        loc, clamped, b.create<MulOp>(loc, owner, splat(ownedRows(), {n})));
    auto gridType = RankedTensorType::get({n, N}, indexElement);
    Value owners = b.create<IotaOp>(loc, gridType, 1);
    Value hit = b.create<CastOp>(
        loc, gridType,
        b.create<CompareOp>(loc, CompareDirection::eq, owners,
                            broadcast(owner, gridType, {0})));
    Value before = b.create<CumsumOp>(loc, hit, /*dim=*/0, /*exclusive=*/true);
    Value pos = b.create<ReduceSumOp>(loc, b.create<MulOp>(loc, before, hit),
                                      ArrayRef<int64_t>{1});
    Value counts = b.create<ReduceSumOp>(loc, hit, ArrayRef<int64_t>{0});
    Value most = b.create<ReduceMaxOp>(loc, counts, ArrayRef<int64_t>{0});
    Value groupMost = b.create<AllReduceOp>(loc, most, CollectiveReduction::Max,
                                            x.groups, N);
    Buckets buckets;
    buckets.overflow = b.create<CompareOp>(loc, CompareDirection::gt, groupMost,
                                           splat(C, {}));
    buckets.slot = b.create<AddOp>(
        loc, b.create<MulOp>(loc, owner, splat(C, {n})), pos);
    buckets.fits =
        b.create<CompareOp>(loc, CompareDirection::lt, pos, splat(C, {n}));
    Value plusOne = b.create<SelectOp>(
        loc, buckets.fits, b.create<AddOp>(loc, local, splat(1, {n})),
        splat(0, {n}));
    Value filled = b.create<ScatterAddOp>(loc, splat(0, {N * C}),
                                          buckets.slot, plusOne);
    buckets.send = b.create<ReshapeOp>(
        loc, RankedTensorType::get({N, C}, indexElement),
        b.create<SubOp>(loc, filled, splat(1, {N * C})));
    return buckets;
  }

  Value allToAll(Value v) {
    return b.create<AllToAllOp>(loc, v, 0, 0, x.groups, x.ranks);
  }

  /// `v` with its first `count` dims replaced by `leading` (the same
  /// number of elements): [N, C, ...] as [N C, ...] and back.
  Value withLeading(Value v, int64_t count, ArrayRef<int64_t> leading) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(leading);
    llvm::append_range(shape, type.getShape().drop_front(count));
    return b.create<ReshapeOp>(loc, type.clone(shape), v);
  }
};

/// A kiln.cond on `pred` over `inputs`, with results of `types`, whose
/// branches `thenFn` and `elseFn` build on their block arguments.
Value condOn(OpBuilder &b, Location loc, Value pred, ValueRange inputs,
             Type type,
             llvm::function_ref<Value(OpBuilder &, ValueRange)> thenFn,
             llvm::function_ref<Value(OpBuilder &, ValueRange)> elseFn) {
  auto cond = b.create<CondOp>(loc, TypeRange{type}, pred, inputs);
  for (int branch = 0; branch < 2; ++branch) {
    Region &region = branch == 0 ? cond.getThenRegion() : cond.getElseRegion();
    Block *block = new Block();
    region.push_back(block);
    for (Value input : inputs)
      block->addArgument(input.getType(), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    Value result = (branch == 0 ? thenFn : elseFn)(inner, block->getArguments());
    inner.create<YieldOp>(loc, result);
  }
  return cond.getResult(0);
}

} // namespace

int64_t mlir::kiln::ownerBucketCapacity(double factor, int64_t n,
                                        int64_t ranks) {
  if (!(factor > 0) || n <= 0 || ranks <= 1)
    return 0;
  double capacity = std::ceil(factor * static_cast<double>(n) /
                              static_cast<double>(ranks));
  if (capacity >= static_cast<double>(n))
    return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(capacity));
}

Value mlir::kiln::lookUpByOwner(OpBuilder &b, Location loc,
                                const OwnerExchange &exchange,
                                Value localTable, Value ids, Value offset) {
  Type element = cast<RankedTensorType>(ids.getType()).getElementType();
  Emitter top{b, loc, exchange, element};
  Emitter::Buckets buckets = top.bucket(ids);
  auto tableType = cast<RankedTensorType>(localTable.getType());
  int64_t n = cast<RankedTensorType>(ids.getType()).getDimSize(0);
  SmallVector<int64_t> shape{n};
  llvm::append_range(shape, tableType.getShape().drop_front());
  auto resultType = tableType.clone(shape);
  return condOn(
      b, loc, buckets.overflow,
      {localTable, buckets.send, buckets.slot, ids, offset}, resultType,
      [&](OpBuilder &ib, ValueRange a) -> Value {
        // Overflow: every rank's ids, each looked up by its owner, the
        // rows summed back to the ids' ranks.
        Emitter e{ib, loc, exchange, element};
        Value all = ib.create<AllGatherOp>(loc, a[3], 0, exchange.groups,
                                           exchange.ranks);
        OwnedIds owned = idsOwnedHere(
            ib, loc, clampToRows(ib, loc, all, exchange.tableRows),
            e.ownedRows(), a[4]);
        Value found = rowsWhere(ib, loc, owned.mine,
                                ib.create<GatherOp>(loc, a[0], owned.local));
        return ib.create<ReduceScatterOp>(loc, found, CollectiveReduction::Sum,
                                          0, exchange.groups, exchange.ranks);
      },
      [&](OpBuilder &ib, ValueRange a) -> Value {
        Emitter e{ib, loc, exchange, element};
        Value owned = e.allToAll(a[1]);
        Value rows = e.allToAll(ib.create<GatherOp>(loc, a[0], owned));
        Value flat = e.withLeading(rows, 2, {exchange.ranks * exchange.capacity});
        return ib.create<GatherOp>(loc, flat, a[2]);
      });
}

Value mlir::kiln::scatterToOwners(OpBuilder &b, Location loc,
                                  const OwnerExchange &exchange,
                                  RankedTensorType localTableType, Value ids,
                                  Value updates, Value offset) {
  Type element = cast<RankedTensorType>(ids.getType()).getElementType();
  Emitter top{b, loc, exchange, element};
  Emitter::Buckets buckets = top.bucket(ids);
  return condOn(
      b, loc, buckets.overflow,
      {buckets.send, buckets.slot, buckets.fits, ids, updates, offset},
      localTableType,
      [&](OpBuilder &ib, ValueRange a) -> Value {
        // Overflow: every rank's ids and updates; each rank adds those in
        // its rows.
        Emitter e{ib, loc, exchange, element};
        Value allIds = ib.create<AllGatherOp>(loc, a[3], 0, exchange.groups,
                                              exchange.ranks);
        Value allUpdates = ib.create<AllGatherOp>(
            loc, a[4], 0, exchange.groups, exchange.ranks);
        OwnedIds owned = idsOwnedHere(
            ib, loc, clampToRows(ib, loc, allIds, exchange.tableRows),
            e.ownedRows(), a[5]);
        return ib.create<ScatterAddOp>(loc, e.zeros(localTableType),
                                       owned.local,
                                       rowsWhere(ib, loc, owned.mine,
                                                 allUpdates));
      },
      [&](OpBuilder &ib, ValueRange a) -> Value {
        Emitter e{ib, loc, exchange, element};
        auto updateType = cast<RankedTensorType>(a[4].getType());
        SmallVector<int64_t> slots{exchange.ranks * exchange.capacity};
        llvm::append_range(slots, updateType.getShape().drop_front());
        Value sent = ib.create<ScatterAddOp>(
            loc, e.zeros(updateType.clone(slots)), a[1],
            rowsWhere(ib, loc, a[2], a[4]));
        Value rows = e.allToAll(
            e.withLeading(sent, 1, {exchange.ranks, exchange.capacity}));
        Value owned = e.allToAll(a[0]);
        return ib.create<ScatterAddOp>(loc, e.zeros(localTableType), owned,
                                       rows);
      });
}
