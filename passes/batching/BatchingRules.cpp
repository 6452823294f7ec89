//===- BatchingRules.cpp - The batched form of every kiln op --------------===//
//
// One rule per op, and the table that maps op types to rules. A rule reads
// the batched counterparts of its op's operands (batch as dim 0; an
// unbatched operand is the same in every lane) and emits the op's batched
// computation. The kinds:
//
//  - Elementwise ops (and select, cast, bitcast): the unbatched operands
//    are broadcast along the batch, and the op applies to [B, ...] as is.
//  - Ops with dimension attributes (shapes, reductions, sort, cumsum,
//    pooling): every dim moves up by one and the batch dim is added
//    untouched (a window of 1, no padding, stride 1).
//  - matmul: a batched lhs against an unbatched rhs is one product with
//    B*M rows; an unbatched lhs against a batched rhs one with B*N columns;
//    both batched, a batched product, or, for a contraction of one element
//    (a per-example weight gradient x^T dy), a broadcast multiply. So a
//    per-example gradient of a dense layer becomes what a hand-batched
//    version would run.
//  - conv: a batched input folds the batch into N; a batched weight
//    becomes B times the groups (the input's batch moved into channels).
//  - gather, scatter_add and the dynamic slices: per-lane indices are
//    offset into the flattened batched operand (after the clamping the ops
//    define), so each lane reads and writes its own rows; an unbatched
//    index on a batched operand moves the batch behind the rows.
//  - attention and its gradient: the batch is one more leading dim.
//  - collectives: the batched tensor is exchanged as it is, its dims
//    moved up by one.
//  - the stacks of a derived while gradient: each row holds every lane's
//    value, at the trip counter's row, which must be the same in every
//    lane.
//  - kiln.cond, kiln.for, kiln.while: ControlFlowBatching.cpp.
//
// Ops without a rule are rejected at the op; every kiln op with operands
// has one (GradientApi.EveryKilnOpHasABatchingRule).
//
//===----------------------------------------------------------------------===//

#include "Batching.h"

#include "kiln/Passes/Batching.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::batching;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

RankedTensorType withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, tensorType(like).getElementType());
}

/// Shorthands, at the rule's op.
struct Emit {
  explicit Emit(RuleContext &context)
      : b(context.getBuilder()), loc(context.getLoc()) {}

  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (tensorType(x).getShape() == shape)
      return x;
    return b.create<ReshapeOp>(loc, withShape(x, shape), x);
  }
  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
      return x;
    return b.create<TransposeOp>(loc, x, permutation);
  }
  /// A rank-0 or [B]-shaped i64 constant of `value`s.
  Value splat(RankedTensorType type, int64_t value) {
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(
                 type, b.getIntegerAttr(type.getElementType(), value)));
  }
  /// Each lane's start in a flattened [B * rows, ...] operand, as an index
  /// tensor of `shape` ([B, ...]) and element type `element`.
  Value laneOffsets(ArrayRef<int64_t> shape, Type element, int64_t rows) {
    auto type = RankedTensorType::get(shape, element);
    Value lane = b.create<IotaOp>(loc, type, 0);
    return b.create<MulOp>(loc, lane, splat(type, rows));
  }
  /// clamp(x, low, high) elementwise, with scalar bounds.
  Value clamp(Value x, int64_t low, int64_t high) {
    auto type = tensorType(x);
    Value lo = b.create<MaxOp>(loc, x, splat(type, low));
    return b.create<MinOp>(loc, lo, splat(type, high));
  }

  OpBuilder &b;
  Location loc;
};

/// The op rebuilt with `operands`, `attrs` and its result types with the
/// batch dim in front.
Operation *rebuild(RuleContext &context, ValueRange operands,
                   const NamedAttrList &attrs) {
  Operation *op = context.getOp();
  OperationState state(context.getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(attrs.getAttrs());
  for (Type type : op->getResultTypes())
    state.addTypes(batchedType(type, context.size()));
  return context.getBuilder().create(state);
}

void setResults(RuleContext &context, Operation *batched) {
  for (auto [index, result] : llvm::enumerate(batched->getResults()))
    context.setResult(index, result);
}

/// Every operand batched (unbatched ones broadcast).
SmallVector<Value> allBatched(RuleContext &context) {
  SmallVector<Value> operands;
  for (unsigned i = 0; i < context.getOp()->getNumOperands(); ++i)
    operands.push_back(context.materialized(i));
  return operands;
}

/// `dims` each moved up by one past the batch dim, after `prepend` if
/// given.
DenseI64ArrayAttr shifted(OpBuilder &b, ArrayRef<int64_t> dims,
                          std::optional<int64_t> prepend = std::nullopt) {
  SmallVector<int64_t> values;
  if (prepend)
    values.push_back(*prepend);
  for (int64_t d : dims)
    values.push_back(d + 1);
  return b.getDenseI64ArrayAttr(values);
}

/// `values` with `first` in front.
DenseI64ArrayAttr prepended(OpBuilder &b, ArrayRef<int64_t> values,
                            int64_t first) {
  SmallVector<int64_t> result{first};
  llvm::append_range(result, values);
  return b.getDenseI64ArrayAttr(result);
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The unbatched operands broadcast; a rank-0 predicate of select stays
/// rank 0 unbatched and is spread over the values' dims when batched.
static LogicalResult batchElementwise(Operation *op, RuleContext &context) {
  SmallVector<Value> operands;
  auto select = dyn_cast<SelectOp>(op);
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value operand = op->getOperand(i);
    bool scalarPredicate =
        select && i == 0 && tensorType(operand).getRank() == 0 &&
        tensorType(select.getOnTrue()).getRank() > 0;
    if (!scalarPredicate) {
      operands.push_back(context.materialized(i));
      continue;
    }
    Value batched = context.batched(i);
    if (!batched) {
      operands.push_back(operand);
      continue;
    }
    // [B] -> [B, shape...].
    auto valueType = batchedType(select.getOnTrue().getType(), context.size());
    operands.push_back(context.getBuilder().create<BroadcastInDimOp>(
        context.getLoc(),
        RankedTensorType::get(valueType.getShape(),
                              tensorType(operand).getElementType()),
        batched, SmallVector<int64_t>{0}));
  }
  setResults(context, rebuild(context, operands,
                              NamedAttrList(op->getAttrDictionary())));
  return success();
}

//===----------------------------------------------------------------------===//
// Dimension attributes
//===----------------------------------------------------------------------===//

/// An op whose attributes `names` list dims (moved up by one; `withBatch`
/// puts 0 in front where the list covers every result dim) and whose
/// per-dim attributes `perDim` get `first` for the batch dim.
static LogicalResult
batchWithDims(RuleContext &context, ArrayRef<StringRef> dimLists,
              ArrayRef<StringRef> dimScalars,
              ArrayRef<std::pair<StringRef, int64_t>> perDim,
              bool batchFirstInLists = false,
              std::optional<SmallVector<Value>> operands = std::nullopt) {
  Operation *op = context.getOp();
  OpBuilder &b = context.getBuilder();
  NamedAttrList attrs(op->getAttrDictionary());
  for (StringRef name : dimLists) {
    auto dims = cast<DenseI64ArrayAttr>(attrs.get(name));
    attrs.set(name, shifted(b, dims.asArrayRef(),
                            batchFirstInLists ? std::optional<int64_t>(0)
                                              : std::nullopt));
  }
  for (StringRef name : dimScalars) {
    auto dim = cast<IntegerAttr>(attrs.get(name));
    attrs.set(name, b.getIntegerAttr(dim.getType(), dim.getInt() + 1));
  }
  for (auto [name, first] : perDim)
    attrs.set(name, prepended(b, cast<DenseI64ArrayAttr>(attrs.get(name))
                                     .asArrayRef(),
                              first));
  setResults(context,
             rebuild(context, operands ? *operands : allBatched(context),
                     attrs));
  return success();
}

static LogicalResult batchReshape(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {}, {});
}

static LogicalResult batchBroadcastInDim(Operation *, RuleContext &context) {
  return batchWithDims(context, {"dims"}, {}, {}, /*batchFirst=*/true);
}

static LogicalResult batchTranspose(Operation *, RuleContext &context) {
  return batchWithDims(context, {"permutation"}, {}, {}, /*batchFirst=*/true);
}

static LogicalResult batchSlice(Operation *op, RuleContext &context) {
  return batchWithDims(context, {}, {},
                       {{"start", 0}, {"limit", context.size()},
                        {"stride", 1}});
}

static LogicalResult batchConcat(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {"dimension"}, {});
}

static LogicalResult batchReverseOrReduce(Operation *, RuleContext &context) {
  return batchWithDims(context, {"dims"}, {}, {});
}

static LogicalResult batchOneDim(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {"dim"}, {});
}

static LogicalResult batchReduceWindow(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {},
                       {{"window", 1},
                        {"strides", 1},
                        {"padding_low", 0},
                        {"padding_high", 0},
                        {"dilations", 1}});
}

/// A batched padding value: the operand padded with zeros, plus a mask of
/// the padded positions times each lane's value.
static LogicalResult batchPad(Operation *op, RuleContext &context) {
  auto pad = cast<PadOp>(op);
  if (!context.batched(1))
    return batchWithDims(
        context, {}, {}, {{"low", 0}, {"high", 0}, {"interior", 0}}, false,
        SmallVector<Value>{context.batched(0), pad.getPaddingValue()});
  OpBuilder &b = context.getBuilder();
  Location loc = context.getLoc();
  Value operand = context.materialized(0);
  auto valueType = tensorType(pad.getPaddingValue());
  auto zero = [&](RankedTensorType type, double v) -> Value {
    Type element = type.getElementType();
    Attribute attr = isa<FloatType>(element)
                         ? Attribute(b.getFloatAttr(element, v))
                         : Attribute(b.getIntegerAttr(element, (int64_t)v));
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, attr));
  };
  auto low = prepended(b, pad.getLow(), 0);
  auto high = prepended(b, pad.getHigh(), 0);
  auto interior = prepended(b, pad.getInterior(), 0);
  Value padded = b.create<PadOp>(loc, operand, zero(valueType, 0.0), low,
                                 high, interior);
  Value mask = b.create<PadOp>(
      loc, zero(cast<RankedTensorType>(operand.getType()), 0.0),
      zero(valueType, 1.0), low, high, interior);
  auto resultType = tensorType(padded);
  SmallVector<int64_t> dims{0};
  Value values =
      b.create<BroadcastInDimOp>(loc, resultType, context.batched(1), dims);
  context.setResult(0, b.create<AddOp>(loc, padded,
                                       b.create<MulOp>(loc, mask, values)));
  return success();
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

static LogicalResult batchMatmul(Operation *op, RuleContext &context) {
  auto matmul = cast<MatmulOp>(op);
  Emit e(context);
  int64_t size = context.size();
  TypeAttr resultElement = matmul.getResultElementTypeAttr();
  auto product = [&](Value lhs, Value rhs) -> Value {
    return e.b.create<MatmulOp>(e.loc, lhs, rhs, resultElement);
  };
  ArrayRef<int64_t> lhsShape = matmul.getLhs().getType().getShape();
  ArrayRef<int64_t> rhsShape = matmul.getRhs().getType().getShape();
  ArrayRef<int64_t> outShape = matmul.getType().getShape();
  SmallVector<int64_t> batchedOut{size};
  llvm::append_range(batchedOut, outShape);
  Value lhs = context.batched(0), rhs = context.batched(1);
  if (lhsShape.size() == 2 && lhs && !rhs) {
    // [B, M, K] as [B*M, K] times [K, N].
    Value rows = e.reshape(lhs, {size * lhsShape[0], lhsShape[1]});
    context.setResult(0, e.reshape(product(rows, matmul.getRhs()),
                                   batchedOut));
    return success();
  }
  if (lhsShape.size() == 2 && !lhs && rhs) {
    // [M, K] times [B, K, N] as [K, B*N].
    Value columns = e.reshape(e.transpose(rhs, {1, 0, 2}),
                              {rhsShape[0], size * rhsShape[1]});
    Value wide = e.reshape(product(matmul.getLhs(), columns),
                           {outShape[0], size, outShape[1]});
    context.setResult(0, e.transpose(wide, {1, 0, 2}));
    return success();
  }
  if (lhsShape.size() == 2) {
    if (lhsShape[1] == 1 && !resultElement) {
      // A contraction of one element is an outer product per lane (a
      // per-example weight gradient x^T dy): a broadcast multiply, which
      // fuses with its neighbours, rather than B products of k = 1.
      auto outType =
          RankedTensorType::get(batchedOut, matmul.getType().getElementType());
      // [B, M, 1] and [B, 1, N] stretched along their size-1 dims.
      SmallVector<int64_t> same{0, 1, 2};
      Value column = e.b.create<BroadcastInDimOp>(e.loc, outType, lhs, same);
      Value row = e.b.create<BroadcastInDimOp>(e.loc, outType, rhs, same);
      context.setResult(0, e.b.create<MulOp>(e.loc, column, row));
      return success();
    }
    context.setResult(0, product(lhs, rhs));
    return success();
  }
  // Rank 3: the two batch dims merged.
  Value l = e.reshape(context.materialized(0),
                      {size * lhsShape[0], lhsShape[1], lhsShape[2]});
  Value r = e.reshape(context.materialized(1),
                      {size * rhsShape[0], rhsShape[1], rhsShape[2]});
  context.setResult(0, e.reshape(product(l, r), batchedOut));
  return success();
}

static LogicalResult batchConv(Operation *op, RuleContext &context) {
  auto conv = cast<ConvOp>(op);
  Emit e(context);
  int64_t size = context.size();
  ArrayRef<int64_t> xShape = conv.getInput().getType().getShape();
  ArrayRef<int64_t> wShape = conv.getWeight().getType().getShape();
  ArrayRef<int64_t> yShape = conv.getType().getShape();
  int64_t rank = xShape.size();
  auto build = [&](Value x, Value w, int64_t groups) -> Value {
    return e.b.create<ConvOp>(e.loc, x, w, conv.getStrides(),
                              conv.getPaddingLow(), conv.getPaddingHigh(),
                              conv.getLhsDilation(), conv.getRhsDilation(),
                              groups);
  };
  SmallVector<int64_t> batchedOut{size};
  llvm::append_range(batchedOut, yShape);
  if (!context.batched(1)) {
    // The batch folded into N.
    SmallVector<int64_t> merged{size * xShape[0]};
    llvm::append_range(merged, xShape.drop_front());
    Value y = build(e.reshape(context.batched(0), merged), conv.getWeight(),
                    conv.getGroups());
    context.setResult(0, e.reshape(y, batchedOut));
    return success();
  }
  // A batched weight: lane b's channels become groups b*G ... b*G + G-1.
  SmallVector<int64_t> toChannels{1, 0};
  for (int64_t d = 2; d <= rank; ++d)
    toChannels.push_back(d);
  Value x = e.transpose(context.materialized(0), toChannels);
  SmallVector<int64_t> xMerged{xShape[0], size * xShape[1]};
  llvm::append_range(xMerged, xShape.drop_front(2));
  SmallVector<int64_t> wMerged{size * wShape[0]};
  llvm::append_range(wMerged, wShape.drop_front());
  Value y = build(e.reshape(x, xMerged), e.reshape(context.batched(1), wMerged),
                  size * conv.getGroups());
  SmallVector<int64_t> split{yShape[0], size, yShape[1]};
  llvm::append_range(split, yShape.drop_front(2));
  context.setResult(0, e.transpose(e.reshape(y, split), toChannels));
  return success();
}

//===----------------------------------------------------------------------===//
// Gathers and dynamic slices
//===----------------------------------------------------------------------===//

/// `table` [B, N, r...] as [B*N, r...].
static Value flattenLanes(Emit &e, Value table) {
  ArrayRef<int64_t> shape = tensorType(table).getShape();
  SmallVector<int64_t> flat{shape[0] * shape[1]};
  llvm::append_range(flat, shape.drop_front(2));
  return e.reshape(table, flat);
}

/// Batched `indices` [B, i...] into rows of a table of `rows` rows,
/// clamped as gather clamps them, offset into the flattened batched table.
static Value laneRows(Emit &e, Value indices, int64_t rows) {
  auto type = tensorType(indices);
  return e.b.create<AddOp>(
      e.loc, e.clamp(indices, 0, rows - 1),
      e.laneOffsets(type.getShape(), type.getElementType(), rows));
}

static LogicalResult batchGather(Operation *op, RuleContext &context) {
  auto gather = cast<GatherOp>(op);
  Emit e(context);
  Value table = context.batched(0), indices = context.batched(1);
  if (!table) {
    context.setResult(0, e.b.create<GatherOp>(e.loc, gather.getTable(),
                                              indices));
    return success();
  }
  int64_t rows = gather.getTable().getType().getDimSize(0);
  Value all = context.materialized(1);
  context.setResult(0, e.b.create<GatherOp>(e.loc, flattenLanes(e, table),
                                            laneRows(e, all, rows)));
  return success();
}

static LogicalResult batchScatterAdd(Operation *op, RuleContext &context) {
  auto scatter = cast<ScatterAddOp>(op);
  Emit e(context);
  int64_t rows = scatter.getTable().getType().getDimSize(0);
  Value table = flattenLanes(e, context.materialized(0));
  Value result = e.b.create<ScatterAddOp>(
      e.loc, table, laneRows(e, context.materialized(1), rows),
      context.materialized(2));
  SmallVector<int64_t> shape{context.size()};
  llvm::append_range(shape, scatter.getType().getShape());
  context.setResult(0, e.reshape(result, shape));
  return success();
}

/// The permutation that swaps dims 0 and 1.
static SmallVector<int64_t> swapFirstTwo(int64_t rank) {
  SmallVector<int64_t> perm{1, 0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  return perm;
}

/// Each lane's clamped start, [B] i64, for a slice of `size` rows out of
/// `rows`.
static Value laneStarts(Emit &e, Value index, int64_t rows, int64_t size) {
  return e.clamp(index, 0, rows - size);
}

static LogicalResult batchDynamicSlice(Operation *op, RuleContext &context) {
  auto slice = cast<DynamicSliceOp>(op);
  Emit e(context);
  int64_t size = slice.getSize();
  int64_t rows = slice.getOperand().getType().getDimSize(0);
  int64_t rank = slice.getOperand().getType().getRank() + 1;
  if (!context.batched(1)) {
    // The batch behind the rows: [N, B, r...].
    Value moved = e.transpose(context.batched(0), swapFirstTwo(rank));
    Value picked = e.b.create<DynamicSliceOp>(e.loc, moved, slice.getIndex(),
                                              size);
    context.setResult(0, e.transpose(picked, swapFirstTwo(rank)));
    return success();
  }
  // Rows start + r, r < size, per lane: a gather.
  Value start = laneStarts(e, context.batched(1), rows, size);
  int64_t lanes = context.size();
  auto rowType = RankedTensorType::get({lanes, size}, e.b.getI64Type());
  Value offsets = e.b.create<IotaOp>(e.loc, rowType, 1);
  Value rowsRead = e.b.create<AddOp>(
      e.loc, offsets,
      e.b.create<BroadcastInDimOp>(e.loc, rowType, start,
                                   SmallVector<int64_t>{0}));
  if (Value operand = context.batched(0)) {
    Value flat = flattenLanes(e, operand);
    Value lane = e.laneOffsets({lanes, size}, e.b.getI64Type(), rows);
    context.setResult(0, e.b.create<GatherOp>(
                             e.loc, flat,
                             e.b.create<AddOp>(e.loc, rowsRead, lane)));
    return success();
  }
  context.setResult(0, e.b.create<GatherOp>(e.loc, slice.getOperand(),
                                            rowsRead));
  return success();
}

static LogicalResult batchDynamicUpdateSlice(Operation *op,
                                             RuleContext &context) {
  auto update = cast<DynamicUpdateSliceOp>(op);
  Emit e(context);
  int64_t lanes = context.size();
  int64_t rows = update.getOperand().getType().getDimSize(0);
  int64_t size = update.getUpdate().getType().getDimSize(0);
  int64_t rank = update.getOperand().getType().getRank() + 1;
  Value operand = context.materialized(0);
  Value patch = context.materialized(1);
  if (!context.batched(2)) {
    Value moved = e.b.create<DynamicUpdateSliceOp>(
        e.loc, e.transpose(operand, swapFirstTwo(rank)),
        e.transpose(patch, swapFirstTwo(rank)), update.getIndex());
    context.setResult(0, e.transpose(moved, swapFirstTwo(rank)));
    return success();
  }
  // Row p of lane b takes update row p - start_b where start_b <= p <
  // start_b + size.
  Value start = laneStarts(e, context.batched(2), rows, size);
  auto posType = RankedTensorType::get({lanes, rows}, e.b.getI64Type());
  Value position = e.b.create<IotaOp>(e.loc, posType, 1);
  Value from = e.b.create<SubOp>(
      e.loc, position,
      e.b.create<BroadcastInDimOp>(e.loc, posType, start,
                                   SmallVector<int64_t>{0}));
  Value inside = e.b.create<AndOp>(
      e.loc,
      e.b.create<CompareOp>(e.loc, CompareDirection::ge, from,
                            e.splat(posType, 0)),
      e.b.create<CompareOp>(e.loc, CompareDirection::lt, from,
                            e.splat(posType, size)));
  Value source = e.b.create<AddOp>(
      e.loc, e.clamp(from, 0, size - 1),
      e.laneOffsets({lanes, rows}, e.b.getI64Type(), size));
  Value moved = e.b.create<GatherOp>(e.loc, flattenLanes(e, patch), source);
  auto resultType = tensorType(operand);
  Value mask = e.b.create<BroadcastInDimOp>(
      e.loc, RankedTensorType::get(resultType.getShape(), e.b.getI1Type()),
      inside, SmallVector<int64_t>{0, 1});
  context.setResult(0, e.b.create<SelectOp>(e.loc, mask, moved, operand));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// An attention's mask (operand `index`, null if absent) with the batch as
/// one more leading dim: an unbatched mask gets a size-1 dim there, which
/// the op broadcasts.
static Value batchedMask(Emit &e, RuleContext &context, Value mask,
                         unsigned index) {
  if (!mask)
    return mask;
  if (Value batched = context.batched(index))
    return batched;
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, tensorType(mask).getShape());
  return e.reshape(mask, shape);
}

/// The batch as one more leading dim of query, key, value and the mask.
static LogicalResult batchAttention(Operation *op, RuleContext &context) {
  auto attention = cast<AttentionOp>(op);
  Emit e(context);
  Value mask = batchedMask(e, context, attention.getMask(), 3);
  auto batched = e.b.create<AttentionOp>(
      e.loc, context.materialized(0), context.materialized(1),
      context.materialized(2), mask, attention.getScaleAttr(),
      attention.getCausalAttr());
  setResults(context, batched);
  return success();
}

/// The gradient of attention: as attention, every operand with the batch
/// as one more leading dim, an unbatched mask shared through a leading 1.
static LogicalResult batchAttentionGrad(Operation *op, RuleContext &context) {
  auto grad = cast<AttentionGradOp>(op);
  Emit e(context);
  Value mask = batchedMask(e, context, grad.getMask(), 6);
  auto batched = e.b.create<AttentionGradOp>(
      e.loc, context.materialized(0), context.materialized(1),
      context.materialized(2), context.materialized(3),
      context.materialized(4), context.materialized(5), mask,
      grad.getScaleAttr(), grad.getCausalAttr());
  setResults(context, batched);
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Every lane's tensor takes part in the same exchange between the ranks: an
// elementwise collective (all_reduce, broadcast, permute, a wait) applies
// to the batched tensor as it is, and the ones that split or join along a
// dim (all_gather, reduce_scatter, all_to_all) move it up by one. The
// ranks still execute the same collectives in the same order.

static LogicalResult batchCollective(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {}, {});
}

static LogicalResult batchCollectiveAlongDim(Operation *,
                                             RuleContext &context) {
  return batchWithDims(context, {}, {"dimension"}, {});
}

static LogicalResult batchAllToAll(Operation *, RuleContext &context) {
  return batchWithDims(context, {}, {"split_dim", "concat_dim"}, {});
}

//===----------------------------------------------------------------------===//
// Stacks
//===----------------------------------------------------------------------===//

// The stacks of a while loop's derived gradient: each row holds every
// lane's value (batchedType puts the batch behind the rows). The rows are
// indexed by the loop's trip counter, so this works while the counter is
// the same in every lane; batchWhile refuses a loop whose trip count
// differs between lanes before its stack ops are reached.

static LogicalResult refuseBatchedIndex(RuleContext &context, unsigned index) {
  if (!context.batched(index))
    return success();
  return context.getOp()->emitOpError()
         << "cannot be batched: its row index differs between lanes";
}

/// Capacity for the largest request of any lane.
static LogicalResult batchStackReserve(Operation *op, RuleContext &context) {
  auto reserve = cast<StackReserveOp>(op);
  Emit e(context);
  Value rows = reserve.getRows();
  if (Value perLane = context.batched(1))
    rows = e.b.create<ReduceMaxOp>(e.loc, perLane, SmallVector<int64_t>{0});
  context.setResult(0, e.b.create<StackReserveOp>(
                           e.loc, context.materialized(0), rows));
  return success();
}

static LogicalResult batchStackPush(Operation *op, RuleContext &context) {
  auto push = cast<StackPushOp>(op);
  if (failed(refuseBatchedIndex(context, 1)))
    return failure();
  Emit e(context);
  context.setResult(0, e.b.create<StackPushOp>(
                           e.loc, context.materialized(0), push.getIndex(),
                           context.materialized(2)));
  return success();
}

static LogicalResult batchStackRead(Operation *op, RuleContext &context) {
  auto read = cast<StackReadOp>(op);
  if (failed(refuseBatchedIndex(context, 1)))
    return failure();
  Emit e(context);
  context.setResult(0, e.b.create<StackReadOp>(
                           e.loc, batchedType(read.getType(), context.size()),
                           context.materialized(0), read.getIndex()));
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

namespace {
class RuleTable {
public:
  RuleTable() {
    add<ReshapeOp>(batchReshape);
    add<BroadcastInDimOp>(batchBroadcastInDim);
    add<TransposeOp>(batchTranspose);
    add<SliceOp>(batchSlice);
    add<ConcatOp>(batchConcat);
    add<ReverseOp, ReduceSumOp, ReduceMaxOp, ReduceMeanOp>(
        batchReverseOrReduce);
    add<ArgMaxOp, ArgMinOp, SortOp, CumsumOp>(batchOneDim);
    add<ReduceWindowOp, ReduceWindowMaxGradOp>(batchReduceWindow);
    add<PadOp>(batchPad);
    add<SelectOp, CastOp, BitcastOp>(batchElementwise);
    add<MatmulOp>(batchMatmul);
    add<ConvOp>(batchConv);
    add<GatherOp>(batchGather);
    add<ScatterAddOp>(batchScatterAdd);
    add<DynamicSliceOp>(batchDynamicSlice);
    add<DynamicUpdateSliceOp>(batchDynamicUpdateSlice);
    add<AttentionOp>(batchAttention);
    add<AttentionGradOp>(batchAttentionGrad);
    add<AllReduceOp, AllReduceStartOp, CollectiveBroadcastOp,
        CollectivePermuteOp, CollectiveWaitOp>(batchCollective);
    add<AllGatherOp, AllGatherStartOp, ReduceScatterOp, ReduceScatterStartOp>(
        batchCollectiveAlongDim);
    add<AllToAllOp>(batchAllToAll);
    add<StackReserveOp>(batchStackReserve);
    add<StackPushOp>(batchStackPush);
    add<StackReadOp>(batchStackRead);
    add<CondOp>(batchCond);
    add<ForOp>(batchFor);
    add<WhileOp>(batchWhile);
  }

  BatchingRule lookup(Operation *op) const {
    if (op->hasTrait<OpTrait::Elementwise>())
      return batchElementwise;
    return rules.lookup(op->getName().getTypeID());
  }

  BatchingRule lookup(OperationName name) const {
    if (name.hasTrait<OpTrait::Elementwise>())
      return batchElementwise;
    return rules.lookup(name.getTypeID());
  }

private:
  template <typename... OpTys>
  void add(BatchingRule rule) {
    (rules.insert({TypeID::get<OpTys>(), rule}), ...);
  }

  llvm::DenseMap<TypeID, BatchingRule> rules;
};

const RuleTable &table() {
  static const RuleTable rules;
  return rules;
}
} // namespace

BatchingRule batching::lookupBatchingRule(Operation *op) {
  if (!op->getName().isRegistered())
    return nullptr;
  return table().lookup(op);
}

bool mlir::kiln::hasBatchingRule(OperationName name) {
  return name.isRegistered() && table().lookup(name) != nullptr;
}
