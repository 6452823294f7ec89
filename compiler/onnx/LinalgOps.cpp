//===- LinalgOps.cpp - ONNX products, softmax and normalizations ----------===//
//
// MatMul and Gemm map onto kiln.matmul (numpy's batching made explicit, see
// Emit.h). Softmax and the normalizations are built from reductions and
// elementwise ops, with the maximum subtracted before exp and the variance
// computed as the mean of squared deviations, as numerically careful
// implementations do; kiln's fusion pass merges them back into few loops.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"
#include "LoopBuilder.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

LogicalResult matmulOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value a = ctx.input(0), c = ctx.input(1);
  if (elementTypeOf(a) != elementTypeOf(c) || isBool(a))
    return ctx.fail("the operands must be numbers of one element type");
  if (!matmulShape(shapeOf(a), shapeOf(c)))
    return ctx.fail("the operand shapes do not agree for a matrix product");
  return ctx.setResults(matmul(ctx.b, ctx.loc, a, c));
}

/// The zero point input `zeroPoint` of the 8-bit matrix `v` of
/// MatMulInteger or QLinearMatMul as i32, shaped to broadcast against the
/// product: [] for a scalar, [M, 1] for one per row of A (`perRow`), [N]
/// for one per column of B. Null where there is none or it is a constant
/// zero (symmetrically quantized weights).
FailureOr<Value> zeroPointInt32(NodeContext &ctx, Value v, unsigned zeroPoint,
                                bool perRow) {
  Type elementType = elementTypeOf(v);
  if (!isa<IntegerType>(elementType) ||
      elementType.getIntOrFloatBitWidth() != 8)
    return ctx.fail("the matrices must be int8 or uint8");
  if (!ctx.hasInput(zeroPoint))
    return Value();
  Value zp = ctx.input(zeroPoint);
  if (elementTypeOf(zp) != elementType)
    return ctx.fail("a zero point must have its matrix's element type");
  auto constant = zp.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (numElementsOf(shapeOf(zp)) == 1 && rankOf(zp) <= 1) {
    zp = reshape(ctx.b, ctx.loc, zp, {});
  } else if (rankOf(zp) == 1 && rankOf(v) >= 2 &&
             shapeOf(zp)[0] == shapeOf(v)[rankOf(v) - (perRow ? 2 : 1)]) {
    if (perRow)
      zp = reshape(ctx.b, ctx.loc, zp, {shapeOf(zp)[0], 1});
  } else {
    return ctx.fail("a zero point must be a scalar or have one entry per " +
                    Twine(perRow ? "row of A" : "column of B"));
  }
  if (dense && llvm::all_of(dense.getValues<APInt>(),
                            [](const APInt &value) { return value.isZero(); }))
    return Value();
  return cast(ctx.b, ctx.loc, zp, ctx.b.getI32Type());
}

/// The sums of the 8-bit matrix `v` along its dim `axis` as i32, that dim
/// kept with size 1; computed here for a constant `v` (weights), where
/// they cost nothing at run time.
Value sumsInt32(OpBuilder &b, Location loc, Value v, int64_t axis) {
  Type i32 = b.getI32Type();
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!dense)
    return reduce(b, loc, Reduction::Sum, cast(b, loc, v, i32), {axis},
                  /*keepDims=*/true);
  ArrayRef<int64_t> shape = shapeOf(v);
  int64_t size = shape[axis];
  int64_t inner = numElementsOf(shape.drop_front(axis + 1));
  SmallVector<uint32_t> sums(numElementsOf(shape) / std::max<int64_t>(size, 1),
                             0);
  bool isUnsigned = elementTypeOf(v).isUnsignedInteger();
  int64_t index = 0;
  for (const APInt &value : dense.getValues<APInt>()) {
    int64_t outer = index / (size * inner), column = index % inner;
    sums[outer * inner + column] += static_cast<uint32_t>(
        isUnsigned ? value.getZExtValue() : value.getSExtValue());
    ++index;
  }
  SmallVector<int64_t> sumShape(shape);
  sumShape[axis] = 1;
  SmallVector<int64_t> values;
  for (uint32_t sum : sums)
    values.push_back(static_cast<int32_t>(sum));
  return constantInts(b, loc, i32, sumShape, values);
}

/// (A - a_zero_point) x (B - b_zero_point) in i32, which holds every
/// product of two 9-bit differences and sums them exactly until the i32
/// range is left (ONNX leaves overflow unspecified; kiln wraps). Computed
/// as int8 GEMM libraries do: the product of the 8-bit matrices widened to
/// i32 (kiln.matmul's `-> i32`), minus a * colsum(B) and b * rowsum(A),
/// plus K * a * b: the same sum, term by term, in the same wrapping i32.
FailureOr<Value> integerProduct(NodeContext &ctx, unsigned aIndex,
                                unsigned aZeroPoint, unsigned bIndex,
                                unsigned bZeroPoint) {
  Value a = ctx.input(aIndex), c = ctx.input(bIndex);
  if (!matmulShape(shapeOf(a), shapeOf(c)))
    return ctx.fail("the operand shapes do not agree for a matrix product");
  FailureOr<Value> aZero = zeroPointInt32(ctx, a, aZeroPoint, /*perRow=*/true);
  if (failed(aZero))
    return failure();
  FailureOr<Value> bZero = zeroPointInt32(ctx, c, bZeroPoint, /*perRow=*/false);
  if (failed(bZero))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Type i32 = b.getI32Type();
  if (rankOf(a) < 2 || rankOf(c) < 2) {
    // A vector operand (numpy's promotion drops a dim of the product):
    // shifted first, exactly, then multiplied in i32.
    auto shifted = [&](Value v, Value zero) {
      Value wide = cast(b, loc, v, i32);
      return zero ? binary<SubOp>(b, loc, wide, zero) : wide;
    };
    Value lhs = shifted(a, *aZero);
    Value rhs = shifted(c, *bZero);
    return matmul(b, loc, lhs, rhs);
  }
  Value product = matmul(b, loc, a, c, i32);
  if (*aZero) {
    Value columnSums = sumsInt32(b, loc, c, rankOf(c) - 2);
    product = binary<SubOp>(b, loc, product,
                            binary<MulOp>(b, loc, *aZero, columnSums));
  }
  if (*bZero) {
    Value rowSums = sumsInt32(b, loc, a, rankOf(a) - 1);
    product =
        binary<SubOp>(b, loc, product, binary<MulOp>(b, loc, *bZero, rowSums));
  }
  if (*aZero && *bZero) {
    Value k = scalar(b, loc, i32, static_cast<double>(shapeOf(a).back()));
    Value both = binary<MulOp>(b, loc, *aZero, *bZero);
    product = binary<AddOp>(b, loc, product, binary<MulOp>(b, loc, both, k));
  }
  return product;
}

/// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in i32.
LogicalResult matMulIntegerOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> product = integerProduct(ctx, 0, 2, 1, 3);
  if (failed(product))
    return failure();
  return ctx.setResults(*product);
}

/// A scale input of a QLinear op: a float scalar (one element), f32 or,
/// from opset 21, f16 or bf16.
FailureOr<Value> scalarScale(NodeContext &ctx, unsigned i) {
  Value scale = ctx.input(i);
  Type type = elementTypeOf(scale);
  bool allowed = type.isF32() || (ctx.version >= 21 && (type.isF16() ||
                                                        type.isBF16()));
  if (!allowed || numElementsOf(shapeOf(scale)) != 1)
    return ctx.fail("input " + Twine(i) + " must be a float scalar scale" +
                    (ctx.version >= 21 ? " (f32, f16 or bf16)" : " (f32)"));
  return reshape(ctx.b, ctx.loc, scale, {});
}

/// QLinearMatMul: the i32 product of MatMulInteger, scaled by
/// a_scale * b_scale / y_scale in f32, rounded half to even, shifted by
/// y_zero_point and saturated to its type.
LogicalResult qLinearMatMulOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(8)))
    return failure();
  FailureOr<Value> product = integerProduct(ctx, 0, 2, 3, 5);
  if (failed(product))
    return failure();
  FailureOr<Value> aScale = scalarScale(ctx, 1), bScale = scalarScale(ctx, 4),
                   yScale = scalarScale(ctx, 6);
  if (failed(aScale) || failed(bScale) || failed(yScale))
    return failure();
  if (elementTypeOf(*aScale) != elementTypeOf(*bScale) ||
      elementTypeOf(*aScale) != elementTypeOf(*yScale))
    return ctx.fail("the scales a_scale, b_scale and y_scale must have one "
                    "type");
  Value yZeroPoint = ctx.input(7);
  Type resultType = elementTypeOf(yZeroPoint);
  if (!isa<IntegerType>(resultType) ||
      resultType.getIntOrFloatBitWidth() != 8 ||
      numElementsOf(shapeOf(yZeroPoint)) != 1)
    return ctx.fail("y_zero_point must be an int8 or uint8 scalar");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // The multiplier is computed in the scales' type, as ONNX's reference
  // does, then applied in f32.
  Value multiplier = cast(
      b, loc,
      b.create<DivOp>(loc, b.create<MulOp>(loc, *aScale, *bScale), *yScale),
      b.getF32Type());
  Value scaled =
      binary<MulOp>(b, loc, cast(b, loc, *product, b.getF32Type()), multiplier);
  Value rounded = b.create<RoundOp>(loc, scaled);
  Value shifted = binary<AddOp>(
      b, loc, rounded,
      cast(b, loc, reshape(b, loc, yZeroPoint, {}), b.getF32Type()));
  return ctx.setResults(cast(b, loc, shifted, resultType));
}

LogicalResult gemmOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value a = ctx.input(0), c = ctx.input(1);
  if (rankOf(a) != 2 || rankOf(c) != 2)
    return ctx.fail("A and B must have rank 2");
  if (elementTypeOf(a) != elementTypeOf(c) || isBool(a))
    return ctx.fail("the operands must be numbers of one element type");
  // Gemm-6's broadcast=1 lets C broadcast; without it C has the result's
  // shape, which broadcasting leaves as it is.
  (void)ctx.attr("broadcast");
  if (ctx.getInt("transA", 0))
    a = transpose(ctx.b, ctx.loc, a, {1, 0});
  if (ctx.getInt("transB", 0))
    c = transpose(ctx.b, ctx.loc, c, {1, 0});
  if (shapeOf(a)[1] != shapeOf(c)[0])
    return ctx.fail("the inner dims of A and B differ");
  Value y = ctx.b.create<MatmulOp>(ctx.loc, a, c);
  double alpha = ctx.getFloat("alpha", 1), beta = ctx.getFloat("beta", 1);
  if (alpha != 1)
    y = ctx.b.create<MulOp>(ctx.loc, y, splat(ctx.b, ctx.loc, typeOf(y), alpha));
  if (ctx.hasInput(2) && beta != 0) {
    Value bias = ctx.input(2);
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(shapeOf(bias), shapeOf(y));
    if (!shape || ArrayRef<int64_t>(*shape) != shapeOf(y))
      return ctx.fail("C does not broadcast to the product's shape");
    bias = broadcastTo(ctx.b, ctx.loc, bias, shapeOf(y));
    if (beta != 1)
      bias = ctx.b.create<MulOp>(ctx.loc, bias,
                                 splat(ctx.b, ctx.loc, typeOf(y), beta));
    y = ctx.b.create<AddOp>(ctx.loc, y, bias);
  }
  return ctx.setResults(y);
}

/// Softmax-family ops before opset 13 work on the input flattened to 2-D at
/// `axis`; from 13 on along `axis` alone. Calls `body` on the value to
/// normalize and the axis to use, and restores the input's shape.
template <typename Body>
LogicalResult softmaxLike(NodeContext &ctx, Body body) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  bool legacy = ctx.version < 13;
  std::optional<int64_t> axis =
      normalizeAxis(ctx.getInt("axis", legacy ? 1 : -1), rank);
  if (!axis && !(legacy && ctx.getInt("axis", 1) == rank))
    return ctx.fail("axis is out of range");
  if (!legacy)
    return ctx.setResults(body(x, *axis));
  int64_t a = axis ? *axis : rank;
  int64_t outer = numElementsOf(shapeOf(x).take_front(a));
  int64_t inner = numElementsOf(shapeOf(x).drop_front(a));
  Value flat = reshape(ctx.b, ctx.loc, x, {outer, inner});
  return ctx.setResults(reshape(ctx.b, ctx.loc, body(flat, 1), shapeOf(x)));
}

/// x - max(x) along `axis`, broadcast back.
Value shiftByMax(OpBuilder &b, Location loc, Value x, int64_t axis) {
  Value max = reduce(b, loc, Reduction::Max, x, {axis}, /*keepDims=*/true);
  return b.create<SubOp>(loc, x, broadcastTo(b, loc, max, shapeOf(x)));
}

LogicalResult softmaxOp(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value x, int64_t axis) -> Value {
    OpBuilder &b = ctx.b;
    Value e = b.create<ExpOp>(ctx.loc, shiftByMax(b, ctx.loc, x, axis));
    Value sum = reduce(b, ctx.loc, Reduction::Sum, e, {axis}, true);
    return b.create<DivOp>(ctx.loc, e, broadcastTo(b, ctx.loc, sum, shapeOf(x)));
  });
}

LogicalResult logSoftmaxOp(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value x, int64_t axis) -> Value {
    OpBuilder &b = ctx.b;
    Value shifted = shiftByMax(b, ctx.loc, x, axis);
    Value sum = reduce(b, ctx.loc, Reduction::Sum,
                       b.create<ExpOp>(ctx.loc, shifted), {axis}, true);
    Value logSum = b.create<LogOp>(ctx.loc, sum);
    return b.create<SubOp>(ctx.loc, shifted,
                           broadcastTo(b, ctx.loc, logSum, shapeOf(x)));
  });
}

/// 1 at the first maximum along the axis, 0 elsewhere.
LogicalResult hardmaxOp(NodeContext &ctx) {
  return softmaxLike(ctx, [&](Value x, int64_t axis) -> Value {
    OpBuilder &b = ctx.b;
    Location loc = ctx.loc;
    Value max = broadcastTo(
        b, loc, reduce(b, loc, Reduction::Max, x, {axis}, true), shapeOf(x));
    Value isMax = b.create<CompareOp>(loc, CompareDirection::eq, x, max);
    auto indexType = RankedTensorType::get(shapeOf(x), b.getI64Type());
    Value iota = b.create<IotaOp>(loc, indexType, axis);
    Value big = splat(b, loc, indexType, shapeOf(x)[axis]);
    Value candidates = b.create<SelectOp>(loc, isMax, iota, big);
    Value first = broadcastTo(
        b, loc, reduce(b, loc, Reduction::Min, candidates, {axis}, true),
        shapeOf(x));
    Value hit = b.create<CompareOp>(loc, CompareDirection::eq, iota, first);
    return cast(b, loc, hit, elementTypeOf(x));
  });
}

/// A per-channel parameter [C] broadcast along dim 1 of `shape`.
Value perChannel(OpBuilder &b, Location loc, Value param,
                 ArrayRef<int64_t> shape) {
  SmallVector<int64_t> unsqueezed(shape.size(), 1);
  unsqueezed[1] = shape[1];
  return broadcastTo(b, loc, reshape(b, loc, param, unsqueezed), shape);
}

/// BatchNormalization's y = x * s + shift folded into the convolution
/// that computes x, where its weight, its bias (if any) and s and shift
/// are constants: the weight scaled by s per output channel, the bias
/// b * s + shift, both evaluated now. torch's exporter folds this itself;
/// other exporters leave the BN node. The convolution itself is not
/// erased: a later node may still read it (if none does, it is dead code).
Value foldIntoConv(NodeContext &ctx, Value x, Value s, Value shift) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value convolved = x, bias;
  if (auto add = x.getDefiningOp<AddOp>()) {
    // NNOps.cpp's addBias: y + broadcast(reshape(bias, [1, O, 1...])).
    auto broadcast = add.getRhs().getDefiningOp<BroadcastInDimOp>();
    if (!broadcast)
      return nullptr;
    bias = broadcast.getOperand();
    convolved = add.getLhs();
  }
  auto conv = convolved.getDefiningOp<ConvOp>();
  if (!conv || !conv.getWeight().getDefiningOp<ConstantOp>() ||
      elementTypeOf(conv.getWeight()) != elementTypeOf(s))
    return nullptr;
  Block *block = b.getInsertionBlock();
  Operation *last = block->empty() ? nullptr : &block->back();
  ArrayRef<int64_t> weightShape = shapeOf(conv.getWeight());
  int64_t channels = weightShape[0];
  SmallVector<int64_t> perOutput(weightShape.size(), 1);
  perOutput[0] = channels;
  Value weight = b.create<MulOp>(
      loc, conv.getWeight(),
      broadcastTo(b, loc, reshape(b, loc, s, perOutput), weightShape));
  Value newShift = shift;
  if (bias)
    newShift = b.create<AddOp>(
        loc, shift, b.create<MulOp>(loc, reshape(b, loc, bias, {channels}), s));
  FailureOr<SmallVector<Value>> folded =
      ctx.importer.evaluateConstants({weight, newShift});
  if (failed(folded)) {
    // Not constants after all: the ops built here go again.
    SmallVector<Operation *> built;
    for (Operation &op : llvm::make_range(
             last ? std::next(last->getIterator()) : block->begin(),
             block->end()))
      built.push_back(&op);
    for (Operation *op : llvm::reverse(built))
      if (op->use_empty())
        op->erase();
    return nullptr;
  }
  Operation *scaled = b.clone(*conv);
  scaled->setOperand(1, (*folded)[0]);
  Value y = scaled->getResult(0);
  return b.create<AddOp>(loc, y, perChannel(b, loc, (*folded)[1], shapeOf(y)));
}

/// Det: the determinant of each (M, M) matrix of X (*, M, M), by LU
/// elimination with partial pivoting (LAPACK's getrf, which numpy uses) in
/// a kiln.for over the M columns. Step k swaps the row of the largest
/// |a_ik| (i >= k) into row k, multiplies the determinant by that pivot
/// (negated for a swap) and subtracts multiples of row k from the rows
/// below. Rows and columns are picked with iota masks, so the matrices of
/// the batch run together. A zero pivot makes the determinant 0 (the
/// column below it is zero too, so nothing is divided by it).
LogicalResult detOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  if (rank < 2 || shapeOf(x)[rank - 1] != shapeOf(x)[rank - 2])
    return ctx.fail("the input must be (*, M, M) square matrices");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<int64_t> batchShape(shapeOf(x).drop_back(2));
  int64_t m = shapeOf(x).back(), batch = numElementsOf(batchShape);
  Type element = elementTypeOf(x);
  auto detType = RankedTensorType::get({batch}, element);
  if (m == 0 || batch == 0)
    return ctx.setResults(
        splat(b, loc, RankedTensorType::get(batchShape, element), 1));
  Value a = reshape(b, loc, x, {batch, m, m});
  auto matType = RankedTensorType::get({batch, m, m}, element);
  auto vecType = RankedTensorType::get({batch, m}, element);
  auto matIndex = RankedTensorType::get({batch, m, m}, b.getI64Type());
  auto vecIndex = RankedTensorType::get({batch, m}, b.getI64Type());
  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  LoopBuilder loop(b, loc);
  unsigned aArg = loop.add(a), detArg = loop.add(splat(b, loc, detType, 1));
  b.setInsertionPointToStart(loop.block.get());
  Value k = loop.index;
  auto eqK = [&](Value iota) {
    return b.create<CompareOp>(loc, CompareDirection::eq, iota,
                               broadcastTo(b, loc, k, shapeOf(iota)));
  };
  auto zero = [&](RankedTensorType type) { return splat(b, loc, type, 0); };
  // The entries of `v` where `mask` holds, summed over `dim`: one row or
  // column of each matrix, or one entry of each row.
  auto pick = [&](Value mask, Value v, int64_t dim) {
    return reduce(b, loc, Reduction::Sum,
                  b.create<SelectOp>(loc, mask, v, zero(typeOf(v))), {dim},
                  false);
  };
  // Column k and its pivot row.
  Value cur = loop.arg(aArg);
  Value colMask = eqK(b.create<IotaOp>(loc, matIndex, 2));
  Value col = pick(colMask, cur, 2);
  Value rowIota = b.create<IotaOp>(loc, vecIndex, 1);
  Value kVec = broadcastTo(b, loc, k, {batch, m});
  Value below =
      b.create<CompareOp>(loc, CompareDirection::ge, rowIota, kVec);
  Value candidates = b.create<SelectOp>(loc, below, b.create<AbsOp>(loc, col),
                                        splat(b, loc, vecType, -1));
  Value pivotRow = b.create<ArgMaxOp>(loc, candidates, 1, false);
  // Swap rows k and pivotRow: row i reads row perm[i].
  Value p = b.create<BroadcastInDimOp>(loc, vecIndex, pivotRow,
                                       SmallVector<int64_t>{0});
  Value isK = eqK(rowIota);
  Value isP = b.create<CompareOp>(loc, CompareDirection::eq, rowIota, p);
  Value perm = b.create<SelectOp>(loc, isK, p,
                                  b.create<SelectOp>(loc, isP, kVec, rowIota));
  Value permRows = b.create<BroadcastInDimOp>(loc, matIndex, perm,
                                              SmallVector<int64_t>{0, 1});
  Value swapped = b.create<GatherOp>(
      loc, reshape(b, loc, cur, {batch * m * m}),
      elementLinearIndex(b, loc, permRows, {batch, m, m}, 1));
  Value swappedSign = b.create<SelectOp>(
      loc,
      b.create<CompareOp>(loc, CompareDirection::eq, pivotRow,
                          broadcastTo(b, loc, k, {batch})),
      splat(b, loc, detType, 1), splat(b, loc, detType, -1));
  // Row k, column k and the pivot after the swap.
  Value rowMask = eqK(b.create<IotaOp>(loc, matIndex, 1));
  Value rowK = pick(rowMask, swapped, 1);
  Value colK = pick(colMask, swapped, 2);
  Value pivot = pick(isK, colK, 1);
  Value isZero = b.create<CompareOp>(loc, CompareDirection::eq, pivot,
                                     zero(detType));
  Value divisor = b.create<SelectOp>(loc, isZero, splat(b, loc, detType, 1),
                                     pivot);
  Value after = b.create<CompareOp>(loc, CompareDirection::gt, rowIota, kVec);
  Value factor = b.create<SelectOp>(
      loc, after,
      b.create<DivOp>(loc, colK,
                      b.create<BroadcastInDimOp>(loc, vecType, divisor,
                                                 SmallVector<int64_t>{0})),
      zero(vecType));
  Value update = b.create<MulOp>(
      loc,
      b.create<BroadcastInDimOp>(loc, matType, factor,
                                 SmallVector<int64_t>{0, 1}),
      b.create<BroadcastInDimOp>(loc, matType, rowK,
                                 SmallVector<int64_t>{0, 2}));
  loop.setNext(aArg, b.create<SubOp>(loc, swapped, update));
  loop.setNext(detArg, b.create<MulOp>(
                           loc, loop.arg(detArg),
                           b.create<MulOp>(loc, swappedSign, pivot)));
  ForOp op = loop.finish(outside, m);
  return ctx.setResults(reshape(b, loc, op.getResult(detArg), batchShape));
}

/// (x - mean) / sqrt(var + epsilon) over `axes`, with mean and variance
/// (the mean of squared deviations) kept as size-1 dims.
struct Normalized {
  Value y, mean, var, invStd;
};
Normalized normalize(OpBuilder &b, Location loc, Value x,
                     ArrayRef<int64_t> axes, double epsilon) {
  Value mean = reduce(b, loc, Reduction::Mean, x, axes, true);
  Value centered = b.create<SubOp>(loc, x, broadcastTo(b, loc, mean, shapeOf(x)));
  Value var = reduce(b, loc, Reduction::Mean,
                     b.create<MulOp>(loc, centered, centered), axes, true);
  Value invStd = b.create<RsqrtOp>(
      loc, b.create<AddOp>(loc, var, splat(b, loc, typeOf(var), epsilon)));
  Value y = b.create<MulOp>(loc, centered,
                            broadcastTo(b, loc, invStd, shapeOf(x)));
  return {y, mean, var, invStd};
}

LogicalResult batchNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)) || failed(ctx.requireFloat(0)))
    return failure();
  // Before opset 7 the output count alone tells inference from training
  // (is_test only describes it), `spatial` (before opset 9) must agree
  // with the per-channel parameters checked below, and `momentum` updates
  // running statistics, which inference does not.
  (void)ctx.attr("is_test");
  (void)ctx.attr("spatial");
  (void)ctx.attr("momentum");
  bool training = ctx.getInt("training_mode", 0) != 0;
  if (ctx.version < 14 && ctx.numOutputs() > 1 && ctx.hasOutput(1))
    return ctx.fail("the training outputs of BatchNormalization before "
                    "opset 14 are not supported");
  if (!training && ctx.numOutputs() > 1 && ctx.hasOutput(1))
    return ctx.fail("running_mean and running_var are outputs only in "
                    "training mode");
  Value x = ctx.input(0);
  if (rankOf(x) < 2)
    return ctx.fail("X must have rank >= 2");
  int64_t channels = shapeOf(x)[1];
  for (unsigned i = 1; i < 5; ++i)
    if (numElementsOf(shapeOf(ctx.input(i))) != channels)
      return ctx.fail("input " + Twine(i) + " must have one entry per channel");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Type element = elementTypeOf(x);
  auto vec = [&](unsigned i) {
    return cast(b, loc, reshape(b, loc, ctx.input(i), {channels}), element);
  };
  if (training) {
    // Opset 14's training mode: normalized by the batch's mean and
    // (biased) variance over every dim but the channels; the running
    // statistics come out as input * momentum + batch * (1 - momentum).
    SmallVector<int64_t> axes{0};
    for (int64_t d = 2; d < rankOf(x); ++d)
      axes.push_back(d);
    Normalized n = normalize(b, loc, x, axes, ctx.getFloat("epsilon", 1e-5f));
    Value y = b.create<AddOp>(
        loc, b.create<MulOp>(loc, n.y, perChannel(b, loc, vec(1), shapeOf(x))),
        perChannel(b, loc, vec(2), shapeOf(x)));
    SmallVector<Value> results{y};
    double momentum = ctx.getFloat("momentum", 0.9f);
    auto vecType = RankedTensorType::get({channels}, element);
    auto running = [&](unsigned input, Value batch) -> Value {
      Value old = vec(input);
      Value value = b.create<AddOp>(
          loc, b.create<MulOp>(loc, old, splat(b, loc, vecType, momentum)),
          b.create<MulOp>(loc, reshape(b, loc, batch, {channels}),
                          splat(b, loc, vecType, 1 - momentum)));
      return cast(b, loc, value, elementTypeOf(ctx.input(input)));
    };
    if (ctx.hasOutput(1) || ctx.hasOutput(2)) {
      results.push_back(running(3, n.mean));
      results.push_back(running(4, n.var));
    }
    return ctx.setResults(results);
  }
  // y = x * s + (bias - mean * s), s = scale / sqrt(var + epsilon): with
  // constant parameters, s and the shift are folded into two vectors.
  Value eps = splat(b, loc, RankedTensorType::get({channels}, element),
                    ctx.getFloat("epsilon", 1e-5f));
  Value s = b.create<DivOp>(
      loc, vec(1), b.create<SqrtOp>(loc, b.create<AddOp>(loc, vec(4), eps)));
  Value shift = b.create<SubOp>(loc, vec(2), b.create<MulOp>(loc, vec(3), s));
  if (Value folded = foldIntoConv(ctx, x, s, shift))
    return ctx.setResults(folded);
  Value y = b.create<MulOp>(loc, x, perChannel(b, loc, s, shapeOf(x)));
  return ctx.setResults(
      b.create<AddOp>(loc, y, perChannel(b, loc, shift, shapeOf(x))));
}

LogicalResult instanceNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3)
    return ctx.fail("the input must have rank >= 3");
  int64_t channels = shapeOf(x)[1];
  for (unsigned i = 1; i < 3; ++i)
    if (numElementsOf(shapeOf(ctx.input(i))) != channels)
      return ctx.fail("scale and B must have one entry per channel");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rankOf(x); ++i)
    axes.push_back(i);
  Normalized n = normalize(ctx.b, ctx.loc, x, axes,
                           ctx.getFloat("epsilon", 1e-5f));
  Value scale = reshape(ctx.b, ctx.loc, ctx.input(1), {channels});
  Value bias = reshape(ctx.b, ctx.loc, ctx.input(2), {channels});
  Value y = ctx.b.create<MulOp>(ctx.loc, n.y,
                                perChannel(ctx.b, ctx.loc, scale, shapeOf(x)));
  return ctx.setResults(ctx.b.create<AddOp>(
      ctx.loc, y, perChannel(ctx.b, ctx.loc, bias, shapeOf(x))));
}

/// The dims a normalization over `axis` and the dims after it reduces (the
/// attribute `axis`, default -1, of LayerNormalization and RMSNormalization);
/// failure (reported) when it is out of range.
FailureOr<SmallVector<int64_t>> trailingAxes(NodeContext &ctx, Value x) {
  int64_t rank = rankOf(x);
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", -1), rank);
  if (!axis)
    return ctx.fail("axis is out of range");
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

/// Input `i` broadcast to the shape of `x` (a normalization's scale or
/// bias); failure (reported) when it does not broadcast to exactly that.
FailureOr<Value> broadcastParameter(NodeContext &ctx, unsigned i, Value x,
                                    StringRef what) {
  Value p = ctx.input(i);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(p), shapeOf(x));
  if (!shape || ArrayRef<int64_t>(*shape) != shapeOf(x))
    return ctx.fail(Twine(what) + " must broadcast to the input's shape");
  return broadcastTo(ctx.b, ctx.loc, p, shapeOf(x));
}

LogicalResult layerNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes = trailingAxes(ctx, x);
  if (failed(axes))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // stash_type 1 computes the statistics in float32; for float32 and wider
  // inputs that is the input's own type.
  Normalized n = normalize(b, loc, x, *axes, ctx.getFloat("epsilon", 1e-5f));
  Value y = n.y;
  for (unsigned i : {1u, 2u}) {
    if (!ctx.hasInput(i))
      continue;
    FailureOr<Value> p = broadcastParameter(ctx, i, x, "Scale and B");
    if (failed(p))
      return failure();
    y = i == 1 ? Value(b.create<MulOp>(loc, y, *p))
               : Value(b.create<AddOp>(loc, y, *p));
  }
  SmallVector<Value> results{y};
  if (ctx.hasOutput(1) || ctx.hasOutput(2))
    results.append({n.mean, n.invStd});
  return ctx.setResults(results);
}

/// RMSNormalization (opset 23): x / sqrt(mean(x^2) + epsilon) * scale,
/// the mean over dims axis.. (stash_type 1, the only one ONNX defines, is
/// float32 statistics: the input's own type for float32 and wider).
LogicalResult rmsNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  if (int64_t stash = ctx.getInt("stash_type", 1); stash != 1)
    return ctx.fail("stash_type " + Twine(stash) +
                    " is not supported (ONNX defines 1, float32)");
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes = trailingAxes(ctx, x);
  if (failed(axes))
    return failure();
  FailureOr<Value> scale = broadcastParameter(ctx, 1, x, "scale");
  if (failed(scale))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value meanSq = reduce(b, loc, Reduction::Mean, b.create<MulOp>(loc, x, x),
                        *axes, true);
  Value invRms = b.create<RsqrtOp>(
      loc, b.create<AddOp>(loc, meanSq,
                           splat(b, loc, typeOf(meanSq),
                                 ctx.getFloat("epsilon", 1e-5f))));
  Value y = b.create<MulOp>(loc, x, broadcastTo(b, loc, invRms, shapeOf(x)));
  return ctx.setResults(b.create<MulOp>(loc, y, *scale));
}

/// LpNormalization: x divided by its L1 (p=1) or L2 (p=2) norm along
/// `axis`; a zero vector stays zero, as in ONNX's reference.
LogicalResult lpNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", -1), rankOf(x));
  if (!axis)
    return ctx.fail("axis " + Twine(ctx.getInt("axis", -1)) +
                    " is out of range for an input of rank " +
                    Twine(rankOf(x)));
  int64_t p = ctx.getInt("p", 2);
  if (p != 1 && p != 2)
    return ctx.fail("p is " + Twine(p) + "; LpNormalization takes 1 or 2");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value norm =
      p == 1 ? reduce(b, loc, Reduction::Sum, b.create<AbsOp>(loc, x), {*axis},
                      true)
             : b.create<SqrtOp>(loc, reduce(b, loc, Reduction::Sum,
                                            b.create<MulOp>(loc, x, x),
                                            {*axis}, true));
  Value zero = b.create<CompareOp>(loc, CompareDirection::eq, norm,
                                   splat(b, loc, typeOf(norm), 0));
  norm = b.create<SelectOp>(loc, zero, splat(b, loc, typeOf(norm), 1), norm);
  return ctx.setResults(
      b.create<DivOp>(loc, x, broadcastTo(b, loc, norm, shapeOf(x))));
}

LogicalResult meanVarianceNormOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  SmallVector<int64_t> axes;
  for (int64_t axis : ctx.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3})) {
    std::optional<int64_t> a = normalizeAxis(axis, rankOf(x));
    if (!a)
      return ctx.fail("axis " + Twine(axis) + " is out of range");
    axes.push_back(*a);
  }
  // ONNX's function: (x - mean) / (sqrt(var) + 1e-9).
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value mean = reduce(b, loc, Reduction::Mean, x, axes, true);
  Value centered = b.create<SubOp>(loc, x, broadcastTo(b, loc, mean, shapeOf(x)));
  Value meanSq = reduce(b, loc, Reduction::Mean, b.create<MulOp>(loc, x, x),
                        axes, true);
  Value var = b.create<SubOp>(loc, meanSq, b.create<MulOp>(loc, mean, mean));
  Value std = b.create<AddOp>(loc, b.create<SqrtOp>(loc, var),
                              splat(b, loc, typeOf(var), 1e-9));
  return ctx.setResults(
      b.create<DivOp>(loc, centered, broadcastTo(b, loc, std, shapeOf(x))));
}

template <Reduction kind>
LogicalResult globalPoolOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3)
    return ctx.fail("the input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rankOf(x); ++i)
    axes.push_back(i);
  return ctx.setResults(reduce(ctx.b, ctx.loc, kind, x, axes, true));
}

/// LRN: x / (bias + alpha / size * sum of x^2 over a window of channels)^beta.
LogicalResult lrnOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3)
    return ctx.fail("the input must have rank >= 3");
  int64_t size = ctx.getInt("size", 0);
  if (size < 1)
    return ctx.fail("size must be positive");
  double alpha = ctx.getFloat("alpha", 1e-4f), beta = ctx.getFloat("beta", 0.75f),
         bias = ctx.getFloat("bias", 1.0f);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo, channels = shapeOf(x)[1];
  Value sq = b.create<MulOp>(loc, x, x);
  SmallVector<Value> parts;
  for (int64_t pad : {lo, int64_t(-1), hi}) {
    if (pad == -1) {
      parts.push_back(sq);
      continue;
    }
    if (!pad)
      continue;
    SmallVector<int64_t> shape(shapeOf(x));
    shape[1] = pad;
    parts.push_back(splat(b, loc, RankedTensorType::get(shape, elementTypeOf(x)),
                          0));
  }
  Value padded = concat(b, loc, parts, 1);
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    Value window = sliceAxis(b, loc, padded, 1, k, k + channels);
    sum = sum ? Value(b.create<AddOp>(loc, sum, window)) : window;
  }
  Value scaled = b.create<AddOp>(
      loc, splat(b, loc, typeOf(x), bias),
      b.create<MulOp>(loc, sum, splat(b, loc, typeOf(x), alpha / size)));
  Value denom = b.create<PowOp>(loc, scaled, splat(b, loc, typeOf(x), beta));
  return ctx.setResults(b.create<DivOp>(loc, x, denom));
}

} // namespace

void registerLinalgOps(OpTable &table) {
  table.add("MatMul", matmulOp);
  table.add("MatMulInteger", matMulIntegerOp);
  table.add("QLinearMatMul", qLinearMatMulOp);
  table.add("Det", detOp);
  table.add("Gemm", gemmOp);
  table.add("Softmax", softmaxOp);
  table.add("LogSoftmax", logSoftmaxOp);
  table.add("Hardmax", hardmaxOp);
  table.add("BatchNormalization", batchNormOp);
  table.add("InstanceNormalization", instanceNormOp);
  table.add("LayerNormalization", layerNormOp);
  table.add("RMSNormalization", rmsNormOp);
  table.add("LpNormalization", lpNormOp);
  table.add("MeanVarianceNormalization", meanVarianceNormOp);
  table.add("GlobalAveragePool", globalPoolOp<Reduction::Mean>);
  table.add("GlobalMaxPool", globalPoolOp<Reduction::Max>);
  table.add("LRN", lrnOp);
}

} // namespace onnx_import
} // namespace kiln
