//===- ReductionOps.cpp - ONNX Reduce* ops --------------------------------===//
//
// The axes are an attribute before opset 13 (18 for all but ReduceSum) and
// an optional input since; no axes means all of them unless
// noop_with_empty_axes is set. ReduceProd is a loop of multiplications
// (kiln has no product reduction). ReduceL1, L2, LogSum, LogSumExp and
// SumSquare are built from sums, as ONNX's function bodies define them;
// ReduceLogSumExp subtracts the maximum first so that exp cannot overflow.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"
#include "LoopBuilder.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

enum class Kind {
  Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare
};

/// The product over `dims`: kiln has no product reduction, so the reduced
/// dims are moved to the front and flattened, and a kiln.for multiplies the
/// rows one after the other (a sequential product, exact in order).
Value reduceProduct(OpBuilder &b, Location loc, Value x,
                    ArrayRef<int64_t> dims, bool keepDims) {
  SmallVector<int64_t> perm(dims), kept, keptShape;
  llvm::sort(perm);
  for (int64_t i = 0; i < rankOf(x); ++i)
    if (!llvm::is_contained(dims, i)) {
      perm.push_back(i);
      keptShape.push_back(shapeOf(x)[i]);
    }
  int64_t count = 1;
  for (int64_t d : dims)
    count *= shapeOf(x)[d];
  Value rows = reshape(b, loc, transpose(b, loc, x, perm),
                       {count, numElementsOf(keptShape)});
  auto rowType = RankedTensorType::get({numElementsOf(keptShape)},
                                       elementTypeOf(x));
  Value one = splat(b, loc, rowType, 1);
  // A product over no elements is 1 (and a loop over the rows of an empty
  // [0, n] tensor could not read a row of it).
  if (count == 0) {
    SmallVector<int64_t> shape(shapeOf(x));
    for (int64_t d : dims)
      shape[d] = 1;
    return reshape(b, loc, one, keepDims ? ArrayRef<int64_t>(shape)
                                         : ArrayRef<int64_t>(keptShape));
  }
  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  LoopBuilder loop(b, loc);
  unsigned acc = loop.add(one), all = loop.add(rows);
  b.setInsertionPointToStart(loop.block.get());
  Value row = reshape(
      b, loc,
      b.create<DynamicSliceOp>(loc, loop.arg(all), loop.index, uint64_t(1)),
      rowType.getShape());
  loop.setNext(acc, b.create<MulOp>(loc, loop.arg(acc), row));
  ForOp product = loop.finish(outside, count);
  Value result = reshape(b, loc, product.getResult(acc), keptShape);
  if (!keepDims)
    return result;
  SmallVector<int64_t> shape(shapeOf(x));
  for (int64_t d : dims)
    shape[d] = 1;
  return reshape(b, loc, result, shape);
}

/// The opset from which the op takes its axes as an input.
int axesInputSince(Kind kind) { return kind == Kind::Sum ? 13 : 18; }

template <Kind kind>
LogicalResult reduceOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  // Max and min of bools (opset 20) are any and all: reduced as ui8, whose
  // identities (0 and 255) make an empty reduction false and true.
  bool boolInput = isBool(x);
  if (boolInput && kind != Kind::Max && kind != Kind::Min)
    return ctx.fail("bool inputs are not supported by this op");
  if (boolInput)
    x = cast(ctx.b, ctx.loc, x,
             ctx.b.getIntegerType(8, /*isSigned=*/false));
  int64_t rank = rankOf(x);
  bool keepDims = ctx.getInt("keepdims", 1);
  std::optional<SmallVector<int64_t>> axes;
  if (ctx.version >= axesInputSince(kind)) {
    if (ctx.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else {
    axes = ctx.getInts("axes");
  }
  if (axes && axes->empty())
    axes.reset();
  if (!axes && ctx.getInt("noop_with_empty_axes", 0))
    return ctx.setResults(x);
  SmallVector<int64_t> dims;
  if (axes) {
    for (int64_t axis : *axes) {
      std::optional<int64_t> a = normalizeAxis(axis, rank);
      if (!a)
        return ctx.fail("axis " + Twine(axis) + " is out of range");
      if (!llvm::is_contained(dims, *a))
        dims.push_back(*a);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  switch (kind) {
  case Kind::Sum:
    return ctx.setResults(reduce(b, loc, Reduction::Sum, x, dims, keepDims));
  case Kind::Mean:
    return ctx.setResults(reduce(b, loc, Reduction::Mean, x, dims, keepDims));
  case Kind::Max:
  case Kind::Min: {
    Value result = reduce(b, loc,
                          kind == Kind::Max ? Reduction::Max : Reduction::Min,
                          x, dims, keepDims);
    if (boolInput)
      result = cast(b, loc, result, b.getI1Type());
    return ctx.setResults(result);
  }
  case Kind::Prod:
    return ctx.setResults(reduceProduct(b, loc, x, dims, keepDims));
  case Kind::L1:
    return ctx.setResults(reduce(b, loc, Reduction::Sum,
                                 b.create<AbsOp>(loc, x), dims, keepDims));
  case Kind::SumSquare:
    return ctx.setResults(reduce(b, loc, Reduction::Sum,
                                 b.create<MulOp>(loc, x, x), dims, keepDims));
  case Kind::L2: {
    Value sq = b.create<MulOp>(loc, x, x);
    Value sum = reduce(b, loc, Reduction::Sum, sq, dims, keepDims);
    if (!isFloat(x)) {
      Value root = b.create<SqrtOp>(loc, cast(b, loc, sum, b.getF64Type()));
      return ctx.setResults(cast(b, loc, root, elementTypeOf(x)));
    }
    return ctx.setResults(b.create<SqrtOp>(loc, sum));
  }
  case Kind::LogSum:
    if (failed(ctx.requireFloat(0)))
      return failure();
    return ctx.setResults(b.create<LogOp>(
        loc, reduce(b, loc, Reduction::Sum, x, dims, keepDims)));
  case Kind::LogSumExp: {
    if (failed(ctx.requireFloat(0)))
      return failure();
    // max + log(sum(exp(x - max))); a max of -inf (all -inf, or no
    // elements) is replaced by 0 so that the result is -inf, not NaN.
    Value max = reduce(b, loc, Reduction::Max, x, dims, /*keepDims=*/true);
    Value isInf = b.create<CompareOp>(
        loc, CompareDirection::eq, max,
        splat(b, loc, typeOf(max), -std::numeric_limits<double>::infinity()));
    max = b.create<SelectOp>(loc, isInf, splat(b, loc, typeOf(max), 0), max);
    Value shifted = b.create<SubOp>(loc, x, broadcastTo(b, loc, max,
                                                        shapeOf(x)));
    Value sum = reduce(b, loc, Reduction::Sum, b.create<ExpOp>(loc, shifted),
                       dims, keepDims);
    Value maxOut = reshape(b, loc, max, shapeOf(sum));
    return ctx.setResults(
        b.create<AddOp>(loc, b.create<LogOp>(loc, sum), maxOut));
  }
  }
  return failure();
}

/// ArgMax / ArgMin: kiln.argmax / kiln.argmin, with the axis kept as a
/// size-1 dim when keepdims.
template <typename OpTy>
LogicalResult argReduceOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x) || rankOf(x) == 0)
    return ctx.fail("the input must be a numeric tensor of rank >= 1");
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", 0), rankOf(x));
  if (!axis)
    return ctx.fail("axis is out of range");
  if (shapeOf(x)[*axis] == 0)
    return ctx.fail("the axis has no elements");
  Value r = ctx.b.create<OpTy>(ctx.loc, x, *axis,
                               ctx.getInt("select_last_index", 0) != 0);
  if (!ctx.getInt("keepdims", 1))
    return ctx.setResults(r);
  SmallVector<int64_t> shape(shapeOf(x));
  shape[*axis] = 1;
  return ctx.setResults(reshape(ctx.b, ctx.loc, r, shape));
}

/// The axis input of CumSum and CumProd, checked; nullopt after an error.
std::optional<int64_t> cumulativeAxis(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return std::nullopt;
  Value x = ctx.input(0);
  if (isBool(x) || rankOf(x) == 0) {
    (void)ctx.fail("the input must be a numeric tensor of rank >= 1");
    return std::nullopt;
  }
  FailureOr<SmallVector<int64_t>> axisValue = ctx.constantInts(1, "axis");
  if (failed(axisValue))
    return std::nullopt;
  if (axisValue->size() != 1) {
    (void)ctx.fail("axis must be a scalar");
    return std::nullopt;
  }
  std::optional<int64_t> axis = normalizeAxis((*axisValue)[0], rankOf(x));
  if (!axis)
    (void)ctx.fail("axis is out of range");
  return axis;
}

LogicalResult cumSumOp(NodeContext &ctx) {
  std::optional<int64_t> axis = cumulativeAxis(ctx);
  if (!axis)
    return failure();
  return ctx.setResults(ctx.b.create<CumsumOp>(ctx.loc, ctx.input(0), *axis,
                                               ctx.getInt("exclusive", 0) != 0,
                                               ctx.getInt("reverse", 0) != 0));
}

/// CumProd (opset 26) as a parallel prefix product (Hillis and Steele):
/// log2(n) steps, each multiplying by itself shifted s = 1, 2, 4... along
/// the axis (ones shifted in). Exact for integers; floats are multiplied in
/// another order than left to right.
LogicalResult cumProdOp(NodeContext &ctx) {
  std::optional<int64_t> axis = cumulativeAxis(ctx);
  if (!axis)
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value y = ctx.input(0);
  int64_t n = shapeOf(y)[*axis];
  bool reverse = ctx.getInt("reverse", 0) != 0;
  if (n == 0)
    return ctx.setResults(y);
  if (reverse)
    y = b.create<ReverseOp>(loc, y, SmallVector<int64_t>{*axis});
  auto ones = [&](int64_t count) {
    SmallVector<int64_t> shape(shapeOf(y));
    shape[*axis] = count;
    return splat(b, loc, RankedTensorType::get(shape, elementTypeOf(y)), 1);
  };
  auto shifted = [&](Value v, int64_t s) {
    return concat(b, loc, {ones(s), sliceAxis(b, loc, v, *axis, 0, n - s)},
                  *axis);
  };
  for (int64_t s = 1; s < n; s *= 2)
    y = b.create<MulOp>(loc, y, shifted(y, s));
  if (ctx.getInt("exclusive", 0))
    y = shifted(y, 1);
  if (reverse)
    y = b.create<ReverseOp>(loc, y, SmallVector<int64_t>{*axis});
  return ctx.setResults(y);
}

/// TopK: the K largest (or smallest) elements along `axis`, in order, and
/// their indices; of equal values the lower index comes first. A stable
/// kiln.sort of the axis (descending for the largest), cut to K: NaN
/// counts as the largest value. The values differentiate through the sort
/// (an index has no gradient).
LogicalResult topKOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.version < 10 ? 1 : 2)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x) || rankOf(x) == 0)
    return ctx.fail("the input must be a numeric tensor of rank >= 1");
  int64_t k;
  if (ctx.version < 10) {
    k = ctx.getInt("k", -1);
  } else {
    FailureOr<SmallVector<int64_t>> kValue = ctx.constantInts(1, "K");
    if (failed(kValue))
      return failure();
    if (kValue->size() != 1)
      return ctx.fail("K must hold one value");
    k = (*kValue)[0];
  }
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", -1), rankOf(x));
  if (!axis)
    return ctx.fail("axis is out of range");
  int64_t n = shapeOf(x)[*axis];
  if (k < 0 || k > n)
    return ctx.fail("K is " + Twine(k) + "; the axis has " + Twine(n) +
                    " elements");
  bool largest = ctx.getInt("largest", 1) != 0;
  // Sorted or not, the elements come out in order.
  (void)ctx.attr("sorted");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto sorted = b.create<SortOp>(loc, x, static_cast<uint64_t>(*axis),
                                 /*descending=*/largest);
  return ctx.setResults({sliceAxis(b, loc, sorted.getValues(), *axis, 0, k),
                         sliceAxis(b, loc, sorted.getIndices(), *axis, 0, k)});
}

} // namespace

void registerReductionOps(OpTable &table) {
  table.add("ArgMax", argReduceOp<ArgMaxOp>);
  table.add("ArgMin", argReduceOp<ArgMinOp>);
  table.add("CumSum", cumSumOp);
  table.add("CumProd", cumProdOp);
  table.add("TopK", topKOp);
  table.add("ReduceSum", reduceOp<Kind::Sum>);
  table.add("ReduceMean", reduceOp<Kind::Mean>);
  table.add("ReduceMax", reduceOp<Kind::Max>);
  table.add("ReduceMin", reduceOp<Kind::Min>);
  table.add("ReduceProd", reduceOp<Kind::Prod>);
  table.add("ReduceL1", reduceOp<Kind::L1>);
  table.add("ReduceL2", reduceOp<Kind::L2>);
  table.add("ReduceLogSum", reduceOp<Kind::LogSum>);
  table.add("ReduceLogSumExp", reduceOp<Kind::LogSumExp>);
  table.add("ReduceSumSquare", reduceOp<Kind::SumSquare>);
}

} // namespace onnx_import
} // namespace kiln
