//===- NNOps.cpp - ONNX convolution, pooling and unfolding ---------------===//
//
// Conv and ConvTranspose become kiln.conv (ONNX's NCHW layouts are kiln's);
// MaxPool and AveragePool become kiln.reduce_window over the spatial dims.
// The padding rules are resolved here, at import time, into explicit low
// and high paddings:
//  - auto_pad SAME_UPPER / SAME_LOWER pad so that out = ceil(in / stride),
//    the odd element going high or low; VALID pads nothing;
//  - ceil_mode adds high padding for a last, partial window, unless that
//    window would start in the padding;
//  - ConvTranspose is a convolution of the input dilated by the strides
//    with the kernel flipped and its channel dims swapped (per group),
//    padded by (k - 1) * dilation - pad; a negative padding crops.
// AveragePool divides the window sums by a constant tensor of per-position
// counts (with or without the padding, count_include_pad), computed here.
// MaxPool's Indices, MaxUnpool and Col2Im (im2col's inverse) address
// elements by flat indices: the window taps and block positions are known
// at compile time, the values are gathered or scattered at run time.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"
#include "LoopBuilder.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {

FailureOr<StridedWindow> readStridedWindow(NodeContext &ctx, int64_t n) {
  StridedWindow w;
  w.strides = ctx.getInts("strides").value_or(SmallVector<int64_t>(n, 1));
  w.dilations = ctx.getInts("dilations").value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> pads =
      ctx.getInts("pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if (w.strides.size() != size_t(n) || w.dilations.size() != size_t(n) ||
      pads.size() != size_t(2 * n))
    return ctx.fail("strides, dilations and pads must have one entry (two "
                    "for pads) per spatial dim");
  for (int64_t i = 0; i < n; ++i)
    if (w.strides[i] < 1 || w.dilations[i] < 1 || pads[i] < 0 ||
        pads[i + n] < 0)
      return ctx.fail("strides and dilations must be positive and pads "
                      "non-negative");
  w.lo.assign(pads.begin(), pads.begin() + n);
  w.hi.assign(pads.begin() + n, pads.end());
  return w;
}

namespace {

/// The window parameters of a Conv or pooling node, per spatial dim.
struct Window : StridedWindow {
  SmallVector<int64_t> kernel;
};

int64_t extent(int64_t k, int64_t d) { return (k - 1) * d + 1; }

/// Reads kernel_shape (or takes `kernel`), strides, dilations, pads and
/// auto_pad for `spatial` input dims of sizes `in`.
FailureOr<Window> readWindow(NodeContext &ctx, ArrayRef<int64_t> in,
                             ArrayRef<int64_t> kernel, bool ceilMode) {
  size_t n = in.size();
  Window w;
  w.kernel = ctx.getInts("kernel_shape").value_or(SmallVector<int64_t>(kernel));
  if (w.kernel.size() != n)
    return ctx.fail("kernel_shape must have one entry per spatial dim");
  if (llvm::any_of(w.kernel, [](int64_t k) { return k < 1; }))
    return ctx.fail("kernel sizes must be positive");
  FailureOr<StridedWindow> strided = readStridedWindow(ctx, n);
  if (failed(strided))
    return failure();
  static_cast<StridedWindow &>(w) = *strided;
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(
          (out - 1) * w.strides[i] + extent(w.kernel[i], w.dilations[i]) -
              in[i],
          0);
      int64_t small = total / 2;
      w.lo[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.hi[i] = total - w.lo[i];
    }
  } else if (autoPad == "VALID") {
    std::fill(w.lo.begin(), w.lo.end(), 0);
    std::fill(w.hi.begin(), w.hi.end(), 0);
  } else if (autoPad != "NOTSET") {
    (void)ctx.fail("auto_pad '" + autoPad + "' is not supported");
    return failure();
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t span = in[i] + w.lo[i] + w.hi[i];
    int64_t e = extent(w.kernel[i], w.dilations[i]);
    if (span < e) {
      (void)ctx.fail("the window is larger than the padded input");
      return failure();
    }
    if (!ceilMode)
      continue;
    int64_t out = (span - e + w.strides[i] - 1) / w.strides[i] + 1;
    // A last window that would start in the high padding is dropped.
    if ((out - 1) * w.strides[i] >= in[i] + w.lo[i])
      --out;
    w.hi[i] += std::max<int64_t>((out - 1) * w.strides[i] + e - span, 0);
  }
  return w;
}

/// Prepends the batch and channel dims (window 1, stride 1, no padding).
SmallVector<int64_t> full(ArrayRef<int64_t> spatial, int64_t fill) {
  SmallVector<int64_t> out{fill, fill};
  out.append(spatial.begin(), spatial.end());
  return out;
}

Value addBias(OpBuilder &b, Location loc, Value y, Value bias) {
  SmallVector<int64_t> shape(rankOf(y), 1);
  shape[1] = shapeOf(y)[1];
  return b.create<AddOp>(
      loc, y, broadcastTo(b, loc, reshape(b, loc, bias, shape), shapeOf(y)));
}

/// kiln.conv of `x` by `w` with the node's window attributes (strides,
/// pads, dilations, group, auto_pad, kernel_shape).
FailureOr<Value> convolve(NodeContext &ctx, Value x, Value w) {
  int64_t rank = rankOf(x);
  if (rank < 3 || rankOf(w) != rank)
    return ctx.fail("X and W must have the same rank, at least 3");
  int64_t groups = ctx.getInt("group", 1);
  if (groups < 1 || shapeOf(x)[1] % groups ||
      shapeOf(x)[1] / groups != shapeOf(w)[1] || shapeOf(w)[0] % groups)
    return ctx.fail("the channels of X and W do not match group " +
                    Twine(groups));
  FailureOr<Window> win = readWindow(ctx, shapeOf(x).drop_front(2),
                                     shapeOf(w).drop_front(2), false);
  if (failed(win))
    return failure();
  if (ArrayRef<int64_t>(win->kernel) != shapeOf(w).drop_front(2))
    return ctx.fail("kernel_shape disagrees with W");
  SmallVector<int64_t> ones(rank - 2, 1);
  return ctx.b
      .create<ConvOp>(ctx.loc, x, w, win->strides, win->lo, win->hi, ones,
                      win->dilations, groups)
      .getResult();
}

LogicalResult convOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  FailureOr<Value> y = convolve(ctx, ctx.input(0), ctx.input(1));
  if (failed(y))
    return failure();
  if (ctx.hasInput(2))
    *y = addBias(ctx.b, ctx.loc, *y, ctx.input(2));
  return ctx.setResults(*y);
}

/// An 8-bit input of ConvInteger or QLinearConv minus its zero point, as
/// f64: kiln.conv takes floats, and f64 holds the differences (at most 255
/// in magnitude), their products and every sum below 2^53 exactly, so the
/// convolution is the exact integer one. The zero point is a scalar, or
/// for the weights 1-d with one entry per output channel.
FailureOr<Value> shiftedExact(NodeContext &ctx, Value v, unsigned zeroPoint,
                              bool perChannel) {
  Type elementType = elementTypeOf(v);
  if (!isa<IntegerType>(elementType) ||
      elementType.getIntOrFloatBitWidth() != 8)
    return ctx.fail("the input and weights must be int8 or uint8");
  Value wide = cast(ctx.b, ctx.loc, v, ctx.b.getF64Type());
  if (!ctx.hasInput(zeroPoint))
    return wide;
  Value zp = ctx.input(zeroPoint);
  if (elementTypeOf(zp) != elementType)
    return ctx.fail("a zero point must have its tensor's element type");
  if (numElementsOf(shapeOf(zp)) == 1 && rankOf(zp) <= 1) {
    zp = reshape(ctx.b, ctx.loc, zp, {});
  } else if (perChannel && rankOf(zp) == 1 && rankOf(v) >= 1 &&
             shapeOf(zp)[0] == shapeOf(v)[0]) {
    SmallVector<int64_t> shape(rankOf(v), 1);
    shape[0] = shapeOf(zp)[0];
    zp = reshape(ctx.b, ctx.loc, zp, shape);
  } else {
    return ctx.fail("a zero point must be a scalar, or for the weights have "
                    "one entry per output channel");
  }
  return binary<SubOp>(ctx.b, ctx.loc, wide,
                       cast(ctx.b, ctx.loc, zp, ctx.b.getF64Type()));
}

/// ConvInteger: (x - x_zero_point) * (w - w_zero_point) convolved exactly
/// (see shiftedExact), as i32.
LogicalResult convIntegerOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> x = shiftedExact(ctx, ctx.input(0), 2, false);
  if (failed(x))
    return failure();
  FailureOr<Value> w = shiftedExact(ctx, ctx.input(1), 3, true);
  if (failed(w))
    return failure();
  FailureOr<Value> y = convolve(ctx, *x, *w);
  if (failed(y))
    return failure();
  return ctx.setResults(cast(ctx.b, ctx.loc, *y, ctx.b.getI32Type()));
}

/// QLinearConv: the exact integer convolution of ConvInteger plus the i32
/// bias, scaled by x_scale * w_scale / y_scale in f32 (w_scale may have
/// one entry per output channel), rounded half to even, shifted by
/// y_zero_point and saturated to its type.
LogicalResult qLinearConvOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(8)))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  FailureOr<Value> x = shiftedExact(ctx, ctx.input(0), 2, false);
  if (failed(x))
    return failure();
  FailureOr<Value> w = shiftedExact(ctx, ctx.input(3), 5, true);
  if (failed(w))
    return failure();
  FailureOr<Value> y = convolve(ctx, *x, *w);
  if (failed(y))
    return failure();
  if (ctx.hasInput(8)) {
    if (!elementTypeOf(ctx.input(8)).isInteger(32) ||
        rankOf(ctx.input(8)) != 1 || shapeOf(ctx.input(8))[0] != shapeOf(*y)[1])
      return ctx.fail("B must be an int32 vector with one entry per output "
                      "channel");
    *y = addBias(b, loc, *y, cast(b, loc, ctx.input(8), b.getF64Type()));
  }
  Value xScale = ctx.input(1), wScale = ctx.input(4), yScale = ctx.input(6);
  for (Value scale : {xScale, wScale, yScale})
    if (!elementTypeOf(scale).isF32())
      return ctx.fail("the scales must be float");
  if (numElementsOf(shapeOf(xScale)) != 1 ||
      numElementsOf(shapeOf(yScale)) != 1)
    return ctx.fail("x_scale and y_scale must be scalars");
  xScale = reshape(b, loc, xScale, {});
  yScale = reshape(b, loc, yScale, {});
  if (numElementsOf(shapeOf(wScale)) == 1) {
    wScale = reshape(b, loc, wScale, {});
  } else if (rankOf(wScale) == 1 && shapeOf(wScale)[0] == shapeOf(*y)[1]) {
    SmallVector<int64_t> shape(rankOf(*y), 1);
    shape[1] = shapeOf(wScale)[0];
    wScale = reshape(b, loc, wScale, shape);
  } else {
    return ctx.fail("w_scale must be a scalar or have one entry per output "
                    "channel");
  }
  Value yZeroPoint = ctx.input(7);
  Type resultType = elementTypeOf(yZeroPoint);
  if (resultType != elementTypeOf(ctx.input(0)) ||
      numElementsOf(shapeOf(yZeroPoint)) != 1)
    return ctx.fail("y_zero_point must be a scalar of x's element type");
  Value multiplier =
      binary<DivOp>(b, loc, binary<MulOp>(b, loc, xScale, wScale), yScale);
  Value scaled =
      binary<MulOp>(b, loc, cast(b, loc, *y, b.getF32Type()), multiplier);
  Value shifted = binary<AddOp>(
      b, loc, b.create<RoundOp>(loc, scaled),
      cast(b, loc, reshape(b, loc, yZeroPoint, {}), b.getF32Type()));
  return ctx.setResults(cast(b, loc, shifted, resultType));
}

LogicalResult convTransposeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0), w = ctx.input(1);
  int64_t rank = rankOf(x), n = rank - 2;
  if (rank < 3 || rankOf(w) != rank)
    return ctx.fail("X and W must have the same rank, at least 3");
  int64_t groups = ctx.getInt("group", 1);
  int64_t c = shapeOf(x)[1];
  if (groups < 1 || c % groups || shapeOf(w)[0] != c)
    return ctx.fail("W's first dim must be X's channels, divisible by group");
  int64_t perGroupOut = shapeOf(w)[1], m = perGroupOut * groups;
  SmallVector<int64_t> kernel(shapeOf(w).drop_front(2));
  if (std::optional<SmallVector<int64_t>> k = ctx.getInts("kernel_shape");
      k && *k != kernel)
    return ctx.fail("kernel_shape does not match W's spatial dims");
  FailureOr<StridedWindow> window = readStridedWindow(ctx, n);
  if (failed(window))
    return failure();
  SmallVector<int64_t> strides = window->strides, dilations = window->dilations;
  SmallVector<int64_t> pads(window->lo);
  pads.append(window->hi);
  SmallVector<int64_t> outputPadding =
      ctx.getInts("output_padding").value_or(SmallVector<int64_t>(n, 0));
  if (outputPadding.size() != size_t(n))
    return ctx.fail("output_padding must have one entry per spatial dim");
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape = ctx.getInts("output_shape");
  if (outputShape && outputShape->size() == size_t(rank))
    outputShape = SmallVector<int64_t>(outputShape->begin() + 2,
                                       outputShape->end());
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = shapeOf(x)[2 + i];
    int64_t natural = strides[i] * (in - 1) + outputPadding[i] +
                      extent(kernel[i], dilations[i]);
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t target = outputShape ? (*outputShape)[i] : in * strides[i];
      int64_t total = natural - target;
      bool upper = autoPad != "SAME_LOWER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + n] = total - pads[i];
    } else if (autoPad == "VALID") {
      pads[i] = pads[i + n] = 0;
    }
  }
  // The kernel for a forward convolution: per group [M/g, C/g, k...], with
  // every spatial dim reversed.
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<int64_t> grouped{groups, c / groups, perGroupOut};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm{0, 2, 1};
  for (int64_t i = 0; i < n; ++i)
    perm.push_back(3 + i);
  SmallVector<int64_t> forwardShape{m, c / groups};
  forwardShape.append(kernel.begin(), kernel.end());
  Value kernelT = reshape(
      b, loc, transpose(b, loc, reshape(b, loc, w, grouped), perm),
      forwardShape);
  SmallVector<int64_t> spatialDims;
  for (int64_t i = 0; i < n; ++i)
    spatialDims.push_back(2 + i);
  kernelT = b.create<ReverseOp>(loc, kernelT, spatialDims);
  SmallVector<int64_t> lo(n), hi(n), ones(n, 1);
  SmallVector<int64_t> cropLo(n, 0), cropHi(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t e = extent(kernel[i], dilations[i]);
    lo[i] = e - 1 - pads[i];
    hi[i] = e - 1 - pads[i + n] + outputPadding[i];
    cropLo[i] = std::max<int64_t>(-lo[i], 0);
    cropHi[i] = std::max<int64_t>(-hi[i], 0);
    lo[i] = std::max<int64_t>(lo[i], 0);
    hi[i] = std::max<int64_t>(hi[i], 0);
  }
  Value y = b.create<ConvOp>(loc, x, kernelT, ones, lo, hi, strides,
                             dilations, groups);
  SmallVector<int64_t> start(rank, 0), limit(shapeOf(y)), step(rank, 1);
  for (int64_t i = 0; i < n; ++i) {
    start[2 + i] = cropLo[i];
    limit[2 + i] -= cropHi[i];
    if (limit[2 + i] < start[2 + i])
      return ctx.fail("the pads remove more than the whole output");
  }
  y = slice(b, loc, y, start, limit, step);
  if (ctx.hasInput(2))
    y = addBias(b, loc, y, ctx.input(2));
  return ctx.setResults(y);
}

/// MaxPool's Indices: per output element, the flat index into X (batch
/// and channel included; the spatial dims row-major, or column-major for
/// storage_order 1) of the first tap of its window, in row-major kernel
/// order, that holds the maximum `y` and lies inside X (not in the pads).
/// The taps are strided slices of X padded by the window's pads, visited
/// last to first so that the first match is the one kept.
Value maxPoolIndices(OpBuilder &b, Location loc, Value x, Value y,
                     const Window &win, bool columnMajor) {
  ArrayRef<int64_t> xShape = shapeOf(x), yShape = shapeOf(y);
  int64_t n = win.kernel.size(), rank = n + 2;
  ArrayRef<int64_t> in = xShape.drop_front(2), out = yShape.drop_front(2);
  SmallVector<int64_t> spatialStride(n, 1);
  if (columnMajor)
    for (int64_t i = 1; i < n; ++i)
      spatialStride[i] = spatialStride[i - 1] * in[i - 1];
  else
    for (int64_t i = n - 2; i >= 0; --i)
      spatialStride[i] = spatialStride[i + 1] * in[i + 1];
  int64_t plane = numElementsOf(in);
  // (n * C + c) * plane for every output element.
  auto indexType = RankedTensorType::get(yShape, b.getI64Type());
  Value base = b.create<MulOp>(
      loc,
      b.create<AddOp>(
          loc,
          b.create<MulOp>(loc, b.create<IotaOp>(loc, indexType, 0),
                          splat(b, loc, indexType, xShape[1])),
          b.create<IotaOp>(loc, indexType, 1)),
      splat(b, loc, indexType, plane));
  SmallVector<int64_t> zeros(rank, 0), lo(rank, 0), hi(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    lo[2 + i] = win.lo[i];
    hi[2 + i] = win.hi[i];
  }
  Value padded = b.create<PadOp>(loc, x, scalar(b, loc, elementTypeOf(x), 0),
                                 lo, hi, zeros);
  int64_t taps = numElementsOf(win.kernel), points = numElementsOf(out);
  Value indices = splat(b, loc, indexType, -1);
  for (int64_t k = taps - 1; k >= 0; --k) {
    SmallVector<int64_t> offset(n);
    for (int64_t i = n - 1, rest = k; i >= 0; --i) {
      offset[i] = rest % win.kernel[i];
      rest /= win.kernel[i];
    }
    // Where this tap reads per output point, and whether that is in X.
    SmallVector<int64_t> where(points);
    SmallVector<int64_t> inside(points);
    for (int64_t p = 0; p < points; ++p) {
      int64_t flat = 0, ok = 1;
      for (int64_t i = n - 1, rest = p; i >= 0; --i) {
        int64_t o = rest % out[i];
        rest /= out[i];
        int64_t at = o * win.strides[i] + offset[i] * win.dilations[i] -
                     win.lo[i];
        ok &= at >= 0 && at < in[i];
        flat += at * spatialStride[i];
      }
      where[p] = ok ? flat : 0;
      inside[p] = ok;
    }
    SmallVector<int64_t> start(rank, 0), limit(shapeOf(padded)),
        step(rank, 1);
    for (int64_t i = 0; i < n; ++i) {
      start[2 + i] = offset[i] * win.dilations[i];
      limit[2 + i] = start[2 + i] + (out[i] - 1) * win.strides[i] + 1;
      step[2 + i] = win.strides[i];
    }
    Value tap = slice(b, loc, padded, start, limit, step);
    Value match = b.create<AndOp>(
        loc, b.create<CompareOp>(loc, CompareDirection::eq, tap, y),
        broadcastTo(b, loc,
                    constantInts(b, loc, b.getI1Type(), out, inside), yShape));
    Value at = b.create<AddOp>(
        loc, base,
        broadcastTo(b, loc, constantInts(b, loc, b.getI64Type(), out, where),
                    yShape));
    indices = b.create<SelectOp>(loc, match, at, indices);
  }
  return indices;
}

LogicalResult maxPoolOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3 || isBool(x))
    return ctx.fail("X must be a numeric tensor of rank >= 3");
  int64_t storageOrder = ctx.getInt("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return ctx.fail("storage_order must be 0 or 1");
  FailureOr<Window> win = readWindow(ctx, shapeOf(x).drop_front(2), {},
                                     ctx.getInt("ceil_mode", 0));
  if (failed(win))
    return failure();
  Value y = ctx.b.create<ReduceWindowOp>(
      ctx.loc, x, ReduceWindowKind::Max, full(win->kernel, 1),
      full(win->strides, 1), full(win->lo, 0), full(win->hi, 0),
      full(win->dilations, 1));
  if (!ctx.hasOutput(1))
    return ctx.setResults(y);
  if (numElementsOf(shapeOf(y)) == 0)
    return ctx.setResults(
        {y, splat(ctx.b, ctx.loc,
                  RankedTensorType::get(shapeOf(y), ctx.b.getI64Type()), 0)});
  return ctx.setResults(
      {y, maxPoolIndices(ctx.b, ctx.loc, x, y, *win, storageOrder == 1)});
}

/// Col2Im (the inverse of im2col, torch.nn.Fold): input (N, C * K, L)
/// holds, per channel c and block offset k, the value of each of the L
/// sliding blocks; each is added into the image pixel it covers. The
/// pixel of every (c, k, l) is known at compile time: one kiln.scatter_add
/// of the rows (c, k, l) -> N values into a table of image pixels (plus a
/// last row for the blocks' taps in the padding, dropped).
LogicalResult col2ImOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) != 3 || isBool(x))
    return ctx.fail("the input must be a numeric (N, C * prod(block_shape), "
                    "L) tensor");
  FailureOr<SmallVector<int64_t>> image = ctx.constantInts(1, "image_shape");
  FailureOr<SmallVector<int64_t>> block = ctx.constantInts(2, "block_shape");
  if (failed(image) || failed(block))
    return failure();
  int64_t n = image->size();
  if (n == 0 || block->size() != size_t(n))
    return ctx.fail("image_shape and block_shape must have one entry per "
                    "spatial dim");
  FailureOr<StridedWindow> window = readStridedWindow(ctx, n);
  if (failed(window))
    return failure();
  ArrayRef<int64_t> strides = window->strides, dilations = window->dilations;
  ArrayRef<int64_t> lo = window->lo;
  SmallVector<int64_t> blocks(n);
  for (int64_t i = 0; i < n; ++i) {
    if ((*image)[i] < 1 || (*block)[i] < 1)
      return ctx.fail("image and block sizes must be positive");
    int64_t span = (*image)[i] + lo[i] + window->hi[i] -
                   extent((*block)[i], dilations[i]);
    if (span < 0)
      return ctx.fail("the block is larger than the padded image in dim " +
                      Twine(i));
    blocks[i] = span / strides[i] + 1;
  }
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t taps = numElementsOf(*block), count = numElementsOf(blocks);
  if (shape[1] % taps || shape[2] != count)
    return ctx.fail("the input's dims 1 and 2 must be C * " + Twine(taps) +
                    " and the " + Twine(count) + " sliding blocks");
  int64_t batch = shape[0], channels = shape[1] / taps;
  int64_t pixels = numElementsOf(*image);
  int64_t rows = channels * taps * count;
  if (rows > NodeContext::kMaxFoldedElements)
    return ctx.fail("the input has more than 2^24 (channel, tap, block) rows");
  SmallVector<int64_t> target;
  target.reserve(rows);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < taps; ++k)
      for (int64_t l = 0; l < count; ++l) {
        int64_t pixel = 0, inside = 1;
        for (int64_t i = n - 1, kr = k, lr = l, stride = 1; i >= 0; --i) {
          int64_t at = (lr % blocks[i]) * strides[i] - lo[i] +
                       (kr % (*block)[i]) * dilations[i];
          kr /= (*block)[i];
          lr /= blocks[i];
          inside &= at >= 0 && at < (*image)[i];
          pixel += at * stride;
          stride *= (*image)[i];
        }
        target.push_back(inside ? c * pixels + pixel : channels * pixels);
      }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // Rows (C * K * L, N): the batch is the row's contents.
  Value updates = reshape(b, loc, transpose(b, loc, x, {1, 2, 0}),
                          {rows, batch});
  Value table = splat(
      b, loc,
      RankedTensorType::get({channels * pixels + 1, batch}, elementTypeOf(x)),
      0);
  Value sums = b.create<ScatterAddOp>(
      loc, table, constantInts(b, loc, b.getI64Type(), {rows}, target),
      updates);
  sums = sliceAxis(b, loc, sums, 0, 0, channels * pixels);
  SmallVector<int64_t> resultShape{channels};
  resultShape.append(image->begin(), image->end());
  resultShape.push_back(batch);
  Value y = reshape(b, loc, sums, resultShape);
  SmallVector<int64_t> toBatchFirst{n + 1};
  for (int64_t i = 0; i <= n; ++i)
    toBatchFirst.push_back(i);
  return ctx.setResults(transpose(b, loc, y, toBatchFirst));
}

/// MaxUnpool: X's values written into zeros at the flat indices I (a
/// later write of one index wins, as in ONNX's reference), in a tensor of
/// the shape MaxPool's window gives back; a larger output_shape pads that
/// with zeros at the high end of each dim, as ONNX's reference does.
LogicalResult maxUnpoolOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), indices = ctx.input(1);
  int64_t rank = rankOf(x), n = rank - 2;
  if (rank < 3 || isBool(x))
    return ctx.fail("X must be a numeric tensor of rank >= 3");
  if (shapeOf(indices) != shapeOf(x) || !isa<IntegerType>(elementTypeOf(indices)))
    return ctx.fail("I must be an integer tensor of X's shape");
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (!kernel || kernel->size() != size_t(n))
    return ctx.fail("kernel_shape must have one entry per spatial dim");
  // MaxUnpool has no dilations: its window reads as undilated.
  FailureOr<StridedWindow> window = readStridedWindow(ctx, n);
  if (failed(window))
    return failure();
  SmallVector<int64_t> inferred(shapeOf(x).take_front(2));
  for (int64_t i = 0; i < n; ++i) {
    int64_t size = (shapeOf(x)[2 + i] - 1) * window->strides[i] -
                   (window->lo[i] + window->hi[i]) + (*kernel)[i];
    if (size < 1)
      return ctx.fail("the unpooled spatial dim " + Twine(i) +
                      " would have " + Twine(size) + " elements");
    inferred.push_back(size);
  }
  SmallVector<int64_t> shape = inferred;
  if (ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> outputShape =
        ctx.constantInts(2, "output_shape");
    if (failed(outputShape))
      return failure();
    if (outputShape->size() != size_t(rank))
      return ctx.fail("output_shape must have one entry per dim of X");
    shape = *outputShape;
    for (int64_t i = 0; i < rank; ++i)
      if (shape[i] < inferred[i] || (i < 2 && shape[i] != inferred[i]))
        return ctx.fail("output_shape must keep X's batch and channels and "
                        "be at least the unpooled shape in each dim");
  }
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  int64_t total = numElementsOf(inferred), count = numElementsOf(shapeOf(x));
  // The flat values written one after the other by a kiln.for, so that
  // the last write of a repeated index wins (overlapping pooling windows
  // repeat indices); indices outside the unpooled tensor write a last
  // row that is dropped.
  Value flatX = reshape(b, loc, x, {count});
  Value flatI = reshape(b, loc, cast(b, loc, indices, b.getI64Type()), {count});
  auto flatType = typeOf(flatI);
  Value valid = b.create<AndOp>(
      loc,
      b.create<CompareOp>(loc, CompareDirection::ge, flatI,
                          splat(b, loc, flatType, 0)),
      b.create<CompareOp>(loc, CompareDirection::lt, flatI,
                          splat(b, loc, flatType, total)));
  Value target =
      b.create<SelectOp>(loc, valid, flatI, splat(b, loc, flatType, total));
  Value empty =
      splat(b, loc, RankedTensorType::get({total + 1}, elementTypeOf(x)), 0);
  Value y = writeRowsInOrder(b, loc, empty, target, flatX);
  y = reshape(b, loc, sliceAxis(b, loc, y, 0, 0, total), inferred);
  if (shape == inferred)
    return ctx.setResults(y);
  // A larger output_shape holds the unpooled tensor at its low corner.
  SmallVector<int64_t> zeros(rank, 0), high(rank);
  for (int64_t i = 0; i < rank; ++i)
    high[i] = shape[i] - inferred[i];
  return ctx.setResults(b.create<PadOp>(
      loc, y, scalar(b, loc, elementTypeOf(x), 0), zeros, high, zeros));
}

LogicalResult averagePoolOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3)
    return ctx.fail("X must have rank >= 3");
  SmallVector<int64_t> explicitPads =
      ctx.getInts("pads").value_or(SmallVector<int64_t>{});
  FailureOr<Window> win = readWindow(ctx, shapeOf(x).drop_front(2), {},
                                     ctx.getInt("ceil_mode", 0));
  if (failed(win))
    return failure();
  Value sum = ctx.b.create<ReduceWindowOp>(
      ctx.loc, x, ReduceWindowKind::Sum, full(win->kernel, 1),
      full(win->strides, 1), full(win->lo, 0), full(win->hi, 0),
      full(win->dilations, 1));
  // Divisor per output position: the window taps inside the input, plus,
  // with count_include_pad, those in the pads (not the ceil_mode extra).
  bool includePad = ctx.getInt("count_include_pad", 0);
  int64_t n = win->kernel.size();
  ArrayRef<int64_t> outShape = shapeOf(sum).drop_front(2);
  SmallVector<SmallVector<double>> perDim(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = shapeOf(x)[2 + i];
    int64_t padHi = win->hi[i];
    if (includePad) {
      // The pads the model states (or auto_pad's), not ceil_mode's extra.
      std::string autoPad = ctx.getString("auto_pad", "NOTSET");
      if (autoPad == "NOTSET")
        padHi = explicitPads.empty() ? 0 : explicitPads[i + n];
    }
    for (int64_t o = 0; o < outShape[i]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < win->kernel[i]; ++k) {
        int64_t p = o * win->strides[i] + k * win->dilations[i] - win->lo[i];
        count += includePad ? (p >= -win->lo[i] && p < in + padHi)
                            : (p >= 0 && p < in);
      }
      perDim[i].push_back(std::max<int64_t>(count, 1));
    }
  }
  SmallVector<double> counts(numElementsOf(outShape), 1);
  for (int64_t flat = 0; flat < static_cast<int64_t>(counts.size()); ++flat) {
    int64_t rest = flat;
    for (int64_t i = n - 1; i >= 0; --i) {
      counts[flat] *= perDim[i][rest % outShape[i]];
      rest /= outShape[i];
    }
  }
  Value divisor = constantFloats(ctx.b, ctx.loc, elementTypeOf(x),
                                 full(outShape, 1), counts);
  return ctx.setResults(ctx.b.create<DivOp>(
      ctx.loc, sum, broadcastTo(ctx.b, ctx.loc, divisor, shapeOf(sum))));
}

/// LpPool: (sum of |x|^p over the window)^(1/p), padding contributing 0.
LogicalResult lpPoolOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) < 3)
    return ctx.fail("X must have rank >= 3");
  int64_t p = ctx.getInt("p", 2);
  if (p < 1)
    return ctx.fail("p is " + Twine(p) + "; it must be at least 1");
  FailureOr<Window> win = readWindow(ctx, shapeOf(x).drop_front(2), {},
                                     ctx.getInt("ceil_mode", 0));
  if (failed(win))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value magnitude = b.create<AbsOp>(loc, x);
  auto power = [&](Value v, double e) {
    return b.create<PowOp>(loc, v, splat(b, loc, typeOf(v), e));
  };
  Value powered = p == 1   ? magnitude
                  : p == 2 ? Value(b.create<MulOp>(loc, x, x))
                           : Value(power(magnitude, double(p)));
  Value sum = b.create<ReduceWindowOp>(
      loc, powered, ReduceWindowKind::Sum, full(win->kernel, 1),
      full(win->strides, 1), full(win->lo, 0), full(win->hi, 0),
      full(win->dilations, 1));
  Value y = p == 1   ? sum
            : p == 2 ? Value(b.create<SqrtOp>(loc, sum))
                     : Value(power(sum, 1.0 / double(p)));
  return ctx.setResults(y);
}

} // namespace

void registerNNOps(OpTable &table) {
  table.add("Conv", convOp);
  table.add("ConvInteger", convIntegerOp);
  table.add("QLinearConv", qLinearConvOp);
  table.add("ConvTranspose", convTransposeOp);
  table.add("MaxPool", maxPoolOp);
  table.add("MaxUnpool", maxUnpoolOp);
  table.add("Col2Im", col2ImOp);
  table.add("AveragePool", averagePoolOp);
  table.add("LpPool", lpPoolOp);
}

} // namespace onnx_import
} // namespace kiln
