//===- DataParallel.cpp - The kiln-data-parallel pass ---------------------===//
//
// Rewrites a single-device function into the SPMD function that N ranks run,
// each on its shard of the batch, so that every rank returns what the
// original returns on the whole batch: data parallelism (PyTorch DDP) as a
// program transformation. It is a batch-dimension partitioner in the spirit
// of GSPMD's sharding propagation, kept to three states:
//
//   Replicated     every rank holds the whole value;
//   Sharded(d)     the value is the concatenation along dimension d of the
//                  ranks' local pieces, in rank order;
//   PartialSum     the value is the sum over the ranks of the local values.
//
// The algorithm, for one function:
//
//  1. The batch arguments are Sharded(0) and take their local types (B / N
//     rows); every other argument is Replicated.
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
//         kiln.all_reduce sum (a linear op of one PartialSum no larger
//         than its result, lr * g, is instead applied to the sum of its
//         operand, so that all readers of g share one exchange);
//       - to Sharded(d): Sharded(d') by kiln.all_to_all, PartialSum by
//         kiln.reduce_scatter, Replicated by taking the rank's rows with no
//         communication at all (a splat constant, an iota or a broadcast
//         is re-made at the local shape; anything else is cut out with
//         kiln.dynamic_slice at kiln.rank * B / N).
//     An op without a rule, or whose operands a rule cannot combine, gets
//     all its operands Replicated and is copied unchanged. That makes the
//     pass total: only how much it communicates depends on how many ops it
//     understands. Region ops (kiln.cond, kiln.while, kiln.for, kiln.fused)
//     and func.call take this path: no state enters a region in this
//     version.
//
//  4. The returned values are made Replicated, so every rank returns the
//     original's results. Ops the rewrite left without uses (full-size
//     constants and broadcasts replaced by their local pieces) are erased.
//
//  5. The all_reduce sums inserted for PartialSums (the gradients, in a
//     training step) are grouped into buckets and started asynchronously
//     (GradientBuckets.cpp).
//
// The gradient of a weight, X^T dY in the backward pass, is a matmul that
// contracts the batch dimension of both operands, hence a PartialSum; its
// all_reduce appears where the gradient is first needed whole, and the
// update reads the reduced gradient.
//
//===----------------------------------------------------------------------===//

#include "GradientBuckets.h"
#include "TargetFunctions.h"

#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/DataParallel.h"
#include "kiln/Passes/Passes.h"

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
#include <limits>
#include <numeric>
#include <optional>

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_DATAPARALLEL
#include "kiln/Passes/Passes.h.inc"
} // namespace kiln
} // namespace mlir

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

/// The rewrite of one function (steps 1-4 of the file comment); step 5 is
/// bucketPartialSums.
class Partitioner {
public:
  Partitioner(func::FuncOp func, const DataParallelConfig &options)
      : func(func), options(options), ranks(options.ranks),
        builder(func.getContext()) {
    group.resize(ranks);
    std::iota(group.begin(), group.end(), 0);
  }

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
  Value replicateThroughLinearOp(Value original);
  Value shardAlong(Value original, int64_t d);
  Value localRows(Value original, int64_t d);
  Value rankOffset(int64_t rowsPerRank);

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
  bool rewriteReduceWindow(Operation *op, ArrayRef<int64_t> window,
                           ArrayRef<int64_t> strides, ArrayRef<int64_t> low,
                           ArrayRef<int64_t> high, ArrayRef<int64_t> dilations,
                           bool linear);
  bool rewriteDynamicSlice(DynamicSliceOp op);
  bool rewriteDynamicUpdateSlice(DynamicUpdateSliceOp op);

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
  const DataParallelConfig &options;
  int64_t ranks;
  SmallVector<int64_t> group;
  OpBuilder builder;
  Block *body = nullptr;

  /// Original value -> the value each rank holds of it, and its state.
  DenseMap<Value, Value> locals;
  DenseMap<Value, Sharding> states;
  /// Conversions made so far, reused by later uses: original value ->
  /// Replicated local value; (original value, d) -> Sharded(d) local value.
  DenseMap<Value, Value> replicated;
  DenseMap<std::pair<Value, int64_t>, Value> shardedAlong;
  /// This rank's number, made once at the top of the body.
  Value rank;

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
    whole = builder.create<AllGatherOp>(loc, local, state.dim, group, ranks);
  } else if (Value recomputed = replicateThroughLinearOp(original)) {
    whole = recomputed;
  } else {
    auto sum = builder.create<AllReduceOp>(loc, local, CollectiveReduction::Sum,
                                           group, ranks);
    partialSumReductions.push_back(sum);
    whole = sum;
  }
  replicated[original] = whole;
  return whole;
}

/// The whole value of the PartialSum `original` computed again from the
/// whole value of its source, when `original` is an elementwise or shape op
/// linear in its one PartialSum operand (the others Replicated) and no
/// smaller than it: lr * g, (1 - beta1) * g, -g, a reshape of g. Summing
/// the source instead costs no more bytes, and every such use of one
/// gradient then shares its single sum: Adam reads g in (1 - beta1) * g and
/// in g * g, which would otherwise sum both. Returns null otherwise.
Value Partitioner::replicateThroughLinearOp(Value original) {
  Operation *def = original.getDefiningOp();
  if (!def || def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !(def->hasTrait<OpTrait::Elementwise>() ||
        isa<ReshapeOp, TransposeOp, BroadcastInDimOp>(def)))
    return {};
  Value source;
  for (Value operand : def->getOperands()) {
    Sharding state = stateOf(operand);
    if (state.isPartialSum()) {
      if (source)
        return {};
      source = operand;
    } else if (!state.isReplicated()) {
      return {};
    }
  }
  auto sourceType = dyn_cast_or_null<RankedTensorType>(
      source ? source.getType() : Type());
  auto resultType = dyn_cast<RankedTensorType>(original.getType());
  if (!sourceType || !resultType || !sourceType.hasStaticShape() ||
      !resultType.hasStaticShape() ||
      !sourceType.getElementType().isIntOrFloat() ||
      !resultType.getElementType().isIntOrFloat() ||
      sourceType.getNumElements() *
              sourceType.getElementTypeBitWidth() >
          resultType.getNumElements() * resultType.getElementTypeBitWidth())
    return {};
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, replicate(operand));
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
    piece = builder.create<AllToAllOp>(loc, local, d, state.dim, group, ranks);
  else if (state.isPartialSum())
    piece = builder.create<ReduceScatterOp>(
        loc, local, CollectiveReduction::Sum, d, group, ranks);
  else
    piece = localRows(original, d);
  shardedAlong[{original, d}] = piece;
  return piece;
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
  if (auto iota = dyn_cast_or_null<IotaOp>(def);
      iota && static_cast<int64_t>(iota.getDimension()) != d)
    return builder.create<IotaOp>(loc, type, iota.getDimension());
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

/// kiln.rank * rowsPerRank, the first row of this rank's piece.
Value Partitioner::rankOffset(int64_t rowsPerRank) {
  Location loc = func.getLoc();
  auto scalar = RankedTensorType::get({}, builder.getI64Type());
  if (!rank) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    rank = builder.create<RankOp>(loc, scalar);
  }
  Value rows = builder.create<ConstantOp>(
      loc,
      DenseElementsAttr::get(scalar, builder.getI64IntegerAttr(rowsPerRank)));
  return builder.create<MulOp>(loc, rank, rows);
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
  if (llvm::any_of(results, [](Sharding s) { return s.isPartialSum(); }) &&
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

/// Elementwise ops (select and cast included): Sharded(d) if an operand is,
/// with every other operand taken along d (a rank-0 select predicate
/// Replicated); otherwise PartialSum where the op is linear in its
/// PartialSum operands.
bool Partitioner::rewriteElementwise(Operation *op) {
  if (std::optional<unsigned> first = firstSharded(op)) {
    int64_t d = stateOf(op->getOperand(*first)).dim;
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      if (cast<RankedTensorType>(v.getType()).getRank() == 0)
        operands.push_back(replicate(v));
      else
        operands.push_back(shardAlong(v, d));
    }
    emit(op, operands, Sharding::sharded(d));
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

/// A reshape keeps Sharded(d) when the elements before dimension d are
/// exactly those before some result dimension e whose size the ranks
/// divide: each rank's block of every outer slice then lands in its block
/// of result dimension e (this includes d staying the outermost factor of
/// e, and e being an outer factor of d). Otherwise the operand is gathered.
bool Partitioner::rewriteReshape(ReshapeOp op) {
  Sharding state = stateOf(op.getOperand());
  if (state.isPartialSum()) {
    emit(op, localOf(op.getOperand()), Sharding::partialSum());
    return true;
  }
  ArrayRef<int64_t> from = op.getOperand().getType().getShape();
  ArrayRef<int64_t> to = op.getType().getShape();
  int64_t before = 1;
  for (int64_t size : from.take_front(state.dim))
    before *= size;
  int64_t prefix = 1;
  for (auto [e, size] : llvm::enumerate(to)) {
    if (prefix == before && size % ranks == 0 && (size > 1 || ranks == 1)) {
      emit(op, localOf(op.getOperand()),
           Sharding::sharded(static_cast<int64_t>(e)));
      return true;
    }
    prefix *= size;
    if (prefix > before)
      break;
  }
  return false;
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
                                        group, ranks);
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
/// PartialSum.
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
  if (i.isSharded()) {
    emit(op, {replicate(table), localOf(indices)}, i);
    return true;
  }
  if (t.isSharded() && t.dim >= 1) {
    int64_t indexRank = op.getIndices().getType().getRank();
    emit(op, {localOf(table), replicate(indices)},
         Sharding::sharded(indexRank + t.dim - 1));
    return true;
  }
  if (t.isPartialSum()) {
    emit(op, {localOf(table), replicate(indices)}, t);
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

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

LogicalResult Partitioner::run() {
  // Checks, before anything changes.
  if (!func.getBody().hasOneBlock())
    return func.emitError("kiln-data-parallel handles functions whose body "
                          "is one block (kiln control flow is structured)");
  WalkResult walk = func.walk([&](Operation *op) {
    if (!isCollective(op))
      return WalkResult::advance();
    op->emitError("kiln-data-parallel rewrites single-device programs, but @")
        << func.getSymName() << " already communicates between ranks here";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  Block &original = func.front();
  llvm::SmallDenseSet<int64_t> batch;
  for (int64_t index : options.batchArgs) {
    if (index < 0 || index >= original.getNumArguments())
      return func.emitError("kiln-data-parallel: batch-args index ")
             << index << " is out of range: @" << func.getSymName() << " has "
             << original.getNumArguments() << " arguments";
    auto type =
        dyn_cast<RankedTensorType>(original.getArgument(index).getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      return func.emitError("kiln-data-parallel: batch argument #")
             << index << " of @" << func.getSymName() << " has type "
             << original.getArgument(index).getType()
             << ", which has no leading dimension to split";
    if (type.getDimSize(0) % ranks != 0)
      return func.emitError("kiln-data-parallel: batch argument #")
             << index << " of @" << func.getSymName() << " has "
             << type.getDimSize(0) << " rows, which " << ranks
             << " ranks cannot split evenly";
    batch.insert(index);
  }

  // 1. The arguments.
  body = new Block();
  for (BlockArgument arg : original.getArguments()) {
    Sharding state = batch.contains(arg.getArgNumber())
                         ? Sharding::sharded(0)
                         : Sharding::replicated();
    define(arg,
           body->addArgument(localType(arg.getType(), state), arg.getLoc()),
           state);
  }

  // 2-3. The body, op by op.
  builder.setInsertionPointToEnd(body);
  for (Operation &op : original.without_terminator())
    rewrite(&op);

  // 4. The results, whole on every rank.
  Operation *terminator = original.getTerminator();
  SmallVector<Value> results = llvm::map_to_vector(
      terminator->getOperands(), [&](Value v) { return replicate(v); });
  builder.clone(*terminator)->setOperands(results);

  original.dropAllReferences();
  original.erase();
  func.getBody().push_back(body);
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         body->getArgumentTypes(),
                                         func.getFunctionType().getResults()));

  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body))) {
    if (!isOpTriviallyDead(&op))
      continue;
    carriers.erase(&op);
    op.erase();
  }

  // 5. Buckets.
  double cap = std::floor(options.bucketMb * 1024.0 * 1024.0);
  int64_t capBytes = cap >= 9.0e18 ? std::numeric_limits<int64_t>::max()
                                   : static_cast<int64_t>(cap);
  bucketPartialSums(*body, partialSumReductions, carriers, capBytes,
                    options.overlap);
  return success();
}

} // namespace

LogicalResult
mlir::kiln::partitionDataParallel(func::FuncOp func,
                                  const DataParallelConfig &options) {
  if (options.ranks < 1)
    return func.emitError("kiln-data-parallel needs ranks >= 1, not ")
           << options.ranks;
  if (options.batchArgs.empty())
    return func.emitError("kiln-data-parallel needs the batch arguments to "
                          "split: batch-args=<i>,<j>,...");
  if (!(options.bucketMb >= 0))
    return func.emitError("kiln-data-parallel: bucket-mb must be >= 0, not ")
           << options.bucketMb;
  // A caller would still pass the whole batch.
  if (auto module = func->getParentOfType<ModuleOp>();
      module && !SymbolTable::symbolKnownUseEmpty(func, module))
    return func.emitError("kiln-data-parallel: @")
           << func.getSymName()
           << " is called in this module, and its callers would pass the "
              "whole batch; rewrite the caller instead (function=<name>)";
  return Partitioner(func, options).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct DataParallelPass : kiln::impl::DataParallelBase<DataParallelPass> {
  using DataParallelBase::DataParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError("kiln-data-parallel needs the number of ranks: "
                       "--kiln-data-parallel=\"ranks=N batch-args=...\" "
                       "with N >= 1");
      return signalPassFailure();
    }
    if (batchArgs.empty()) {
      module.emitError("kiln-data-parallel needs the batch arguments to "
                       "split: --kiln-data-parallel=\"ranks=N "
                       "batch-args=<i>,<j>,...\"");
      return signalPassFailure();
    }
    if (!(bucketMb >= 0)) {
      module.emitError("kiln-data-parallel: bucket-mb must be >= 0, not ")
          << bucketMb;
      return signalPassFailure();
    }
    DataParallelConfig options;
    options.ranks = ranks;
    options.batchArgs.assign(batchArgs.begin(), batchArgs.end());
    options.bucketMb = bucketMb;
    options.overlap = overlap;

    FailureOr<SmallVector<func::FuncOp>> targets =
        targetFunctions(module, functionName, "kiln-data-parallel");
    if (failed(targets))
      return signalPassFailure();
    for (func::FuncOp f : *targets)
      if (failed(partitionDataParallel(f, options)))
        return signalPassFailure();
  }
};
} // namespace
