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
//  2. Walk the body in order. Each op is rewritten on local values by the
//     rule of its kind (the `rewrite*` functions below), which gives its
//     results their states and local types: an op on Replicated operands
//     is copied unchanged; elementwise ops, shape ops, reductions, matmul,
//     conv, gather, pooling and the dynamic slices follow the sharded
//     dimension through the op where the local computation is exact, and
//     turn a reduction over it into a PartialSum (reduce_max into an
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
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// How a value of the original function exists on the ranks.
struct Sharding {
  enum Kind { Replicated, Sharded, PartialSum };
  Kind kind = Replicated;
  /// The dimension of a Sharded value.
  int64_t dim = -1;

  static Sharding replicated() { return {Replicated, -1}; }
  static Sharding sharded(int64_t dim) { return {Sharded, dim}; }
  static Sharding partialSum() { return {PartialSum, -1}; }
  bool isReplicated() const { return kind == Replicated; }
  bool isSharded() const { return kind == Sharded; }
  bool isPartialSum() const { return kind == PartialSum; }
};

bool linearInPartialSums(Operation *op, ArrayRef<Sharding> states);

/// Whether `v` is a kiln.constant splat of zero (either sign for floats):
/// summed over the ranks it stays zero, so it may stand beside a
/// PartialSum in a select.
bool isZeroSplat(Value v) {
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

bool hasFloatElements(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// The permutation that swaps dimensions 0 and `d` of a rank-`rank` tensor.
SmallVector<int64_t> swapWithFront(int64_t rank, int64_t d) {
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[d]);
  return perm;
}

/// The dimension of shape `to` that, across a reshape between `from` and
/// `to`, holds the blocks of `from`'s dimension `d` split over `ranks`: the
/// one with exactly the elements before d before it, of a size the ranks
/// divide. Each rank's block of every outer slice then lands in its block
/// of that dimension (this includes d staying the outermost factor of it,
/// and it being an outer factor of d). A reshape reads the same both ways,
/// so this maps a result's dimension to an operand's too.
std::optional<int64_t> alignedDim(ArrayRef<int64_t> from, int64_t d,
                                  ArrayRef<int64_t> to, int64_t ranks) {
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

/// The rewrite of one function (steps 1-4 of the file comment); step 5 is
/// bucketPartialSums.
class Partitioner {
public:
  Partitioner(func::FuncOp func, const AxisPartitionConfig &options)
      : func(func), options(options), ranks(options.size),
        groups(options.groups), builder(func.getContext()) {}

  LogicalResult run();

private:
  //===--- States and local values -------------------------------------===//

  Sharding stateOf(Value original) const { return states.lookup(original); }
  Value localOf(Value original) const { return locals.lookup(original); }
  void define(Value original, Value local, Sharding state) {
    locals[original] = local;
    states[original] = state;
  }

  /// The type a rank holds of a value of type `global` in `state`.
  Type localType(Type global, Sharding state) const {
    if (!state.isSharded())
      return global;
    auto tensor = cast<RankedTensorType>(global);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[state.dim] /= ranks;
    return tensor.clone(shape);
  }

  /// Whether dimension `d` of `v` can be split across the ranks.
  bool divisible(Value v, int64_t d) const {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && d < type.getRank() && !type.isDynamicDim(d) &&
           type.getDimSize(d) % ranks == 0;
  }

  Value replicate(Value original);
  Value replicateThroughLinearOps(Value original);
  bool carriesPartialSum(Operation *def) const;
  Value wholeAbove(Value value, Value cut);
  Value cloneEarly(Operation *def, IRMapping &mapping);
  Value shardAlong(Value original, int64_t d);
  Value localRows(Value original, int64_t d);
  Value localRowsOfScatteredSum(Value original, int64_t d);
  Value localRowsOfProducer(Operation *def, int64_t d, RankedTensorType type);
  SmallVector<Value> elementwiseOperandsAlong(Operation *op, int64_t d);
  Value rankOffset(int64_t rowsPerRank);
  Value rankOffsetLike(int64_t rowsPerRank, RankedTensorType type);
  Value rankOffsetOf(int64_t rowsPerRank, Type element);
  OwnerExchange ownerExchange(int64_t tableRows, int64_t capacity) const {
    return {ranks, groups, tableRows, capacity};
  }
  Value flattened(Value v, int64_t leadingDims);

  //===--- The rules ----------------------------------------------------===//

  void rewrite(Operation *op);
  void rewriteReplicated(Operation *op);
  /// Copies `op` onto `operands` and gives its results `results` (their
  /// local types follow).
  Operation *emit(Operation *op, ValueRange operands,
                  ArrayRef<Sharding> results);
  Operation *emit(Operation *op, ValueRange operands, Sharding result) {
    return emit(op, operands, ArrayRef<Sharding>(result));
  }
  SmallVector<Value> localsOf(ValueRange originals) const {
    return llvm::map_to_vector(originals, [&](Value v) { return localOf(v); });
  }

  bool rewriteElementwise(Operation *op);
  bool rewriteBroadcast(BroadcastInDimOp op);
  bool rewriteReshape(ReshapeOp op);
  bool rewriteTranspose(TransposeOp op);
  bool rewriteSlice(SliceOp op);
  bool rewriteConcat(ConcatOp op);
  bool rewriteReverse(ReverseOp op);
  bool rewritePad(PadOp op);
  bool rewriteReduction(Operation *op, ArrayRef<int64_t> dims);
  bool rewriteArgReduce(Operation *op, int64_t dim);
  bool rewriteCumsum(CumsumOp op);
  bool rewriteMatmul(MatmulOp op);
  bool rewriteConv(ConvOp op);
  bool rewriteGather(GatherOp op);
  bool rewriteScatterAdd(ScatterAddOp op);
  Value scatterIntoLocalRows(ScatterAddOp op, Value localTable, Value ids,
                             Value updates);
  bool rewriteReduceWindow(Operation *op, ArrayRef<int64_t> window,
                           ArrayRef<int64_t> strides, ArrayRef<int64_t> low,
                           ArrayRef<int64_t> high, ArrayRef<int64_t> dilations,
                           bool linear);
  bool rewriteDynamicSlice(DynamicSliceOp op);
  bool rewriteDynamicUpdateSlice(DynamicUpdateSliceOp op);
  bool rewriteAttention(Operation *op, int64_t leadingDims);
  bool rewriteCollective(Operation *op);

  /// The states of `op`'s operands.
  SmallVector<Sharding> operandStates(Operation *op) const {
    return llvm::map_to_vector(op->getOperands(),
                               [&](Value v) { return stateOf(v); });
  }
  /// The first Sharded operand of `op`, if any.
  std::optional<unsigned> firstSharded(Operation *op) const {
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (stateOf(v).isSharded())
        return i;
    return std::nullopt;
  }

  func::FuncOp func;
  const AxisPartitionConfig &options;
  /// The number of ranks along the axis, and the axis's replica groups.
  int64_t ranks;
  ArrayRef<int64_t> groups;
  OpBuilder builder;
  Block *body = nullptr;

  /// Original value -> the value each rank holds of it, and its state.
  DenseMap<Value, Value> locals;
  DenseMap<Value, Sharding> states;
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
  Sharding state = stateOf(original);
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
    Sharding state = stateOf(operand);
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
    if (v != original && !isSource(v) && bitsOf(v) < bestBits &&
        separates(v)) {
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
  Sharding state = stateOf(original);
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

/// The rank's rows (d = 0) of the PartialSum `original` when it is a
/// scatter_add into zeros of ids and updates split over the ids (an
/// embedding's gradient with the batch split), or an op linear in such a
/// sum (lr * g, -g), read once, and the ids and updates are smaller than
/// the table: every rank's ids and updates are gathered and each rank adds
/// those that fall in its rows, which moves (N - 1) / N of the ids and
/// updates where summing the table's pieces would move (N - 1) / N of the
/// table. Null otherwise.
Value Partitioner::localRowsOfScatteredSum(Value original, int64_t d) {
  if (d != 0 || !stateOf(original).isPartialSum() || !original.hasOneUse())
    return {};
  Operation *def = original.getDefiningOp();
  if (auto scatter = dyn_cast_or_null<ScatterAddOp>(def)) {
    if (!isZeroSplat(scatter.getTable()) ||
        scatter.getIndices().getType().getNumElements() +
                scatter.getUpdates().getType().getNumElements() >=
            scatter.getType().getNumElements())
      return {};
    Sharding u = stateOf(scatter.getUpdates());
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
                localType(scatter.getType(), Sharding::sharded(0))),
            flattened(localIds, indexRank),
            flattened(localOf(scatter.getUpdates()), indexRank),
            rankOffsetOf(rows / ranks,
                         scatter.getIndices().getType().getElementType()));
    }
    return scatterIntoLocalRows(scatter, shardAlong(scatter.getTable(), 0),
                                replicate(scatter.getIndices()),
                                replicate(scatter.getUpdates()));
  }
  if (!def || def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !def->hasTrait<OpTrait::Elementwise>() ||
      !linearInPartialSums(def, operandStates(def)))
    return {};
  // One PartialSum operand, itself such a sum; the others Replicated.
  std::optional<unsigned> partial;
  for (auto [i, v] : llvm::enumerate(def->getOperands())) {
    if (stateOf(v).isPartialSum()) {
      if (partial)
        return {};
      partial = i;
    } else if (!stateOf(v).isReplicated()) {
      return {};
    }
  }
  if (!partial)
    return {};
  Value rows = localRowsOfScatteredSum(def->getOperand(*partial), 0);
  if (!rows)
    return {};
  SmallVector<Value> operands;
  for (auto [i, v] : llvm::enumerate(def->getOperands()))
    operands.push_back(i == *partial ? rows
                       : cast<RankedTensorType>(v.getType()).getRank() == 0
                           ? replicate(v)
                           : shardAlong(v, 0));
  IRMapping mapping;
  mapping.map(def->getOperands(), operands);
  Value local = builder.clone(*def, mapping)->getResult(0);
  local.setType(localType(original.getType(), Sharding::sharded(0)));
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
  auto type = cast<RankedTensorType>(localType(global, Sharding::sharded(d)));
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
    return onto(elementwiseOperandsAlong(def, d));
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    std::optional<int64_t> e =
        alignedDim(type.getShape(), d,
                   reshape.getOperand().getType().getShape(), ranks);
    if (!e)
      return {};
    return onto(shardAlong(reshape.getOperand(), *e));
  }
  if (auto scatter = dyn_cast<ScatterAddOp>(def)) {
    // The rank's rows get the updates that fall in them; past the rows,
    // the updates' matching dimension.
    if (d == 0)
      return scatterIntoLocalRows(scatter, shardAlong(scatter.getTable(), 0),
                                  replicate(scatter.getIndices()),
                                  replicate(scatter.getUpdates()));
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
Value Partitioner::rankOffsetOf(int64_t rowsPerRank, Type element) {
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
      func.getLoc(), type, rankOffsetOf(rowsPerRank, type.getElementType()),
      ArrayRef<int64_t>{});
}

/// `v` with its first `leadingDims` dims made one.
Value Partitioner::flattened(Value v, int64_t leadingDims) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t count = 1;
  for (int64_t size : type.getShape().take_front(leadingDims))
    count *= size;
  SmallVector<int64_t> shape{count};
  llvm::append_range(shape, type.getShape().drop_front(leadingDims));
  if (ArrayRef<int64_t>(shape) == type.getShape())
    return v;
  return builder.create<ReshapeOp>(v.getLoc(), type.clone(shape), v);
}

//===----------------------------------------------------------------------===//
// The rules
//===----------------------------------------------------------------------===//

Operation *Partitioner::emit(Operation *op, ValueRange operands,
                             ArrayRef<Sharding> results) {
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
      llvm::any_of(results, [](Sharding s) { return s.isPartialSum(); }) &&
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
    define(original, local, Sharding::replicated());
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

  bool done =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case([&](BroadcastInDimOp o) { return rewriteBroadcast(o); })
          .Case([&](ReshapeOp o) { return rewriteReshape(o); })
          .Case([&](TransposeOp o) { return rewriteTranspose(o); })
          .Case([&](SliceOp o) { return rewriteSlice(o); })
          .Case([&](ConcatOp o) { return rewriteConcat(o); })
          .Case([&](ReverseOp o) { return rewriteReverse(o); })
          .Case([&](PadOp o) { return rewritePad(o); })
          .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
              [&](auto o) { return rewriteReduction(o, o.getDims()); })
          .Case<ArgMaxOp, ArgMinOp>(
              [&](auto o) { return rewriteArgReduce(o, o.getDim()); })
          .Case([&](CumsumOp o) { return rewriteCumsum(o); })
          .Case([&](MatmulOp o) { return rewriteMatmul(o); })
          .Case([&](ConvOp o) { return rewriteConv(o); })
          .Case([&](GatherOp o) { return rewriteGather(o); })
          .Case([&](ScatterAddOp o) { return rewriteScatterAdd(o); })
          .Case([&](ReduceWindowOp o) {
            return rewriteReduceWindow(o, o.getWindow(), o.getStrides(),
                                       o.getPaddingLow(), o.getPaddingHigh(),
                                       o.getDilations(),
                                       o.getKind() == ReduceWindowKind::Sum);
          })
          .Case([&](ReduceWindowMaxGradOp o) {
            return rewriteReduceWindow(o, o.getWindow(), o.getStrides(),
                                       o.getPaddingLow(), o.getPaddingHigh(),
                                       o.getDilations(), /*linear=*/false);
          })
          .Case([&](DynamicSliceOp o) { return rewriteDynamicSlice(o); })
          .Case([&](DynamicUpdateSliceOp o) {
            return rewriteDynamicUpdateSlice(o);
          })
          .Case<SelectOp, CastOp>(
              [&](Operation *o) { return rewriteElementwise(o); })
          .Case([&](AttentionOp o) {
            return rewriteAttention(o, o.getQuery().getType().getRank() - 2);
          })
          .Case([&](AttentionGradOp o) {
            return rewriteAttention(o, o.getQuery().getType().getRank() - 2);
          })
          .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
                CollectiveBroadcastOp>(
              [&](Operation *o) { return rewriteCollective(o); })
          .Default([&](Operation *o) {
            return isa_and_nonnull<KilnDialect>(o->getDialect()) &&
                   o->hasTrait<OpTrait::Elementwise>() &&
                   o->getNumRegions() == 0 && rewriteElementwise(o);
          });
  if (!done)
    rewriteReplicated(op);
}

/// Whether the elementwise `op` is linear in its PartialSum operands, so
/// that applying it to the local values and summing over the ranks gives
/// the op of the sums. None of the operands is Sharded.
bool linearInPartialSums(Operation *op, ArrayRef<Sharding> states) {
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
SmallVector<Value> Partitioner::elementwiseOperandsAlong(Operation *op,
                                                         int64_t d) {
  return llvm::map_to_vector(op->getOperands(), [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank() == 0
               ? replicate(v)
               : shardAlong(v, d);
  });
}

/// Elementwise ops (select and cast included): Sharded(d) if an operand is,
/// with every other operand taken along d (a rank-0 select predicate
/// Replicated); otherwise PartialSum where the op is linear in its
/// PartialSum operands.
bool Partitioner::rewriteElementwise(Operation *op) {
  if (std::optional<unsigned> first = firstSharded(op)) {
    int64_t d = stateOf(op->getOperand(*first)).dim;
    emit(op, elementwiseOperandsAlong(op, d), Sharding::sharded(d));
    return true;
  }
  if (!linearInPartialSums(op, operandStates(op)))
    return false;
  emit(op, localsOf(op->getOperands()), Sharding::partialSum());
  return true;
}

/// Operand dimension k maps to result dimension dims[k]; a Sharded
/// dimension has at least `ranks` rows, so it is never a size-1 dimension
/// that the broadcast repeats.
bool Partitioner::rewriteBroadcast(BroadcastInDimOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded()) {
    emit(op, localOf(op.getOperand()),
         Sharding::sharded(op.getDims()[state.dim]));
    return true;
  }
  emit(op, localOf(op.getOperand()), Sharding::partialSum());
  return true;
}

/// A reshape keeps Sharded(d) along the result dimension aligned with d
/// (alignedDim). Otherwise the operand is gathered.
bool Partitioner::rewriteReshape(ReshapeOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isPartialSum()) {
    emit(op, localOf(op.getOperand()), Sharding::partialSum());
    return true;
  }
  std::optional<int64_t> e =
      alignedDim(op.getOperand().getType().getShape(), state.dim,
                 op.getType().getShape(), ranks);
  if (!e)
    return false;
  emit(op, localOf(op.getOperand()), Sharding::sharded(*e));
  return true;
}

bool Partitioner::rewriteTranspose(TransposeOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded()) {
    ArrayRef<int64_t> perm = op.getPermutation();
    emit(op, localOf(op.getOperand()),
         Sharding::sharded(llvm::find(perm, state.dim) - perm.begin()));
    return true;
  }
  emit(op, localOf(op.getOperand()), Sharding::partialSum());
  return true;
}

/// Sharded(d) only when dimension d is taken whole; a PartialSum always
/// (slicing is linear).
bool Partitioner::rewriteSlice(SliceOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isPartialSum()) {
    emit(op, localOf(op.getOperand()), Sharding::partialSum());
    return true;
  }
  int64_t d = state.dim;
  int64_t size = op.getOperand().getType().getDimSize(d);
  if (op.getStart()[d] != 0 || op.getLimit()[d] != size ||
      op.getStride()[d] != 1)
    return false;
  SmallVector<int64_t> limit(op.getLimit());
  limit[d] = size / ranks;
  auto slice = builder.create<SliceOp>(op.getLoc(), localOf(op.getOperand()),
                                       op.getStart(), limit, op.getStride());
  define(op.getResult(), slice, state);
  return true;
}

/// Along another dimension than the sharded one, every input is taken
/// along it; PartialSums concatenate into a PartialSum.
bool Partitioner::rewriteConcat(ConcatOp op) {
  if (std::optional<unsigned> first = firstSharded(op)) {
    int64_t d = stateOf(op->getOperand(*first)).dim;
    if (d == static_cast<int64_t>(op.getDimension()))
      return false;
    SmallVector<Value> inputs = llvm::map_to_vector(
        op.getInputs(), [&](Value v) { return shardAlong(v, d); });
    emit(op, inputs, Sharding::sharded(d));
    return true;
  }
  if (!llvm::all_of(op.getInputs(),
                    [&](Value v) { return stateOf(v).isPartialSum(); }))
    return false;
  emit(op, localsOf(op.getInputs()), Sharding::partialSum());
  return true;
}

bool Partitioner::rewriteReverse(ReverseOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded() && llvm::is_contained(op.getDims(), state.dim))
    return false;
  emit(op, localOf(op.getOperand()), state);
  return true;
}

/// Sharded(d) when dimension d is not padded; a PartialSum when the
/// padding value is zero (padding is then linear).
bool Partitioner::rewritePad(PadOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded()) {
    int64_t d = state.dim;
    if (op.getLow()[d] != 0 || op.getHigh()[d] != 0 || op.getInterior()[d] != 0)
      return false;
    emit(op, {localOf(op.getOperand()), replicate(op.getPaddingValue())},
         state);
    return true;
  }
  if (!state.isPartialSum() || !stateOf(op.getPaddingValue()).isReplicated() ||
      !isZeroSplat(op.getPaddingValue()))
    return false;
  emit(op, {localOf(op.getOperand()), localOf(op.getPaddingValue())}, state);
  return true;
}

/// reduce_sum / reduce_mean / reduce_max. Over other dimensions the
/// sharded one moves down by the reduced dimensions before it. Over it:
/// reduce_sum gives a PartialSum, reduce_mean the local mean times 1 / N
/// (a PartialSum: the ranks' pieces have equal sizes), reduce_max an
/// all_reduce max of the local maxima. Sums and means of a PartialSum are
/// PartialSums.
bool Partitioner::rewriteReduction(Operation *op, ArrayRef<int64_t> dims) {
  Value operand = op->getOperand(0);
  Sharding state = stateOf(operand);
  if (state.isPartialSum()) {
    if (isa<ReduceMaxOp>(op))
      return false;
    emit(op, localOf(operand), state);
    return true;
  }
  int64_t d = state.dim;
  if (!llvm::is_contained(dims, d)) {
    int64_t below = llvm::count_if(dims, [&](int64_t r) { return r < d; });
    emit(op, localOf(operand), Sharding::sharded(d - below));
    return true;
  }
  Location loc = op->getLoc();
  if (isa<ReduceSumOp>(op)) {
    emit(op, localOf(operand), Sharding::partialSum());
    return true;
  }
  // Computed locally as Replicated, then combined.
  Value local =
      emit(op, localOf(operand), Sharding::replicated())->getResult(0);
  Value whole;
  Sharding result;
  if (isa<ReduceMeanOp>(op)) {
    auto type = cast<RankedTensorType>(local.getType());
    Value scale = builder.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 type, builder.getFloatAttr(type.getElementType(),
                                            1.0 / static_cast<double>(ranks))));
    whole = builder.create<MulOp>(loc, local, scale);
    result = Sharding::partialSum();
  } else {
    whole = builder.create<AllReduceOp>(loc, local, CollectiveReduction::Max,
                                        groups, ranks);
    result = Sharding::replicated();
  }
  define(op->getResult(0), whole, result);
  return true;
}

/// argmax / argmin along another dimension than the sharded one.
bool Partitioner::rewriteArgReduce(Operation *op, int64_t dim) {
  Sharding state = stateOf(op->getOperand(0));
  if (!state.isSharded() || state.dim == dim)
    return false;
  emit(op, localOf(op->getOperand(0)),
       Sharding::sharded(state.dim - (dim < state.dim ? 1 : 0)));
  return true;
}

/// A running sum along another dimension than the sharded one; running
/// sums are linear.
bool Partitioner::rewriteCumsum(CumsumOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded() && state.dim == static_cast<int64_t>(op.getDim()))
    return false;
  emit(op, localOf(op.getOperand()), state);
  return true;
}

/// result[b, m, n] = sum over k of lhs[b, m, k] * rhs[b, k, n] (b only in
/// the batched form). The first Sharded operand decides: a shared batch
/// dimension b shards the result along b (the other operand taken along
/// b); m (n) shards the result along m (n), the other operand Replicated;
/// the contracted k makes a PartialSum, the other operand taken along its
/// k. Without Sharded operands, a PartialSum times a Replicated value is a
/// PartialSum when the product is no larger than the PartialSum.
bool Partitioner::rewriteMatmul(MatmulOp op) {
  bool batched = op.getType().getRank() == 3;
  int64_t offset = batched ? 1 : 0;
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Sharding lhsState = stateOf(lhs), rhsState = stateOf(rhs);
  if (lhsState.isSharded() || rhsState.isSharded()) {
    bool fromLhs = lhsState.isSharded();
    int64_t d = fromLhs ? lhsState.dim : rhsState.dim;
    Value shardedOperand = fromLhs ? lhs : rhs;
    Value other = fromLhs ? rhs : lhs;
    int64_t contracted = fromLhs ? offset + 1 : offset;
    int64_t otherContracted = fromLhs ? offset : offset + 1;
    Value otherLocal;
    Sharding result;
    if (batched && d == 0) {
      otherLocal = shardAlong(other, 0);
      result = Sharding::sharded(0);
    } else if (d == contracted) {
      otherLocal = shardAlong(other, otherContracted);
      result = Sharding::partialSum();
    } else {
      // m of the lhs or n of the rhs: the result's dimension of the same
      // position.
      otherLocal = replicate(other);
      result = Sharding::sharded(d);
    }
    Value shardedLocal = localOf(shardedOperand);
    if (fromLhs)
      emit(op, {shardedLocal, otherLocal}, result);
    else
      emit(op, {otherLocal, shardedLocal}, result);
    return true;
  }
  if ((lhsState.isPartialSum() && rhsState.isReplicated()) ||
      (lhsState.isReplicated() && rhsState.isPartialSum())) {
    // A product larger than its partial operand (an embedding's one-hot
    // gradient, [vocabulary, n] x [n, features]) would be summed at its own
    // size: the operand is summed instead, and the product is whole.
    Value partial = lhsState.isPartialSum() ? lhs : rhs;
    if (op.getType().getNumElements() >
        cast<RankedTensorType>(partial.getType()).getNumElements())
      return false;
    emit(op, {localOf(lhs), localOf(rhs)}, Sharding::partialSum());
    return true;
  }
  return false;
}

/// input [N, C, ...] * weight [O, C / groups, ...] -> [N, O, ...]. A
/// sharded N shards the result's N; with one group, a sharded C (of either
/// operand: the weight gradient convolves the input with its batch as
/// channels) makes a PartialSum and a sharded O shards the result's O.
/// A PartialSum convolved with a Replicated value is a PartialSum.
bool Partitioner::rewriteConv(ConvOp op) {
  Value input = op.getInput(), weight = op.getWeight();
  Sharding in = stateOf(input), w = stateOf(weight);
  bool oneGroup = op.getGroups() == 1;
  if (in.isSharded() && in.dim == 0) {
    emit(op, {localOf(input), replicate(weight)}, in);
    return true;
  }
  if (oneGroup && in.isSharded() && in.dim == 1) {
    emit(op, {localOf(input), shardAlong(weight, 1)}, Sharding::partialSum());
    return true;
  }
  if (oneGroup && w.isSharded() && w.dim == 1) {
    emit(op, {shardAlong(input, 1), localOf(weight)}, Sharding::partialSum());
    return true;
  }
  if (oneGroup && w.isSharded() && w.dim == 0) {
    emit(op, {replicate(input), localOf(weight)}, Sharding::sharded(1));
    return true;
  }
  if ((in.isPartialSum() && w.isReplicated()) ||
      (in.isReplicated() && w.isPartialSum())) {
    emit(op, {localOf(input), localOf(weight)}, Sharding::partialSum());
    return true;
  }
  return false;
}

/// result[i..., j...] = table[indices[i...], j...]: sharded indices shard
/// the result's leading dimensions, a table sharded past its rows the
/// trailing ones; a gather from a PartialSum table is a PartialSum.
bool Partitioner::rewriteGather(GatherOp op) {
  Value table = op.getTable(), indices = op.getIndices();
  Sharding t = stateOf(table), i = stateOf(indices);
  bool rowsSplit = t.isSharded() && t.dim == 0 &&
                   !op.getTable().getType().getElementType().isInteger(1);
  if (i.isSharded() && !rowsSplit) {
    emit(op, {replicate(table), localOf(indices)}, i);
    return true;
  }
  if (t.isSharded() && t.dim >= 1) {
    int64_t indexRank = op.getIndices().getType().getRank();
    emit(op, {localOf(table), replicate(indices)},
         Sharding::sharded(indexRank + t.dim - 1));
    return true;
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
    int64_t localRowCount = rows / ranks;
    if (i.isSharded()) {
      // A rank's ids go to their rows' owners in buckets of a fixed
      // capacity, and the rows come back (OwnerExchange.h).
      Value localIds = localOf(indices);
      auto localIndexType = cast<RankedTensorType>(localIds.getType());
      int64_t n = localIndexType.getNumElements();
      if (int64_t capacity = ownerBucketCapacity(options.lookupCapacity, n,
                                                 ranks)) {
        Value rowsOut = lookUpByOwner(
            builder, loc, ownerExchange(rows, capacity), localOf(table),
            flattened(localIds, localIndexType.getRank()),
            rankOffsetOf(localRowCount, indexType.getElementType()));
        auto resultType = cast<RankedTensorType>(
            localType(op.getType(), Sharding::sharded(i.dim)));
        define(op.getResult(),
               builder.create<ReshapeOp>(loc, resultType, rowsOut), i);
        return true;
      }
    }
    // The op clamps out-of-range ids to the first and last rows.
    Value ids = clampToRows(builder, loc, replicate(indices), rows);
    OwnedIds owned = idsOwnedHere(
        builder, loc, ids, localRowCount,
        rankOffsetOf(localRowCount, indexType.getElementType()));
    Value found =
        emit(op, {localOf(table), owned.local}, Sharding::replicated())
            ->getResult(0);
    Value partial = rowsWhere(builder, loc, owned.mine, found);
    if (i.isSharded()) {
      // The result's leading dimensions are the ids'.
      define(op.getResult(),
             builder.create<ReduceScatterOp>(loc, partial,
                                             CollectiveReduction::Sum, i.dim,
                                             groups, ranks),
             i);
      return true;
    }
    define(op.getResult(), partial, Sharding::partialSum());
    return true;
  }
  if (t.isPartialSum()) {
    emit(op, {localOf(table), replicate(indices)}, t);
    return true;
  }
  return false;
}

/// scatter_add of the whole `ids` and `updates` into this rank's rows
/// `localTable` of op's table (split by rows): each id is clamped as the op
/// clamps it and made local by the rank's first row, and the updates of ids
/// outside the rank's rows are zeros (they land, clamped, on a row of the
/// rank and add nothing). Returns the rank's rows of the result.
Value Partitioner::scatterIntoLocalRows(ScatterAddOp op, Value localTable,
                                        Value ids, Value updates) {
  int64_t rows = op.getTable().getType().getDimSize(0);
  int64_t localRowCount = rows / ranks;
  Value clamped = clampToRows(builder, op.getLoc(), ids, rows);
  OwnedIds owned = idsOwnedHere(
      builder, op.getLoc(), clamped, localRowCount,
      rankOffsetOf(localRowCount,
                   cast<RankedTensorType>(ids.getType()).getElementType()));
  return builder.create<ScatterAddOp>(
      op.getLoc(), localTable, owned.local,
      rowsWhere(builder, op.getLoc(), owned.mine, updates));
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
bool Partitioner::rewriteScatterAdd(ScatterAddOp op) {
  Value table = op.getTable(), indices = op.getIndices(),
        updates = op.getUpdates();
  Sharding t = stateOf(table), u = stateOf(updates);
  int64_t indexRank = op.getIndices().getType().getRank();
  if (t.isSharded() && t.dim >= 1) {
    emit(op,
         {localOf(table), replicate(indices),
          shardAlong(updates, indexRank + t.dim - 1)},
         t);
    return true;
  }
  if (t.isSharded()) {
    Value local = scatterIntoLocalRows(op, localOf(table), replicate(indices),
                                       replicate(updates));
    define(op.getResult(), local, t);
    return true;
  }
  bool zeroTable = t.isReplicated() && isZeroSplat(table);
  if (zeroTable && u.isSharded() && u.dim >= indexRank) {
    int64_t d = u.dim - indexRank + 1;
    emit(op, {shardAlong(table, d), replicate(indices), localOf(updates)},
         Sharding::sharded(d));
    return true;
  }
  if (zeroTable && u.isSharded()) {
    emit(op, {localOf(table), shardAlong(indices, u.dim), localOf(updates)},
         Sharding::partialSum());
    return true;
  }
  if (u.isPartialSum() && (zeroTable || t.isPartialSum())) {
    emit(op, {localOf(table), replicate(indices), localOf(updates)},
         Sharding::partialSum());
    return true;
  }
  return false;
}

/// Pooling (and max pooling's gradient) keeps Sharded(d) where the window
/// does not move along d (size 1, stride 1, no padding: the N and C
/// dimensions of NCHW pooling). A sum window is linear (it pads with zeros),
/// so it keeps a PartialSum.
bool Partitioner::rewriteReduceWindow(Operation *op, ArrayRef<int64_t> window,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> low,
                                      ArrayRef<int64_t> high,
                                      ArrayRef<int64_t> dilations,
                                      bool linear) {
  if (std::optional<unsigned> first = firstSharded(op)) {
    int64_t d = stateOf(op->getOperand(*first)).dim;
    if (window[d] != 1 || strides[d] != 1 || low[d] != 0 || high[d] != 0 ||
        dilations[d] != 1)
      return false;
    SmallVector<Value> operands = llvm::map_to_vector(
        op->getOperands(), [&](Value v) { return shardAlong(v, d); });
    emit(op, operands, Sharding::sharded(d));
    return true;
  }
  if (!linear || !stateOf(op->getOperand(0)).isPartialSum())
    return false;
  emit(op, localOf(op->getOperand(0)), Sharding::partialSum());
  return true;
}

/// Rows at a run-time index: another dimension than the rows may be
/// sharded; slicing a PartialSum is linear.
bool Partitioner::rewriteDynamicSlice(DynamicSliceOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isSharded() && state.dim == 0)
    return false;
  emit(op, {localOf(op.getOperand()), replicate(op.getIndex())}, state);
  return true;
}

/// Writing rows at a run-time index: operand and update sharded along the
/// same dimension past the rows, or both PartialSums (the write is linear
/// in the pair).
bool Partitioner::rewriteDynamicUpdateSlice(DynamicUpdateSliceOp op) {
  Value operand = op.getOperand(), update = op.getUpdate();
  Sharding a = stateOf(operand), u = stateOf(update);
  if (a.isSharded() || u.isSharded()) {
    int64_t d = a.isSharded() ? a.dim : u.dim;
    if (d == 0)
      return false;
    emit(op,
         {shardAlong(operand, d), shardAlong(update, d),
          replicate(op.getIndex())},
         Sharding::sharded(d));
    return true;
  }
  if (!a.isPartialSum() || !u.isPartialSum())
    return false;
  emit(op, {localOf(operand), localOf(update), replicate(op.getIndex())},
       Sharding::partialSum());
  return true;
}

/// kiln.attention and kiln.attention_grad work on each entry of their
/// leading dimensions (batch, heads) independently: one of those split
/// splits every operand and result along it (Megatron's attention with the
/// heads over the ranks). A mask dimension of size 1 is broadcast, so the
/// mask is then taken whole.
bool Partitioner::rewriteAttention(Operation *op, int64_t leadingDims) {
  std::optional<unsigned> first = firstSharded(op);
  if (!first)
    return false;
  int64_t d = stateOf(op->getOperand(*first)).dim;
  if (d >= leadingDims)
    return false;
  SmallVector<Value> operands;
  for (Value v : op->getOperands()) {
    if (cast<RankedTensorType>(v.getType()).getDimSize(d) == 1)
      operands.push_back(replicate(v));
    else if (divisible(v, d))
      operands.push_back(shardAlong(v, d));
    else
      return false;
  }
  SmallVector<Sharding> results(op->getNumResults(), Sharding::sharded(d));
  emit(op, operands, results);
  return true;
}

/// A collective that an earlier axis inserted acts within groups of ranks
/// that share this axis's position: on a value split along this axis it
/// leaves the split dimension alone unless it gathers, scatters or
/// exchanges along it; on a PartialSum it is linear (sums and data
/// movement; not max or min).
bool Partitioner::rewriteCollective(Operation *op) {
  Value operand = op->getOperand(0);
  Sharding state = stateOf(operand);
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
      return false;
    emit(op, localOf(operand), state);
    return true;
  }
  if (kind && *kind != CollectiveReduction::Sum &&
      *kind != CollectiveReduction::Mean)
    return false;
  emit(op, localOf(operand), Sharding::partialSum());
  return true;
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
    Sharding state = dim ? Sharding::sharded(*dim) : Sharding::replicated();
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
