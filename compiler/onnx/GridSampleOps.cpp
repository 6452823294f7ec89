//===- GridSampleOps.cpp - ONNX GridSample ---------------------------------===//
//
// GridSample reads X (N, C, D1, ..., Dr) at the points of a grid (N, H1,
// ..., Hk, r) of normalized coordinates, the last one along Dr. Per spatial
// dim the coordinate is unnormalized (align_corners), rounded for
// "nearest", and moved into the sampling box by padding_mode "border"
// (clamped, except for cubic sampling) or "reflection" (mirrored); then
// each tap of the filter (1 for
// nearest, 2 for linear, 4 for cubic) has an index and a weight, and an
// index outside the input reads 0 ("zeros"), the edge ("border") or its
// mirror image ("reflection"), as ONNX's reference does. X is viewed as
// rows (N * D1 * ... * Dr, C): each combination of taps over the dims is
// one kiln.gather of rows at a linear index, weighted and summed, so the
// channels are read together.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

/// Elementwise helpers on tensors of one shape and type.
struct Elementwise {
  OpBuilder &b;
  Location loc;
  RankedTensorType type;

  Value constant(double v) { return splat(b, loc, type, v); }
  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
  Value floor(Value x) { return b.create<FloorOp>(loc, x); }
  Value lt(Value x, Value y) {
    return b.create<CompareOp>(loc, CompareDirection::lt, x, y);
  }
  Value gt(Value x, Value y) {
    return b.create<CompareOp>(loc, CompareDirection::gt, x, y);
  }
  Value select(Value p, Value x, Value y) {
    return b.create<SelectOp>(loc, p, x, y);
  }
  Value clamp(Value x, double low, double high) {
    return b.create<MinOp>(loc, b.create<MaxOp>(loc, x, constant(low)),
                           constant(high));
  }

  /// x mirrored into [low, high] by the nearer border, repeatedly (ONNX's
  /// _gs_reflect); a box of width 0 maps everything to low.
  Value reflect(Value x, double low, double high) {
    double range = high - low;
    if (range <= 0)
      return constant(low);
    auto fold = [&](Value distance, bool fromLow) {
      // n whole widths and a remainder r past the border; an even n
      // leaves r from that border, an odd one from the other.
      Value n = floor(div(distance, constant(range)));
      Value r = sub(distance, mul(n, constant(range)));
      Value half = floor(div(n, constant(2)));
      Value even = b.create<CompareOp>(loc, CompareDirection::eq,
                                       sub(n, mul(half, constant(2))),
                                       constant(0));
      Value nearSide = fromLow ? add(constant(low), r) : sub(constant(high), r);
      Value farSide = fromLow ? sub(constant(high), r) : add(constant(low), r);
      return select(even, nearSide, farSide);
    };
    Value below = fold(sub(constant(low), x), /*fromLow=*/true);
    Value above = fold(sub(x, constant(high)), /*fromLow=*/false);
    return select(lt(x, constant(low)), below,
                  select(gt(x, constant(high)), above, x));
  }
};

struct GridSampleMode {
  std::string mode, padding;
  bool alignCorners;
};

/// One spatial dim's taps: an i64 index (in range) and a weight (zero
/// for a "zeros" read outside the input) per tap.
struct Taps {
  SmallVector<Value> index, weight;
};

Taps dimTaps(OpBuilder &b, Location loc, Value g, int64_t size,
             const GridSampleMode &m) {
  Elementwise e{b, loc, typeOf(g)};
  // The sampling box: pixel centres for align_corners, pixel edges
  // otherwise.
  double low = m.alignCorners ? 0 : -0.5;
  double high = m.alignCorners ? size - 1 : size - 0.5;
  Value x = m.alignCorners
                ? e.mul(e.add(g, e.constant(1)), e.constant((size - 1) / 2.0))
                : e.div(e.sub(e.mul(e.add(g, e.constant(1)), e.constant(size)),
                              e.constant(1)),
                        e.constant(2));
  if (m.mode == "nearest")
    x = b.create<RoundOp>(loc, x);
  Value outside = b.create<OrOp>(loc, e.lt(x, e.constant(low)),
                                 e.gt(x, e.constant(high)));
  // Cubic sampling with border padding clamps its taps only, as PyTorch
  // and ONNX Runtime do (ONNX's reference clamps the point first, which
  // weights the edge pixel differently).
  if (m.padding == "border" && m.mode != "cubic")
    x = e.select(outside, e.clamp(x, 0, size - 1), x);
  else if (m.padding == "reflection")
    x = e.select(outside, e.reflect(x, low, high), x);

  SmallVector<int64_t> offsets;
  SmallVector<Value> weights;
  Value base;
  if (m.mode == "nearest") {
    base = x;
    offsets = {0};
    weights = {e.constant(1)};
  } else {
    base = e.floor(x);
    Value t = e.sub(x, base);
    if (m.mode == "linear") {
      offsets = {0, 1};
      weights = {e.sub(e.constant(1), t), t};
    } else {
      // Keys' cubic convolution with a = -0.75, at distances t + 1, t,
      // 1 - t and 2 - t.
      const double a = -0.75;
      auto far = [&](Value d) {
        Value v = e.add(e.mul(e.constant(a), d), e.constant(-5 * a));
        v = e.add(e.mul(v, d), e.constant(8 * a));
        return e.add(e.mul(v, d), e.constant(-4 * a));
      };
      auto near = [&](Value d) {
        Value v = e.add(e.mul(e.constant(a + 2), d), e.constant(-(a + 3)));
        return e.add(e.mul(e.mul(v, d), d), e.constant(1));
      };
      Value one = e.constant(1);
      offsets = {-1, 0, 1, 2};
      weights = {far(e.add(t, one)), near(t), near(e.sub(one, t)),
                 far(e.sub(e.constant(2), t))};
    }
  }
  auto indexType = RankedTensorType::get(typeOf(g).getShape(), b.getI64Type());
  Taps taps;
  for (auto [offset, weight] : llvm::zip(offsets, weights)) {
    Value p = e.add(base, e.constant(offset));
    if (m.padding == "zeros") {
      Value inside = b.create<NotOp>(
          loc, b.create<OrOp>(loc, e.lt(p, e.constant(0)),
                              e.gt(p, e.constant(size - 1))));
      weight = e.select(inside, weight, e.constant(0));
      p = e.clamp(p, 0, size - 1);
    } else if (m.padding == "border") {
      p = e.clamp(p, 0, size - 1);
    } else {
      p = e.clamp(e.reflect(p, low, high), 0, size - 1);
    }
    // Whole numbers here, but a reflected one may carry a fraction:
    // ONNX truncates it.
    taps.index.push_back(b.create<CastOp>(loc, indexType, p));
    taps.weight.push_back(weight);
  }
  return taps;
}

LogicalResult gridSampleOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)) ||
      failed(ctx.requireFloat(1)))
    return failure();
  Value x = ctx.input(0), grid = ctx.input(1);
  int64_t rank = rankOf(x), r = rank - 2;
  ArrayRef<int64_t> xShape = shapeOf(x), gShape = shapeOf(grid);
  if (rank < 3 || rankOf(grid) != rank || gShape.back() != r ||
      gShape[0] != xShape[0])
    return ctx.fail("X must be (N, C, D1..Dr) and the grid (N, H1..Hr, r) "
                    "with the same N");
  if (ctx.version < 20 && r != 2)
    return ctx.fail("GridSample before opset 20 samples 4-d inputs");
  GridSampleMode m;
  m.mode = ctx.getString("mode", ctx.version < 20 ? "bilinear" : "linear");
  if (m.mode == "bilinear")
    m.mode = "linear";
  else if (m.mode == "bicubic")
    m.mode = "cubic";
  if (m.mode != "linear" && m.mode != "nearest" && m.mode != "cubic")
    return ctx.fail("mode '" + m.mode + "' is not linear, nearest or cubic");
  m.padding = ctx.getString("padding_mode", "zeros");
  if (m.padding != "zeros" && m.padding != "border" &&
      m.padding != "reflection")
    return ctx.fail("padding_mode '" + m.padding +
                    "' is not zeros, border or reflection");
  m.alignCorners = ctx.getInt("align_corners", 0) != 0;
  for (int64_t d : xShape.drop_front(2))
    if (d == 0)
      return ctx.fail("X has an empty spatial dim");

  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  int64_t n = xShape[0], c = xShape[1];
  SmallVector<int64_t> pointShape(gShape.drop_back());
  auto indexType = RankedTensorType::get(pointShape, b.getI64Type());
  // Per dim, the grid's coordinate for it: component r - 1 - i.
  SmallVector<Taps> taps;
  for (int64_t i = 0; i < r; ++i) {
    Value g = reshape(b, loc, sliceAxis(b, loc, grid, r + 1, r - 1 - i, r - i),
                      pointShape);
    taps.push_back(dimTaps(b, loc, g, xShape[2 + i], m));
  }
  // X as rows (N * D1 * ... * Dr, C).
  SmallVector<int64_t> toRows{0};
  for (int64_t i = 0; i < r; ++i)
    toRows.push_back(2 + i);
  toRows.push_back(1);
  int64_t points = numElementsOf(xShape.drop_front(2));
  Value rows = reshape(b, loc, transpose(b, loc, x, toRows), {n * points, c});
  Value batch = b.create<MulOp>(loc, b.create<IotaOp>(loc, indexType, 0),
                                splat(b, loc, indexType, points));
  SmallVector<int64_t> sampledShape(pointShape);
  sampledShape.push_back(c);
  SmallVector<int64_t> weightShape(pointShape);
  weightShape.push_back(1);
  Value sum;
  int64_t perDim = taps[0].index.size();
  int64_t combos = 1;
  for (int64_t i = 0; i < r; ++i)
    combos *= perDim;
  for (int64_t k = 0; k < combos; ++k) {
    Value linear = batch, weight;
    int64_t rest = k, stride = points;
    for (int64_t i = 0; i < r; ++i) {
      int64_t t = rest % perDim;
      rest /= perDim;
      stride /= xShape[2 + i];
      linear = b.create<AddOp>(
          loc, linear,
          b.create<MulOp>(loc, taps[i].index[t],
                          splat(b, loc, indexType, stride)));
      weight = weight ? Value(b.create<MulOp>(loc, weight, taps[i].weight[t]))
                      : taps[i].weight[t];
    }
    Value sampled = b.create<GatherOp>(loc, rows, linear);
    weight = cast(b, loc, reshape(b, loc, weight, weightShape),
                  elementTypeOf(x));
    Value term = b.create<MulOp>(loc, sampled,
                                 broadcastTo(b, loc, weight, sampledShape));
    sum = sum ? Value(b.create<AddOp>(loc, sum, term)) : term;
  }
  // (N, H1..Hr, C) to (N, C, H1..Hr).
  SmallVector<int64_t> toChannels{0, r + 1};
  for (int64_t i = 0; i < r; ++i)
    toChannels.push_back(1 + i);
  return ctx.setResults(transpose(b, loc, sum, toChannels));
}

} // namespace

void registerGridSampleOps(OpTable &table) {
  table.add("GridSample", gridSampleOp);
}

} // namespace onnx_import
} // namespace kiln
