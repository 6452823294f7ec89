//===- AxisPartitioner.cpp - Splitting a program over one mesh axis -------===//
//
// Rewrites a single-device function into the SPMD function that the ranks
// along one mesh axis run, each on its piece of the values split over the
// axis, so that every rank returns what the original returns: data
// parallelism (kiln-data-parallel: the batch split over all ranks) and
// tensor parallelism (kiln-partition: weights split as annotated, once per
// mesh axis) as program transformations. It is a partitioner in the spirit
// of GSPMD's sharding propagation, kept to three states per axis:
//
//   Replicated     every rank holds the whole value;
//   Sharded(d)     the value is the concatenation along dimension d of the
//                  ranks' local pieces, in the order of the axis;
//   PartialSum     the value is the sum over the ranks of the local values.
//
// The algorithm, for one function:
//
//  1. The split arguments are Sharded(d) and take their local types (the
//     data-parallel batch: Sharded(0), B / N rows); every other argument is
//     Replicated.
//
//  2. Walk the body in order. Each op is rewritten on local values by its
//     own rule (AxisPartitionOpInterface; the kiln ops' rules are in
//     AxisPartitionRules.cpp), which gives its results their states and
//     local types through this engine (an AxisPartitionContext). An op on
//     Replicated operands is copied unchanged; elementwise ops, shape ops,
//     reductions, matmul, conv, gather, pooling and the dynamic slices follow
//     the sharded dimension through the op where the local computation is
//     exact, and turn a reduction over it into a PartialSum (reduce_max into an
//     all_reduce max); the linear ops carry PartialSums (add/sub of two,
//     mul or div by a Replicated value, neg, float casts, the shape ops,
//     sums, matmul and conv with a Replicated other operand, ...).
//
//  3. An operand a rule needs in another state is converted where it is
//     used (and the conversion reused by later uses):
//       - to Replicated: Sharded by kiln.all_gather, PartialSum by
//         kiln.all_reduce sum (linear ops from PartialSums no larger than
//         their result, lr * g or a layer norm's backward pass, are instead
//         applied to the sums of their sources, so that all readers of g
//         share one exchange);
//       - to Sharded(d): Sharded(d') by kiln.all_to_all, PartialSum by
//         kiln.reduce_scatter, Replicated by taking the rank's rows with no
//         communication at all (a splat constant, an iota or a broadcast
//         is re-made at the local shape; anything else is cut out with
//         kiln.dynamic_slice at the rank's position along the axis
//         times B / N).
//     An op without a rule, or whose operands a rule cannot combine, gets
//     all its operands Replicated and is copied unchanged. That makes the
//     pass total: only how much it communicates depends on how many ops it
//     understands. Region ops (kiln.cond, kiln.while, kiln.for, kiln.fused)
//     and func.call take this path: no state enters a region in this
//     version.
//
//  4. The returned values are made Replicated, so every rank returns the
//     original's results, or Sharded(d) where the caller asks for the
//     rank's block of a result (a tensor-parallel weight stays split). Ops
//     the rewrite left without uses (full-size constants and broadcasts
//     replaced by their local pieces) are erased.
//
//  5. The all_reduce sums inserted for PartialSums (the gradients, in a
//     training step) are grouped into buckets and started asynchronously
//     (GradientBuckets.cpp), where the caller asks for it.
//
// A function that already communicates along other axes (kiln-partition's
// earlier axes) keeps its collectives: each acts within groups of ranks
// that share this axis's position, so it is rewritten like any op that
// leaves the split dimension alone (a PartialSum passes through the sums).
//
// The gradient of a weight, X^T dY in the backward pass, is a matmul that
// contracts the batch dimension of both operands, hence a PartialSum; its
// all_reduce appears where the gradient is first needed whole, and the
// update reads the reduced gradient.
//
//===----------------------------------------------------------------------===//

#include "AxisPartitioner.h"
#include "AxisPartitionRules.h"
#include "GradientBuckets.h"
#include "OwnerExchange.h"

#include "kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The permutation that swaps dimensions 0 and `d` of a rank-`rank` tensor.
SmallVector<int64_t> swapWithFront(int64_t rank, int64_t d) {
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[d]);
  return perm;
}

/// The rewrite of one function (steps 1-4 of the file comment); step 5 is
/// bucketPartialSums.
class Partitioner final : public AxisPartitionContext {
public:
  Partitioner(func::FuncOp func, const AxisPartitionConfig &options)
      : func(func), options(options), ranks(options.size),
        groups(options.groups), builder(func.getContext()) {}

  LogicalResult run();

  //===--- What the ops' rules ask for (AxisPartitionContext) -----------===//

  int64_t getAxisSize() const override { return ranks; }
  ArrayRef<int64_t> getGroups() const override { return groups; }
  OpBuilder &getBuilder() override { return builder; }
  double getLookupCapacity() const override { return options.lookupCapacity; }
  AxisSharding stateOf(Value original) const override {
    return states.lookup(original);
  }
  Value localOf(Value original) const override {
    return locals.lookup(original);
  }
  void define(Value original, Value local, AxisSharding state) override {
    locals[original] = local;
    states[original] = state;
  }
  using AxisPartitionContext::emit;
  Operation *emit(Operation *op, ValueRange operands,
                  ArrayRef<AxisSharding> results) override;
  Value replicate(Value original) override;
  Value shardAlong(Value original, int64_t d) override;
  Value rankOffset(int64_t rowsPerRank, Type element) override;
  bool hasScatteredRows(Value original) const override;

private:
  //===--- Conversions between states ----------------------------------===//

  Value replicateThroughLinearOps(Value original);
  bool carriesPartialSum(Operation *def) const;
  Value wholeAbove(Value value, Value cut);
  Value cloneEarly(Operation *def, IRMapping &mapping);
  Value localRows(Value original, int64_t d);
  Value localRowsOfScatteredSum(Value original, int64_t d);
  Value localRowsOfProducer(Operation *def, int64_t d, RankedTensorType type);
  Value rankOffset(int64_t rowsPerRank);
  Value rankOffsetLike(int64_t rowsPerRank, RankedTensorType type);
  OwnerExchange ownerExchange(int64_t tableRows, int64_t capacity) const {
    return {ranks, groups, tableRows, capacity};
  }

  //===--- The walk -----------------------------------------------------===//

  void rewrite(Operation *op);
  void rewriteReplicated(Operation *op);

  func::FuncOp func;
  const AxisPartitionConfig &options;
  /// The number of ranks along the axis, and the axis's replica groups.
  int64_t ranks;
  ArrayRef<int64_t> groups;
  OpBuilder builder;
  Block *body = nullptr;

  /// Original value -> the value each rank holds of it, and its state.
  DenseMap<Value, Value> locals;
  DenseMap<Value, AxisSharding> states;
  /// Conversions made so far, reused by later uses: original value ->
  /// Replicated local value; (original value, d) -> Sharded(d) local value.
  DenseMap<Value, Value> replicated;
  DenseMap<std::pair<Value, int64_t>, Value> shardedAlong;
  /// This rank's position along the axis, made once at the top of the body.
  Value axisIndex;

  /// The all_reduce sums that make PartialSums whole, for bucketing, and the
  /// ops that compute a PartialSum from PartialSums (the linear ops between
  /// a finished partial sum and its reduction, which bucketing may move up).
  SmallVector<AllReduceOp> partialSumReductions;
  llvm::DenseSet<Operation *> carriers;
};

//===----------------------------------------------------------------------===//
// Conversions between states
//===----------------------------------------------------------------------===//

Value Partitioner::replicate(Value original) {
  AxisSharding state = stateOf(original);
  Value local = localOf(original);
  if (state.isReplicated())
    return local;
  if (Value done = replicated.lookup(original))
    return done;
  Location loc = original.getLoc();
  Value whole;
  if (state.isSharded()) {
    whole = builder.create<AllGatherOp>(loc, local, state.dim, groups, ranks);
  } else if (Value recomputed = replicateThroughLinearOps(original)) {
    whole = recomputed;
  } else {
    auto sum = builder.create<AllReduceOp>(loc, local, CollectiveReduction::Sum,
                                           groups, ranks);
    partialSumReductions.push_back(sum);
    whole = sum;
  }
  replicated[original] = whole;
  return whole;
}

/// Whether the PartialSum result of `def` is `def` applied to the ranks'
/// partial values, so that `def` applied to the whole values of its
/// operands is the whole result: a linear op (the elementwise ones
/// linearInPartialSums accepts, the shape ops, sums and means, a matmul)
/// of PartialSums and Replicated values.
bool Partitioner::carriesPartialSum(Operation *def) const {
  if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !stateOf(def->getResult(0)).isPartialSum() ||
      !(def->hasTrait<OpTrait::Elementwise>() ||
        isa<ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp, MatmulOp,
            ReduceSumOp, ReduceMeanOp>(def)))
    return false;
  bool partial = false;
  for (Value operand : def->getOperands()) {
    AxisSharding state = stateOf(operand);
    if (!state.isPartialSum() && !state.isReplicated())
      return false;
    partial |= state.isPartialSum();
  }
  auto type = dyn_cast<RankedTensorType>(def->getResult(0).getType());
  return partial && type && type.hasStaticShape() &&
         type.getElementType().isIntOrFloat();
}

static int64_t bitsOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getNumElements() * type.getElementTypeBitWidth();
}

/// The whole value of the PartialSum `original` computed again from whole
/// values, where ops that carry partial sums (carriesPartialSum) lead to it
/// and a cheaper set of sums makes it whole: the sums of the partial
/// sources those ops start from, or of one value every path from them to
/// `original` passes through, whichever is smallest and no larger than
/// `original`. lr * g, (1 - beta1) * g, -g and a reshape of g are applied to
/// the sum of g; a layer norm's backward pass (its input gradient, its
/// gain's and bias's gradients and the per-row means in between) is
/// computed from the sum of the gradient reaching the layer norm's output,
/// which the three column-parallel products' input gradients add up to.
/// That costs no more bytes than summing `original`, and later readers of
/// the same value share its sum: Adam reads g in (1 - beta1) * g and in
/// g * g, which would otherwise sum both, and a layer norm's gradients need
/// one all-reduce, as Megatron's, not one for its input and one per
/// parameter. Returns null otherwise.
Value Partitioner::replicateThroughLinearOps(Value original) {
  Operation *def = original.getDefiningOp();
  if (!def || !carriesPartialSum(def))
    return {};
  // The PartialSums `original` is computed from through carriers, not yet
  // whole, operands before their users; the sources among them are
  // computed by other ops.
  llvm::SetVector<Value> below;
  std::function<void(Value)> visit = [&](Value v) {
    if (below.contains(v) || replicated.count(v))
      return;
    if (Operation *op = v.getDefiningOp(); op && carriesPartialSum(op))
      for (Value operand : op->getOperands())
        if (stateOf(operand).isPartialSum())
          visit(operand);
    below.insert(v);
  };
  visit(original);
  auto isSource = [&](Value v) {
    Operation *op = v.getDefiningOp();
    return !op || !carriesPartialSum(op);
  };
  // Whether every path from a source up to `original` passes through `cut`.
  auto separates = [&](Value cut) {
    llvm::SmallVector<Value> stack = {original};
    llvm::DenseSet<Value> reached;
    while (!stack.empty()) {
      Value v = stack.pop_back_val();
      if (v == cut || !below.contains(v) || !reached.insert(v).second)
        continue;
      if (isSource(v))
        return false;
      for (Value operand : v.getDefiningOp()->getOperands())
        stack.push_back(operand);
    }
    return true;
  };
  int64_t bestBits = 0;
  for (Value v : below)
    if (isSource(v))
      bestBits += bitsOf(v);
  Value bestCut;
  for (Value v : below)
    if (v != original && !isSource(v) && bitsOf(v) < bestBits && separates(v)) {
      bestBits = bitsOf(v);
      bestCut = v;
    }
  if (bestBits > bitsOf(original))
    return {};
  return wholeAbove(original, bestCut);
}

/// `value` made whole from whole operands up to `cut` (null: up to the
/// sources), each made whole once (`replicated`); `cut` and the sources are
/// made whole by `replicate`.
Value Partitioner::wholeAbove(Value value, Value cut) {
  if (Value done = replicated.lookup(value))
    return done;
  Operation *def = value.getDefiningOp();
  if (value == cut || !def || !carriesPartialSum(def))
    return replicate(value);
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, stateOf(operand).isPartialSum()
                             ? wholeAbove(operand, cut)
                             : replicate(operand));
  Value whole = cloneEarly(def, mapping);
  replicated[value] = whole;
  return whole;
}

/// `def` cloned onto the whole operands in `mapping`, right after the last
/// of them is defined rather than where the whole value is first needed: a
/// layer norm's gain gradient, needed whole only by the update at the end
/// of the step, is then computed as soon as the summed gradient exists,
/// and the [rows, features] values it reads are not kept alive until the
/// update.
Value Partitioner::cloneEarly(Operation *def, IRMapping &mapping) {
  OpBuilder::InsertionGuard guard(builder);
  Block *block = builder.getInsertionBlock();
  Operation *last = nullptr;
  for (Value operand : def->getOperands()) {
    Operation *producer = mapping.lookup(operand).getDefiningOp();
    if (!producer || producer->getBlock() != block)
      continue;
    if (!last || last->isBeforeInBlock(producer))
      last = producer;
  }
  if (last)
    builder.setInsertionPointAfter(last);
  return builder.clone(*def, mapping)->getResult(0);
}

Value Partitioner::shardAlong(Value original, int64_t d) {
  AxisSharding state = stateOf(original);
  Value local = localOf(original);
  if (state.isSharded() && state.dim == d)
    return local;
  if (Value done = shardedAlong.lookup({original, d}))
    return done;
  assert(divisible(original, d) && "splitting an indivisible dimension");
  Location loc = original.getLoc();
  Value piece;
  if (state.isSharded())
    // Rank r sends block j of its piece (split along d) to rank j, which
    // joins the blocks along the old dimension: Sharded(d) from
    // Sharded(dim) in one exchange.
    piece = builder.create<AllToAllOp>(loc, local, d, state.dim, groups, ranks);
  else if (Value rows = localRowsOfScatteredSum(original, d))
    piece = rows;
  else if (state.isPartialSum())
    piece = builder.create<ReduceScatterOp>(
        loc, local, CollectiveReduction::Sum, d, groups, ranks);
  else
    piece = localRows(original, d);
  shardedAlong[{original, d}] = piece;
  return piece;
}

/// Whether `original` is a PartialSum whose rows (d = 0) a rank can have
/// without summing it whole: a scatter_add into zeros of ids and updates
/// split over the ids (an embedding's gradient with the batch split) and
/// smaller than the table, or an op linear in one such sum and otherwise
/// of Replicated operands (lr * g, -g). Every rank's ids and updates are
/// then gathered and each rank adds those that fall in its rows, which
/// moves (N - 1) / N of the ids and updates where summing the table's
/// pieces would move (N - 1) / N of the table. Uses of such a sum that
/// need it whole still all-reduce it.
bool Partitioner::hasScatteredRows(Value original) const {
  if (!stateOf(original).isPartialSum())
    return false;
  Operation *def = original.getDefiningOp();
  if (auto scatter = dyn_cast_or_null<ScatterAddOp>(def))
    return isZeroSplat(scatter.getTable()) &&
           scatter.getIndices().getType().getNumElements() +
                   scatter.getUpdates().getType().getNumElements() <
               scatter.getType().getNumElements();
  if (!def || def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !def->hasTrait<OpTrait::Elementwise>() ||
      !linearInPartialSums(def, statesOf(def->getOperands())))
    return false;
  // One PartialSum operand, itself such a sum; the others Replicated.
  int partials = 0;
  for (Value v : def->getOperands()) {
    if (stateOf(v).isPartialSum()) {
      if (++partials > 1 || !hasScatteredRows(v))
        return false;
    } else if (!stateOf(v).isReplicated()) {
      return false;
    }
  }
  return partials == 1;
}

/// The rank's rows (d = 0) of `original` when hasScatteredRows says they
/// come from the gathered lookups; null otherwise.
Value Partitioner::localRowsOfScatteredSum(Value original, int64_t d) {
  if (d != 0 || !hasScatteredRows(original))
    return {};
  Operation *def = original.getDefiningOp();
  if (auto scatter = dyn_cast<ScatterAddOp>(def)) {
    AxisSharding u = stateOf(scatter.getUpdates());
    int64_t indexRank = scatter.getIndices().getType().getRank();
    if (u.isSharded() && u.dim < indexRank) {
      // The updates go to their rows' owners in buckets of a fixed
      // capacity, with their ids (OwnerExchange.h).
      Value localIds = shardAlong(scatter.getIndices(), u.dim);
      int64_t n = cast<RankedTensorType>(localIds.getType()).getNumElements();
      int64_t rows = scatter.getType().getDimSize(0);
      if (int64_t capacity =
              ownerBucketCapacity(options.lookupCapacity, n, ranks))
        return scatterToOwners(
            builder, scatter.getLoc(), ownerExchange(rows, capacity),
            cast<RankedTensorType>(
                localType(scatter.getType(), AxisSharding::sharded(0))),
            flattened(builder, localIds, indexRank),
            flattened(builder, localOf(scatter.getUpdates()), indexRank),
            rankOffset(rows / ranks,
                       scatter.getIndices().getType().getElementType()));
    }
    return scatterIntoLocalRows(
        *this, scatter, shardAlong(scatter.getTable(), 0),
        replicate(scatter.getIndices()), replicate(scatter.getUpdates()));
  }
  // The linear op on the rows of its PartialSum operand (shardAlong keeps
  // them for the sum's other uses) and the rows of the others.
  SmallVector<Value> operands;
  for (Value v : def->getOperands())
    operands.push_back(cast<RankedTensorType>(v.getType()).getRank() == 0 &&
                               !stateOf(v).isPartialSum()
                           ? replicate(v)
                           : shardAlong(v, 0));
  IRMapping mapping;
  mapping.map(def->getOperands(), operands);
  Value local = builder.clone(*def, mapping)->getResult(0);
  local.setType(localType(original.getType(), AxisSharding::sharded(0)));
  return local;
}

/// This rank's piece along `d` of the Replicated `original`, computed
/// without communication: a splat constant, an iota along another
/// dimension or a broadcast is made again at the local shape (a broadcast
/// of a value that has the dimension takes that value's piece); anything
/// else is cut out of the whole value with kiln.dynamic_slice.
Value Partitioner::localRows(Value original, int64_t d) {
  Location loc = original.getLoc();
  auto global = cast<RankedTensorType>(original.getType());
  auto type =
      cast<RankedTensorType>(localType(global, AxisSharding::sharded(d)));
  Operation *def = original.getDefiningOp();
  if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat())
      return builder.create<ConstantOp>(
          loc, DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  }
  if (auto iota = dyn_cast_or_null<IotaOp>(def)) {
    Value local = builder.create<IotaOp>(loc, type, iota.getDimension());
    if (static_cast<int64_t>(iota.getDimension()) != d)
      return local;
    // Along d the rank's indices start at its first row.
    return builder.create<AddOp>(loc, local,
                                 rankOffsetLike(type.getDimSize(d), type));
  }
  if (auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(def)) {
    Value operand = broadcast.getOperand();
    auto operandType = cast<RankedTensorType>(operand.getType());
    ArrayRef<int64_t> dims = broadcast.getDims();
    const int64_t *mapped = llvm::find(dims, d);
    Value source;
    if (mapped == dims.end() ||
        operandType.getDimSize(mapped - dims.begin()) == 1)
      source = replicate(operand);
    else
      source = shardAlong(operand, mapped - dims.begin());
    return builder.create<BroadcastInDimOp>(loc, type, source, dims);
  }
  if (def && original.hasOneUse())
    if (Value pushed = localRowsOfProducer(def, d, type))
      return pushed;
  // The general case: rows [r * B / N, (r + 1) * B / N) of dimension d,
  // moved to the front for kiln.dynamic_slice and back.
  Value whole = replicate(original);
  int64_t rowsPerRank = type.getDimSize(d);
  SmallVector<int64_t> perm = swapWithFront(global.getRank(), d);
  if (d != 0)
    whole = builder.create<TransposeOp>(loc, whole, perm);
  Value piece = builder.create<DynamicSliceOp>(
      loc, whole, rankOffset(rowsPerRank), rowsPerRank);
  if (d != 0)
    piece = builder.create<TransposeOp>(loc, piece, perm);
  return piece;
}

/// The rank's piece along `d` of the Replicated result of `def`, computed
/// from pieces of its operands when the op allows it (elementwise ops, a
/// reshape that keeps d's block structure, a matmul's rows or columns), or
/// null. localRows uses it for a value read nowhere else, whose whole then
/// need not be computed at all: an embedding's gradient (a one-hot product
/// over the vocabulary) is computed only for the rank's rows.
Value Partitioner::localRowsOfProducer(Operation *def, int64_t d,
                                       RankedTensorType type) {
  if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !isa_and_nonnull<KilnDialect>(def->getDialect()))
    return {};
  // `def` copied onto local operands, its result of the local type.
  auto onto = [&](ValueRange operands) -> Value {
    IRMapping mapping;
    mapping.map(def->getOperands(), operands);
    Value local = builder.clone(*def, mapping)->getResult(0);
    local.setType(type);
    return local;
  };
  if (def->hasTrait<OpTrait::Elementwise>() || isa<SelectOp, CastOp>(def))
    return onto(elementwiseOperandsAlong(*this, def, d));
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    std::optional<int64_t> e = alignedDim(
        type.getShape(), d, reshape.getOperand().getType().getShape(), ranks);
    if (!e)
      return {};
    return onto(shardAlong(reshape.getOperand(), *e));
  }
  if (auto scatter = dyn_cast<ScatterAddOp>(def)) {
    // The rank's rows get the updates that fall in them; past the rows,
    // the updates' matching dimension.
    if (d == 0)
      return scatterIntoLocalRows(
          *this, scatter, shardAlong(scatter.getTable(), 0),
          replicate(scatter.getIndices()), replicate(scatter.getUpdates()));
    int64_t indexRank = scatter.getIndices().getType().getRank();
    return onto({shardAlong(scatter.getTable(), d),
                 replicate(scatter.getIndices()),
                 shardAlong(scatter.getUpdates(), indexRank + d - 1)});
  }
  if (auto matmul = dyn_cast<MatmulOp>(def)) {
    // Rows come from the lhs, columns from the rhs, a batch from both.
    int64_t rank = type.getRank();
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs();
    if (d == rank - 2)
      return onto({shardAlong(lhs, d), replicate(rhs)});
    if (d == rank - 1)
      return onto({replicate(lhs), shardAlong(rhs, d)});
    return onto({shardAlong(lhs, d), shardAlong(rhs, d)});
  }
  return {};
}

/// The first row of this rank's piece: its position along the axis times
/// rowsPerRank. The position is kiln.rank itself when the axis spans the
/// run, (kiln.rank / stride) % size otherwise.
Value Partitioner::rankOffset(int64_t rowsPerRank) {
  Location loc = func.getLoc();
  auto scalar = RankedTensorType::get({}, builder.getI64Type());
  auto constant = [&](int64_t value) -> Value {
    return builder.create<ConstantOp>(
        loc, DenseElementsAttr::get(scalar, builder.getI64IntegerAttr(value)));
  };
  if (!axisIndex) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    axisIndex = builder.create<RankOp>(loc, scalar);
    if (options.stride != 1)
      axisIndex =
          builder.create<DivOp>(loc, axisIndex, constant(options.stride));
    if (ranks * options.stride != static_cast<int64_t>(groups.size()))
      axisIndex = builder.create<RemOp>(loc, axisIndex, constant(ranks));
  }
  return builder.create<MulOp>(loc, axisIndex, constant(rowsPerRank));
}

/// rankOffset(rowsPerRank) as a rank-0 tensor of `element`.
Value Partitioner::rankOffset(int64_t rowsPerRank, Type element) {
  Value offset = rankOffset(rowsPerRank);
  if (element == builder.getI64Type())
    return offset;
  return builder.create<CastOp>(func.getLoc(),
                                RankedTensorType::get({}, element), offset);
}

/// rankOffset(rowsPerRank) as a tensor of `type` (every element the offset,
/// converted to its element type).
Value Partitioner::rankOffsetLike(int64_t rowsPerRank, RankedTensorType type) {
  return builder.create<BroadcastInDimOp>(
      func.getLoc(), type, rankOffset(rowsPerRank, type.getElementType()),
      ArrayRef<int64_t>{});
}

//===----------------------------------------------------------------------===//
// The rules
//===----------------------------------------------------------------------===//

Operation *Partitioner::emit(Operation *op, ValueRange operands,
                             ArrayRef<AxisSharding> results) {
  IRMapping mapping;
  mapping.map(op->getOperands(), operands);
  Operation *copy = builder.clone(*op, mapping);
  for (auto [original, local, state] :
       llvm::zip_equal(op->getResults(), copy->getResults(), results)) {
    local.setType(localType(original.getType(), state));
    define(original, local, state);
  }
  // An op that carries a PartialSum from its operands to its results.
  // (Collectives of other axes carry PartialSums too, but stay in place.)
  if (!isCollective(op) &&
      llvm::any_of(results, [](AxisSharding s) { return s.isPartialSum(); }) &&
      llvm::any_of(op->getOperands(),
                   [&](Value v) { return stateOf(v).isPartialSum(); }))
    carriers.insert(copy);
  return copy;
}

/// The fallback: every operand (and every outer value a region reads)
/// Replicated, the op copied unchanged, its results Replicated.
void Partitioner::rewriteReplicated(Operation *op) {
  IRMapping mapping;
  for (Value v : op->getOperands())
    mapping.map(v, replicate(v));
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value v : captured)
    mapping.map(v, replicate(v));
  Operation *copy = builder.clone(*op, mapping);
  for (auto [original, local] :
       llvm::zip_equal(op->getResults(), copy->getResults()))
    define(original, local, AxisSharding::replicated());
}

void Partitioner::rewrite(Operation *op) {
  // Ops on Replicated values compute the same thing on every rank.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  if (llvm::all_of(op->getOperands(),
                   [&](Value v) { return stateOf(v).isReplicated(); }) &&
      llvm::all_of(captured,
                   [&](Value v) { return stateOf(v).isReplicated(); }))
    return rewriteReplicated(op);

  // The op's own rule (AxisPartitionRules.cpp attaches the kiln ops').
  auto rule = dyn_cast<AxisPartitionOpInterface>(op);
  if (!rule || failed(rule.partitionAlongAxis(*this)))
    rewriteReplicated(op);
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

LogicalResult Partitioner::run() {
  // Checks, before anything changes.
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << options.passName
           << " handles functions whose body is one block (kiln control "
              "flow is structured)";
  if (!options.otherAxesCommunicate) {
    WalkResult walk = func.walk([&](Operation *op) {
      if (!isCollective(op))
        return WalkResult::advance();
      op->emitError() << options.passName
                      << " rewrites single-device programs, but @"
                      << func.getSymName()
                      << " already communicates between ranks here";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  Block &original = func.front();
  Operation *terminator = original.getTerminator();
  assert(options.argumentDims.size() == original.getNumArguments() &&
         "one entry per argument");
  assert((options.resultDims.empty() ||
          options.resultDims.size() == terminator->getNumOperands()) &&
         "one entry per result");

  // 1. The arguments.
  body = new Block();
  for (BlockArgument arg : original.getArguments()) {
    std::optional<int64_t> dim = options.argumentDims[arg.getArgNumber()];
    AxisSharding state =
        dim ? AxisSharding::sharded(*dim) : AxisSharding::replicated();
    assert((!dim || divisible(arg, *dim)) && "checked by the caller");
    define(arg,
           body->addArgument(localType(arg.getType(), state), arg.getLoc()),
           state);
  }

  // 2-3. The body, op by op.
  builder.setInsertionPointToEnd(body);
  for (Operation &op : original.without_terminator())
    rewrite(&op);

  // 4. The results: whole on every rank, or the rank's block where asked.
  SmallVector<Value> results;
  for (auto [i, v] : llvm::enumerate(terminator->getOperands())) {
    std::optional<int64_t> dim =
        options.resultDims.empty() ? std::nullopt : options.resultDims[i];
    assert((!dim || divisible(v, *dim)) && "checked by the caller");
    results.push_back(dim ? shardAlong(v, *dim) : replicate(v));
  }
  builder.clone(*terminator)->setOperands(results);

  original.dropAllReferences();
  original.erase();
  func.getBody().push_back(body);
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         body->getArgumentTypes(),
                                         ValueRange(results).getTypes()));

  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body))) {
    if (!isOpTriviallyDead(&op))
      continue;
    carriers.erase(&op);
    op.erase();
  }

  // 5. Buckets.
  if (!options.bucket)
    return success();
  double cap = std::floor(options.bucketMb * 1024.0 * 1024.0);
  int64_t capBytes = cap >= 9.0e18 ? std::numeric_limits<int64_t>::max()
                                   : static_cast<int64_t>(cap);
  bucketPartialSums(*body, partialSumReductions, carriers, capBytes,
                    options.overlap);
  return success();
}

} // namespace

LogicalResult
mlir::kiln::partitionAlongAxis(func::FuncOp func,
                               const AxisPartitionConfig &config) {
  assert(config.size >= 1 && !config.groups.empty() &&
         config.groups.size() % config.size == 0 && "a valid axis");
  // The passes declare the rules as a dependency; a caller outside a pass
  // (the JIT's data parallelism) may hold a context without them.
  MLIRContext *context = func.getContext();
  std::optional<RegisteredOperationName> reshape =
      RegisteredOperationName::lookup(ReshapeOp::getOperationName(), context);
  if (!reshape || !reshape->hasInterface<AxisPartitionOpInterface>()) {
    DialectRegistry registry;
    registerAxisPartitionRules(registry);
    context->appendDialectRegistry(registry);
  }
  return Partitioner(func, config).run();
}

int64_t mlir::kiln::meshAxisStride(ArrayRef<int64_t> mesh, size_t axis) {
  int64_t stride = 1;
  for (int64_t size : mesh.drop_front(axis + 1))
    stride *= size;
  return stride;
}

SmallVector<int64_t> mlir::kiln::meshAxisGroups(ArrayRef<int64_t> mesh,
                                                size_t axis) {
  int64_t world = 1;
  for (int64_t size : mesh)
    world *= size;
  int64_t stride = meshAxisStride(mesh, axis), size = mesh[axis];
  // A group is the ranks whose coordinates agree except along `axis`: the
  // ranks of position 0 along it, each followed by its `size` neighbours
  // `stride` apart.
  SmallVector<int64_t> groups;
  for (int64_t first = 0; first < world; ++first) {
    if ((first / stride) % size != 0)
      continue;
    for (int64_t i = 0; i < size; ++i)
      groups.push_back(first + i * stride);
  }
  return groups;
}
