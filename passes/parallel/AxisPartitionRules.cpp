//===- AxisPartitionRules.cpp - The kiln ops' rules along a mesh axis -----===//
//
// How each kiln op is rewritten when a function is split over one mesh axis
// (AxisPartitionOpInterface, attached to the ops here as external models):
// the ops that follow a sharded dimension through themselves, turn a
// reduction over it into a PartialSum, or carry PartialSums because they
// are linear. The engine (AxisPartitioner.cpp) walks the function, keeps
// the states and converts between them; a rule only reads its operands'
// states and asks for the ones it needs. An op without a rule, or whose
// rule fails, is computed on whole operands.
//
// A new op states its rule by attaching a model in
// registerAxisPartitionRules; an elementwise kiln op gets the elementwise
// rule without being named.
//
//===----------------------------------------------------------------------===//

#include "AxisPartitionRules.h"
#include "OwnerExchange.h"

#include "kiln/IR/AxisPartitionInterface.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Helpers shared with the engine
//===----------------------------------------------------------------------===//

/// A zero splat summed over the ranks stays zero, so it may stand beside a
/// PartialSum in a select or pad one.
bool mlir::kiln::isZeroSplat(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

static bool hasFloatElements(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// The dimension sought is the one with exactly the elements before d
/// before it, of a size the ranks divide. Each rank's block of every outer
/// slice then lands in its block of that dimension (this includes d
/// staying the outermost factor of it, and it being an outer factor of d).
std::optional<int64_t> mlir::kiln::alignedDim(ArrayRef<int64_t> from, int64_t d,
                                              ArrayRef<int64_t> to,
                                              int64_t ranks) {
  int64_t before = 1;
  for (int64_t size : from.take_front(d))
    before *= size;
  int64_t prefix = 1;
  for (auto [e, size] : llvm::enumerate(to)) {
    if (prefix == before && size % ranks == 0 && (size > 1 || ranks == 1))
      return static_cast<int64_t>(e);
    prefix *= size;
    if (prefix > before)
      break;
  }
  return std::nullopt;
}

Value mlir::kiln::flattened(OpBuilder &b, Value v, int64_t leadingDims) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t count = 1;
  for (int64_t size : type.getShape().take_front(leadingDims))
    count *= size;
  SmallVector<int64_t> shape{count};
  llvm::append_range(shape, type.getShape().drop_front(leadingDims));
  if (ArrayRef<int64_t>(shape) == type.getShape())
    return v;
  return b.create<ReshapeOp>(v.getLoc(), type.clone(shape), v);
}

//===----------------------------------------------------------------------===//
// The rules
//===----------------------------------------------------------------------===//

/// Whether the elementwise `op` is linear in its PartialSum operands, so
/// that applying it to the local values and summing over the ranks gives
/// the op of the sums. None of the operands is Sharded.
bool mlir::kiln::linearInPartialSums(Operation *op,
                                     ArrayRef<AxisSharding> states) {
  auto partial = [&](unsigned i) { return states[i].isPartialSum(); };
  auto replicated = [&](unsigned i) { return states[i].isReplicated(); };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<AddOp, SubOp>([&](auto) { return partial(0) && partial(1); })
      .Case([&](NegOp) { return true; })
      .Case([&](MulOp) {
        return (partial(0) && replicated(1)) || (replicated(0) && partial(1));
      })
      .Case([&](DivOp o) {
        return partial(0) && replicated(1) && hasFloatElements(o.getLhs());
      })
      .Case([&](CastOp o) {
        return hasFloatElements(o.getOperand()) &&
               hasFloatElements(o.getResult());
      })
      .Case([&](SelectOp o) {
        // Each rank picks from its own partial values; a zero splat beside
        // a PartialSum sums to zero.
        auto ok = [&](unsigned i) {
          return partial(i) || isZeroSplat(op->getOperand(i));
        };
        return replicated(0) && ok(1) && ok(2);
      })
      .Default([](Operation *) { return false; });
}

/// The operands of the elementwise `op` taken along d, its rank-0 ones
/// (a select's predicate) whole.
SmallVector<Value> mlir::kiln::elementwiseOperandsAlong(AxisPartitionContext &c,
                                                        Operation *op,
                                                        int64_t d) {
  return llvm::map_to_vector(op->getOperands(), [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank() == 0
               ? c.replicate(v)
               : c.shardAlong(v, d);
  });
}

/// Elementwise ops (select and cast included): Sharded(d) if an operand is,
/// with every other operand taken along d (a rank-0 select predicate
/// Replicated); otherwise PartialSum where the op is linear in its
/// PartialSum operands. An op not linear in a PartialSum whose rows come
/// without summing it whole (Adagrad's g * g of an embedding's gradient)
/// is Sharded(0) on those rows: making it whole would all-reduce a
/// table-sized sum, where a later use that needs the result whole
/// all-gathers only its rows.
static LogicalResult partitionElementwise(AxisPartitionContext &c,
                                          Operation *op) {
  if (std::optional<unsigned> first = c.firstSharded(op)) {
    int64_t d = c.stateOf(op->getOperand(*first)).dim;
    c.emit(op, elementwiseOperandsAlong(c, op, d), AxisSharding::sharded(d));
    return success();
  }
  if (linearInPartialSums(op, c.statesOf(op->getOperands()))) {
    c.emit(op, c.localsOf(op->getOperands()), AxisSharding::partialSum());
    return success();
  }
  if (op->getNumResults() == 1 &&
      cast<RankedTensorType>(op->getResult(0).getType()).getRank() >= 1 &&
      c.divisible(op->getResult(0), 0) &&
      llvm::any_of(op->getOperands(),
                   [&](Value v) { return c.hasScatteredRows(v); })) {
    c.emit(op, elementwiseOperandsAlong(c, op, 0), AxisSharding::sharded(0));
    return success();
  }
  return failure();
}

/// Operand dimension k maps to result dimension dims[k]; a Sharded
/// dimension has at least `ranks` rows, so it is never a size-1 dimension
/// that the broadcast repeats.
static LogicalResult partitionBroadcast(AxisPartitionContext &c,
                                        BroadcastInDimOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded()) {
    c.emit(op, c.localOf(op.getOperand()),
           AxisSharding::sharded(op.getDims()[state.dim]));
    return success();
  }
  c.emit(op, c.localOf(op.getOperand()), AxisSharding::partialSum());
  return success();
}

/// A reshape keeps Sharded(d) along the result dimension aligned with d
/// (alignedDim). Otherwise the operand is gathered.
static LogicalResult partitionReshape(AxisPartitionContext &c, ReshapeOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isPartialSum()) {
    c.emit(op, c.localOf(op.getOperand()), AxisSharding::partialSum());
    return success();
  }
  std::optional<int64_t> e =
      alignedDim(op.getOperand().getType().getShape(), state.dim,
                 op.getType().getShape(), c.getAxisSize());
  if (!e)
    return failure();
  c.emit(op, c.localOf(op.getOperand()), AxisSharding::sharded(*e));
  return success();
}

static LogicalResult partitionTranspose(AxisPartitionContext &c,
                                        TransposeOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded()) {
    ArrayRef<int64_t> perm = op.getPermutation();
    c.emit(op, c.localOf(op.getOperand()),
           AxisSharding::sharded(llvm::find(perm, state.dim) - perm.begin()));
    return success();
  }
  c.emit(op, c.localOf(op.getOperand()), AxisSharding::partialSum());
  return success();
}

/// Sharded(d) only when dimension d is taken whole; a PartialSum always
/// (slicing is linear).
static LogicalResult partitionSlice(AxisPartitionContext &c, SliceOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isPartialSum()) {
    c.emit(op, c.localOf(op.getOperand()), AxisSharding::partialSum());
    return success();
  }
  int64_t d = state.dim;
  int64_t size = op.getOperand().getType().getDimSize(d);
  if (op.getStart()[d] != 0 || op.getLimit()[d] != size ||
      op.getStride()[d] != 1)
    return failure();
  SmallVector<int64_t> limit(op.getLimit());
  limit[d] = size / c.getAxisSize();
  auto slice =
      c.getBuilder().create<SliceOp>(op.getLoc(), c.localOf(op.getOperand()),
                                     op.getStart(), limit, op.getStride());
  c.define(op.getResult(), slice, state);
  return success();
}

/// Along another dimension than the sharded one, every input is taken
/// along it; PartialSums concatenate into a PartialSum.
static LogicalResult partitionConcat(AxisPartitionContext &c, ConcatOp op) {
  if (std::optional<unsigned> first = c.firstSharded(op)) {
    int64_t d = c.stateOf(op->getOperand(*first)).dim;
    if (d == static_cast<int64_t>(op.getDimension()))
      return failure();
    SmallVector<Value> inputs = llvm::map_to_vector(
        op.getInputs(), [&](Value v) { return c.shardAlong(v, d); });
    c.emit(op, inputs, AxisSharding::sharded(d));
    return success();
  }
  if (!llvm::all_of(op.getInputs(),
                    [&](Value v) { return c.stateOf(v).isPartialSum(); }))
    return failure();
  c.emit(op, c.localsOf(op.getInputs()), AxisSharding::partialSum());
  return success();
}

static LogicalResult partitionReverse(AxisPartitionContext &c, ReverseOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded() && llvm::is_contained(op.getDims(), state.dim))
    return failure();
  c.emit(op, c.localOf(op.getOperand()), state);
  return success();
}

/// Sharded(d) when dimension d is not padded; a PartialSum when the
/// padding value is zero (padding is then linear).
static LogicalResult partitionPad(AxisPartitionContext &c, PadOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded()) {
    int64_t d = state.dim;
    if (op.getLow()[d] != 0 || op.getHigh()[d] != 0 || op.getInterior()[d] != 0)
      return failure();
    c.emit(op, {c.localOf(op.getOperand()), c.replicate(op.getPaddingValue())},
           state);
    return success();
  }
  if (!state.isPartialSum() ||
      !c.stateOf(op.getPaddingValue()).isReplicated() ||
      !isZeroSplat(op.getPaddingValue()))
    return failure();
  c.emit(op, {c.localOf(op.getOperand()), c.localOf(op.getPaddingValue())},
         state);
  return success();
}

/// reduce_sum / reduce_mean / reduce_max. Over other dimensions the
/// sharded one moves down by the reduced dimensions before it. Over it:
/// reduce_sum gives a PartialSum, reduce_mean the local mean times 1 / N
/// (a PartialSum: the ranks' pieces have equal sizes), reduce_max an
/// all_reduce max of the local maxima. Sums and means of a PartialSum are
/// PartialSums.
static LogicalResult partitionReduction(AxisPartitionContext &c, Operation *op,
                                        ArrayRef<int64_t> dims) {
  Value operand = op->getOperand(0);
  AxisSharding state = c.stateOf(operand);
  if (state.isPartialSum()) {
    if (isa<ReduceMaxOp>(op))
      return failure();
    c.emit(op, c.localOf(operand), state);
    return success();
  }
  int64_t d = state.dim;
  if (!llvm::is_contained(dims, d)) {
    int64_t below = llvm::count_if(dims, [&](int64_t r) { return r < d; });
    c.emit(op, c.localOf(operand), AxisSharding::sharded(d - below));
    return success();
  }
  Location loc = op->getLoc();
  if (isa<ReduceSumOp>(op)) {
    c.emit(op, c.localOf(operand), AxisSharding::partialSum());
    return success();
  }
  // Computed locally as Replicated, then combined.
  Value local =
      c.emit(op, c.localOf(operand), AxisSharding::replicated())->getResult(0);
  Value whole;
  AxisSharding result;
  if (isa<ReduceMeanOp>(op)) {
    auto type = cast<RankedTensorType>(local.getType());
    Value scale = c.getBuilder().create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 type, c.getBuilder().getFloatAttr(
                           type.getElementType(),
                           1.0 / static_cast<double>(c.getAxisSize()))));
    whole = c.getBuilder().create<MulOp>(loc, local, scale);
    result = AxisSharding::partialSum();
  } else {
    whole = c.getBuilder().create<AllReduceOp>(
        loc, local, CollectiveReduction::Max, c.getGroups(), c.getAxisSize());
    result = AxisSharding::replicated();
  }
  c.define(op->getResult(0), whole, result);
  return success();
}

/// argmax / argmin along another dimension than the sharded one.
static LogicalResult partitionArgReduce(AxisPartitionContext &c, Operation *op,
                                        int64_t dim) {
  AxisSharding state = c.stateOf(op->getOperand(0));
  if (!state.isSharded() || state.dim == dim)
    return failure();
  c.emit(op, c.localOf(op->getOperand(0)),
         AxisSharding::sharded(state.dim - (dim < state.dim ? 1 : 0)));
  return success();
}

/// A running sum along another dimension than the sharded one; running
/// sums are linear.
static LogicalResult partitionCumsum(AxisPartitionContext &c, CumsumOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded() && state.dim == static_cast<int64_t>(op.getDim()))
    return failure();
  c.emit(op, c.localOf(op.getOperand()), state);
  return success();
}

/// result[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n] (b only in
/// the batched form). The first Sharded operand decides: a shared batch
/// dimension b shards the result along b (the other operand taken along
/// b); m (n) shards the result along m (n), the other operand Replicated;
/// the contracted k makes a PartialSum, the other operand taken along its
/// k. Without Sharded operands, a PartialSum times a Replicated value is a
/// PartialSum when the product is no larger than the PartialSum.
static LogicalResult partitionMatmul(AxisPartitionContext &c, MatmulOp op) {
  bool batched = op.getType().getRank() == 3;
  int64_t offset = batched ? 1 : 0;
  Value lhs = op.getLhs(), rhs = op.getRhs();
  AxisSharding lhsState = c.stateOf(lhs), rhsState = c.stateOf(rhs);
  if (lhsState.isSharded() || rhsState.isSharded()) {
    bool fromLhs = lhsState.isSharded();
    int64_t d = fromLhs ? lhsState.dim : rhsState.dim;
    Value shardedOperand = fromLhs ? lhs : rhs;
    Value other = fromLhs ? rhs : lhs;
    int64_t contracted = fromLhs ? offset + 1 : offset;
    int64_t otherContracted = fromLhs ? offset : offset + 1;
    Value otherLocal;
    AxisSharding result;
    if (batched && d == 0) {
      otherLocal = c.shardAlong(other, 0);
      result = AxisSharding::sharded(0);
    } else if (d == contracted) {
      otherLocal = c.shardAlong(other, otherContracted);
      result = AxisSharding::partialSum();
    } else {
      // m of the lhs or n of the rhs: the result's dimension of the same
      // position.
      otherLocal = c.replicate(other);
      result = AxisSharding::sharded(d);
    }
    Value shardedLocal = c.localOf(shardedOperand);
    if (fromLhs)
      c.emit(op, {shardedLocal, otherLocal}, result);
    else
      c.emit(op, {otherLocal, shardedLocal}, result);
    return success();
  }
  if ((lhsState.isPartialSum() && rhsState.isReplicated()) ||
      (lhsState.isReplicated() && rhsState.isPartialSum())) {
    // A product larger than its partial operand (an embedding's one-hot
    // gradient, [vocabulary, n] x [n, features]) would be summed at its own
    // size: the operand is summed instead, and the product is whole.
    Value partial = lhsState.isPartialSum() ? lhs : rhs;
    if (op.getType().getNumElements() >
        cast<RankedTensorType>(partial.getType()).getNumElements())
      return failure();
    c.emit(op, {c.localOf(lhs), c.localOf(rhs)}, AxisSharding::partialSum());
    return success();
  }
  return failure();
}

/// input [N, C, ...] * weight [O, C / groups, ...] -> [N, O, ...]. A
/// sharded N shards the result's N; with one group, a sharded C (of either
/// operand: the weight gradient convolves the input with its batch as
/// channels) makes a PartialSum and a sharded O shards the result's O.
/// A PartialSum convolved with a Replicated value is a PartialSum.
static LogicalResult partitionConv(AxisPartitionContext &c, ConvOp op) {
  Value input = op.getInput(), weight = op.getWeight();
  AxisSharding in = c.stateOf(input), w = c.stateOf(weight);
  bool oneGroup = op.getGroups() == 1;
  if (in.isSharded() && in.dim == 0) {
    c.emit(op, {c.localOf(input), c.replicate(weight)}, in);
    return success();
  }
  if (oneGroup && in.isSharded() && in.dim == 1) {
    c.emit(op, {c.localOf(input), c.shardAlong(weight, 1)},
           AxisSharding::partialSum());
    return success();
  }
  if (oneGroup && w.isSharded() && w.dim == 1) {
    c.emit(op, {c.shardAlong(input, 1), c.localOf(weight)},
           AxisSharding::partialSum());
    return success();
  }
  if (oneGroup && w.isSharded() && w.dim == 0) {
    c.emit(op, {c.replicate(input), c.localOf(weight)},
           AxisSharding::sharded(1));
    return success();
  }
  if ((in.isPartialSum() && w.isReplicated()) ||
      (in.isReplicated() && w.isPartialSum())) {
    c.emit(op, {c.localOf(input), c.localOf(weight)},
           AxisSharding::partialSum());
    return success();
  }
  return failure();
}

/// result[i..., j...] = table[indices[i...], j...]: sharded indices shard
/// the result's leading dimensions, a table sharded past its rows the
/// trailing ones; a gather from a PartialSum table is a PartialSum.
static LogicalResult partitionGather(AxisPartitionContext &c, GatherOp op) {
  Value table = op.getTable(), indices = op.getIndices();
  AxisSharding t = c.stateOf(table), i = c.stateOf(indices);
  bool rowsSplit = t.isSharded() && t.dim == 0 &&
                   !op.getTable().getType().getElementType().isInteger(1);
  if (i.isSharded() && !rowsSplit) {
    c.emit(op, {c.replicate(table), c.localOf(indices)}, i);
    return success();
  }
  if (t.isSharded() && t.dim >= 1) {
    int64_t indexRank = op.getIndices().getType().getRank();
    c.emit(op, {c.localOf(table), c.replicate(indices)},
           AxisSharding::sharded(indexRank + t.dim - 1));
    return success();
  }
  if (rowsSplit) {
    // A table split by rows (Megatron's vocabulary-parallel embedding):
    // each rank looks up the ids that fall in its rows and gives zeros for
    // the others, so the rows sum over the ranks to the lookup. With the
    // ids split over the axis too (a recommendation model's sharded
    // table, the batch data parallel), every rank looks up its rows for
    // every rank's ids (all-gathered) and the rows go back to the ids'
    // ranks summed (reduce-scattered): the table never moves.
    Location loc = op.getLoc();
    auto indexType = op.getIndices().getType();
    int64_t rows = op.getTable().getType().getDimSize(0);
    int64_t localRowCount = rows / c.getAxisSize();
    if (i.isSharded()) {
      // A rank's ids go to their rows' owners in buckets of a fixed
      // capacity, and the rows come back (OwnerExchange.h).
      Value localIds = c.localOf(indices);
      auto localIndexType = cast<RankedTensorType>(localIds.getType());
      int64_t n = localIndexType.getNumElements();
      if (int64_t capacity =
              ownerBucketCapacity(c.getLookupCapacity(), n, c.getAxisSize())) {
        Value rowsOut = lookUpByOwner(
            c.getBuilder(), loc,
            OwnerExchange{c.getAxisSize(), c.getGroups(), rows, capacity},
            c.localOf(table),
            flattened(c.getBuilder(), localIds, localIndexType.getRank()),
            c.rankOffset(localRowCount, indexType.getElementType()));
        auto resultType = cast<RankedTensorType>(
            c.localType(op.getType(), AxisSharding::sharded(i.dim)));
        c.define(op.getResult(),
                 c.getBuilder().create<ReshapeOp>(loc, resultType, rowsOut), i);
        return success();
      }
    }
    // The op clamps out-of-range ids to the first and last rows.
    Value ids = clampToRows(c.getBuilder(), loc, c.replicate(indices), rows);
    OwnedIds owned =
        idsOwnedHere(c.getBuilder(), loc, ids, localRowCount,
                     c.rankOffset(localRowCount, indexType.getElementType()));
    Value found =
        c.emit(op, {c.localOf(table), owned.local}, AxisSharding::replicated())
            ->getResult(0);
    Value partial = rowsWhere(c.getBuilder(), loc, owned.mine, found);
    if (i.isSharded()) {
      // The result's leading dimensions are the ids'.
      c.define(op.getResult(),
               c.getBuilder().create<ReduceScatterOp>(
                   loc, partial, CollectiveReduction::Sum, i.dim, c.getGroups(),
                   c.getAxisSize()),
               i);
      return success();
    }
    c.define(op.getResult(), partial, AxisSharding::partialSum());
    return success();
  }
  if (t.isPartialSum()) {
    c.emit(op, {c.localOf(table), c.replicate(indices)}, t);
    return success();
  }
  return failure();
}

/// scatter_add of the whole `ids` and `updates` into this rank's rows
/// `localTable` of op's table (split by rows): each id is clamped as the op
/// clamps it and made local by the rank's first row, and the updates of ids
/// outside the rank's rows are zeros (they land, clamped, on a row of the
/// rank and add nothing). Returns the rank's rows of the result.
Value mlir::kiln::scatterIntoLocalRows(AxisPartitionContext &c, ScatterAddOp op,
                                       Value localTable, Value ids,
                                       Value updates) {
  int64_t rows = op.getTable().getType().getDimSize(0);
  int64_t localRowCount = rows / c.getAxisSize();
  Value clamped = clampToRows(c.getBuilder(), op.getLoc(), ids, rows);
  OwnedIds owned = idsOwnedHere(
      c.getBuilder(), op.getLoc(), clamped, localRowCount,
      c.rankOffset(localRowCount,
                   cast<RankedTensorType>(ids.getType()).getElementType()));
  return c.getBuilder().create<ScatterAddOp>(
      op.getLoc(), localTable, owned.local,
      rowsWhere(c.getBuilder(), op.getLoc(), owned.mine, updates));
}

/// result = table with updates[i..., j...] added into row indices[i...]:
/// - a table split past its rows takes the updates along the matching
///   dimension (Sharded like the table);
/// - a table split by rows (an embedding's gradient or sparse update, the
///   vocabulary or the table split over the ranks) adds, on each rank, the
///   updates of the ids in its rows: every id and update made whole;
/// - a zero table (a gradient) with updates split over the ids' dimensions
///   (the batch) adds each rank's own: a PartialSum; split past them, the
///   result is split likewise;
/// - scatter_add is linear in the table and the updates together: a
///   PartialSum table with PartialSum updates, or a zero table with
///   PartialSum updates, is a PartialSum.
static LogicalResult partitionScatterAdd(AxisPartitionContext &c,
                                         ScatterAddOp op) {
  Value table = op.getTable(), indices = op.getIndices(),
        updates = op.getUpdates();
  AxisSharding t = c.stateOf(table), u = c.stateOf(updates);
  int64_t indexRank = op.getIndices().getType().getRank();
  if (t.isSharded() && t.dim >= 1) {
    c.emit(op,
           {c.localOf(table), c.replicate(indices),
            c.shardAlong(updates, indexRank + t.dim - 1)},
           t);
    return success();
  }
  if (t.isSharded()) {
    Value local = scatterIntoLocalRows(
        c, op, c.localOf(table), c.replicate(indices), c.replicate(updates));
    c.define(op.getResult(), local, t);
    return success();
  }
  bool zeroTable = t.isReplicated() && isZeroSplat(table);
  if (zeroTable && u.isSharded() && u.dim >= indexRank) {
    int64_t d = u.dim - indexRank + 1;
    c.emit(op,
           {c.shardAlong(table, d), c.replicate(indices), c.localOf(updates)},
           AxisSharding::sharded(d));
    return success();
  }
  if (zeroTable && u.isSharded()) {
    c.emit(op,
           {c.localOf(table), c.shardAlong(indices, u.dim), c.localOf(updates)},
           AxisSharding::partialSum());
    return success();
  }
  if (u.isPartialSum() && (zeroTable || t.isPartialSum())) {
    c.emit(op, {c.localOf(table), c.replicate(indices), c.localOf(updates)},
           AxisSharding::partialSum());
    return success();
  }
  return failure();
}

/// Pooling (and max pooling's gradient) keeps Sharded(d) where the window
/// does not move along d (size 1, stride 1, no padding: the N and C
/// dimensions of NCHW pooling). A sum window is linear (it pads with zeros),
/// so it keeps a PartialSum.
static LogicalResult
partitionReduceWindow(AxisPartitionContext &c, Operation *op,
                      ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                      ArrayRef<int64_t> dilations, bool linear) {
  if (std::optional<unsigned> first = c.firstSharded(op)) {
    int64_t d = c.stateOf(op->getOperand(*first)).dim;
    if (window[d] != 1 || strides[d] != 1 || low[d] != 0 || high[d] != 0 ||
        dilations[d] != 1)
      return failure();
    SmallVector<Value> operands = llvm::map_to_vector(
        op->getOperands(), [&](Value v) { return c.shardAlong(v, d); });
    c.emit(op, operands, AxisSharding::sharded(d));
    return success();
  }
  if (!linear || !c.stateOf(op->getOperand(0)).isPartialSum())
    return failure();
  c.emit(op, c.localOf(op->getOperand(0)), AxisSharding::partialSum());
  return success();
}

/// Rows at a run-time index: another dimension than the rows may be
/// sharded; slicing a PartialSum is linear.
static LogicalResult partitionDynamicSlice(AxisPartitionContext &c,
                                           DynamicSliceOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (state.isSharded() && state.dim == 0)
    return failure();
  c.emit(op, {c.localOf(op.getOperand()), c.replicate(op.getIndex())}, state);
  return success();
}

/// Writing rows at a run-time index: operand and update sharded along the
/// same dimension past the rows, or both PartialSums (the write is linear
/// in the pair).
static LogicalResult partitionDynamicUpdateSlice(AxisPartitionContext &c,
                                                 DynamicUpdateSliceOp op) {
  Value operand = op.getOperand(), update = op.getUpdate();
  AxisSharding a = c.stateOf(operand), u = c.stateOf(update);
  if (a.isSharded() || u.isSharded()) {
    int64_t d = a.isSharded() ? a.dim : u.dim;
    if (d == 0)
      return failure();
    c.emit(op,
           {c.shardAlong(operand, d), c.shardAlong(update, d),
            c.replicate(op.getIndex())},
           AxisSharding::sharded(d));
    return success();
  }
  if (!a.isPartialSum() || !u.isPartialSum())
    return failure();
  c.emit(op,
         {c.localOf(operand), c.localOf(update), c.replicate(op.getIndex())},
         AxisSharding::partialSum());
  return success();
}

/// kiln.attention and kiln.attention_grad work on each entry of their
/// leading dimensions (batch, heads) independently: one of those split
/// splits every operand and result along it (Megatron's attention with the
/// heads over the ranks). A mask dimension of size 1 is broadcast, so the
/// mask is then taken whole.
static LogicalResult partitionAttention(AxisPartitionContext &c, Operation *op,
                                        int64_t leadingDims) {
  std::optional<unsigned> first = c.firstSharded(op);
  if (!first)
    return failure();
  int64_t d = c.stateOf(op->getOperand(*first)).dim;
  if (d >= leadingDims)
    return failure();
  auto broadcast = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(d) == 1;
  };
  if (!llvm::all_of(op->getOperands(),
                    [&](Value v) { return broadcast(v) || c.divisible(v, d); }))
    return failure();
  SmallVector<Value> operands =
      llvm::map_to_vector(op->getOperands(), [&](Value v) {
        return broadcast(v) ? c.replicate(v) : c.shardAlong(v, d);
      });
  SmallVector<AxisSharding> results(op->getNumResults(),
                                    AxisSharding::sharded(d));
  c.emit(op, operands, results);
  return success();
}

/// A collective that an earlier axis inserted acts within groups of ranks
/// that share this axis's position: on a value split along this axis it
/// leaves the split dimension alone unless it gathers, scatters or
/// exchanges along it; on a PartialSum it is linear (sums and data
/// movement; not max or min).
static LogicalResult partitionCollective(AxisPartitionContext &c,
                                         Operation *op) {
  Value operand = op->getOperand(0);
  AxisSharding state = c.stateOf(operand);
  SmallVector<int64_t> moved;
  std::optional<CollectiveReduction> kind;
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    moved.push_back(gather.getDimension());
  } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    moved.push_back(scatter.getDimension());
    kind = scatter.getKind();
  } else if (auto exchange = dyn_cast<AllToAllOp>(op)) {
    moved.push_back(exchange.getSplitDim());
    moved.push_back(exchange.getConcatDim());
  } else if (auto reduce = dyn_cast<AllReduceOp>(op)) {
    kind = reduce.getKind();
  }
  if (state.isSharded()) {
    if (llvm::is_contained(moved, state.dim))
      return failure();
    c.emit(op, c.localOf(operand), state);
    return success();
  }
  if (kind && *kind != CollectiveReduction::Sum &&
      *kind != CollectiveReduction::Mean)
    return failure();
  c.emit(op, c.localOf(operand), AxisSharding::partialSum());
  return success();
}

/// A sort along another dimension than the sharded one sorts each rank's
/// slices whole: the values and the indices are split like the operand.
static LogicalResult partitionSort(AxisPartitionContext &c, SortOp op) {
  AxisSharding state = c.stateOf(op.getOperand());
  if (!state.isSharded() || state.dim == static_cast<int64_t>(op.getDim()))
    return failure();
  SmallVector<AxisSharding, 2> results(op->getNumResults(), state);
  c.emit(op, c.localOf(op.getOperand()), results);
  return success();
}

/// The entry points of the rules that several ops share.
template <typename Op>
static LogicalResult partitionReduce(AxisPartitionContext &c, Op op) {
  return partitionReduction(c, op, op.getDims());
}

template <typename Op>
static LogicalResult partitionArgOp(AxisPartitionContext &c, Op op) {
  return partitionArgReduce(c, op, op.getDim());
}

static LogicalResult partitionPooling(AxisPartitionContext &c,
                                      ReduceWindowOp op) {
  return partitionReduceWindow(c, op, op.getWindow(), op.getStrides(),
                               op.getPaddingLow(), op.getPaddingHigh(),
                               op.getDilations(),
                               op.getKind() == ReduceWindowKind::Sum);
}

static LogicalResult partitionMaxPoolingGrad(AxisPartitionContext &c,
                                             ReduceWindowMaxGradOp op) {
  return partitionReduceWindow(c, op, op.getWindow(), op.getStrides(),
                               op.getPaddingLow(), op.getPaddingHigh(),
                               op.getDilations(), /*linear=*/false);
}

template <typename Op>
static LogicalResult partitionAttentionOp(AxisPartitionContext &c, Op op) {
  return partitionAttention(c, op, op.getQuery().getType().getRank() - 2);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {
/// The model of ConcreteOp whose rule is the function Rule(context, op).
template <typename ConcreteOp, auto Rule>
struct RuleModel : public AxisPartitionOpInterface::ExternalModel<
                       RuleModel<ConcreteOp, Rule>, ConcreteOp> {
  LogicalResult partitionAlongAxis(Operation *op,
                                   AxisPartitionContext &context) const {
    return Rule(context, cast<ConcreteOp>(op));
  }
};

template <typename ConcreteOp, auto Rule>
void attachRule(MLIRContext &context) {
  ConcreteOp::template attachInterface<RuleModel<ConcreteOp, Rule>>(context);
}

/// Attaches the elementwise rule to each of `Ops` that is elementwise and
/// has no region.
template <typename... Ops> void attachElementwiseRules(MLIRContext &context) {
  auto attach = [&](auto *tag) {
    using Op = std::remove_pointer_t<decltype(tag)>;
    if constexpr (Op::template hasTrait<OpTrait::Elementwise>() &&
                  Op::template hasTrait<OpTrait::ZeroRegions>())
      attachRule<Op, partitionElementwise>(context);
  };
  (attach(static_cast<Ops *>(nullptr)), ...);
}
} // namespace

void mlir::kiln::registerAxisPartitionRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    MLIRContext &ctx = *context;
    attachElementwiseRules<
#define GET_OP_LIST
#include "kiln/IR/KilnOps.cpp.inc"
        >(ctx);
    attachRule<SelectOp, partitionElementwise>(ctx);
    attachRule<CastOp, partitionElementwise>(ctx);
    attachRule<BroadcastInDimOp, partitionBroadcast>(ctx);
    attachRule<ReshapeOp, partitionReshape>(ctx);
    attachRule<TransposeOp, partitionTranspose>(ctx);
    attachRule<SliceOp, partitionSlice>(ctx);
    attachRule<ConcatOp, partitionConcat>(ctx);
    attachRule<ReverseOp, partitionReverse>(ctx);
    attachRule<PadOp, partitionPad>(ctx);
    attachRule<ReduceSumOp, partitionReduce<ReduceSumOp>>(ctx);
    attachRule<ReduceMeanOp, partitionReduce<ReduceMeanOp>>(ctx);
    attachRule<ReduceMaxOp, partitionReduce<ReduceMaxOp>>(ctx);
    attachRule<ArgMaxOp, partitionArgOp<ArgMaxOp>>(ctx);
    attachRule<ArgMinOp, partitionArgOp<ArgMinOp>>(ctx);
    attachRule<CumsumOp, partitionCumsum>(ctx);
    attachRule<SortOp, partitionSort>(ctx);
    attachRule<MatmulOp, partitionMatmul>(ctx);
    attachRule<ConvOp, partitionConv>(ctx);
    attachRule<GatherOp, partitionGather>(ctx);
    attachRule<ScatterAddOp, partitionScatterAdd>(ctx);
    attachRule<ReduceWindowOp, partitionPooling>(ctx);
    attachRule<ReduceWindowMaxGradOp, partitionMaxPoolingGrad>(ctx);
    attachRule<DynamicSliceOp, partitionDynamicSlice>(ctx);
    attachRule<DynamicUpdateSliceOp, partitionDynamicUpdateSlice>(ctx);
    attachRule<AttentionOp, partitionAttentionOp<AttentionOp>>(ctx);
    attachRule<AttentionGradOp, partitionAttentionOp<AttentionGradOp>>(ctx);
    attachRule<AllReduceOp, partitionCollective>(ctx);
    attachRule<AllGatherOp, partitionCollective>(ctx);
    attachRule<ReduceScatterOp, partitionCollective>(ctx);
    attachRule<AllToAllOp, partitionCollective>(ctx);
    attachRule<CollectiveBroadcastOp, partitionCollective>(ctx);
  });
}
