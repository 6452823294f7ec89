//===- ResizeOps.cpp - ONNX Resize and Upsample ---------------------------===//
//
// Resizing is separable: each axis whose size changes is resampled on its
// own. For an axis, every output position o maps to a source coordinate x
// (coordinate_transformation_mode), and the output is a weighted sum of a
// fixed number of source positions ("taps") around x:
//  - nearest: 1 tap, x rounded by nearest_mode;
//  - linear: 2 taps, floor(x) and floor(x) + 1, weights 1 - r and r
//    (r = x - floor(x));
//  - cubic: 4 taps, floor(x) - 1 .. floor(x) + 2, Keys' cubic weights with
//    coefficient cubic_coeff_a.
// Taps outside the input read the edge (or, with exclude_outside, get
// weight 0 and the others are renormalized). tf_crop_and_resize maps the
// output onto the region of interest and gives positions whose source is
// outside the input extrapolation_value. The positions and weights
// depend only on the shapes, so they are constants computed here: each tap
// is a gather along the axis and a multiply by a constant weight vector.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

struct ResizeMode {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  /// Opset 18: linear and cubic downsampling widen their filter by 1/scale
  /// (a low-pass filter, as Pillow and PyTorch's antialias do).
  bool antialias = false;
  /// tf_crop_and_resize: the region of interest, starts then ends, in
  /// coordinates normalized to [0, 1] per dim, and the value of output
  /// positions whose source lies outside the input.
  SmallVector<double> roi;
  double extrapolation = 0;
};

double sourceCoordinate(const ResizeMode &m, int64_t axis, int64_t o,
                        int64_t in, int64_t out, double scale) {
  if (m.transform == "tf_crop_and_resize") {
    int64_t rank = m.roi.size() / 2;
    double start = m.roi[axis], end = m.roi[rank + axis];
    if (out == 1)
      return 0.5 * (start + end) * (in - 1);
    return start * (in - 1) + o * (end - start) * (in - 1) / double(out - 1);
  }
  if (m.transform == "half_pixel")
    return (o + 0.5) / scale - 0.5;
  if (m.transform == "half_pixel_symmetric") {
    // Opset 19: half_pixel, with the rounding of the output length spread
    // evenly over both ends.
    double adjustment = out / (scale * in);
    return in / 2.0 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  if (m.transform == "pytorch_half_pixel")
    return out > 1 ? (o + 0.5) / scale - 0.5 : 0;
  if (m.transform == "align_corners") {
    // ONNX scales the unrounded output length, in * scale.
    double length = in * scale;
    return length == 1 ? 0 : o * double(in - 1) / (length - 1);
  }
  if (m.transform == "tf_half_pixel_for_nearest" ||
      m.transform == "tf_half_pixel_for_nn")
    return (o + 0.5) / scale;
  return o / scale; // asymmetric
}

int64_t roundNearest(const ResizeMode &m, double x) {
  double f = std::floor(x);
  if (m.nearest == "floor")
    return static_cast<int64_t>(f);
  if (m.nearest == "ceil")
    return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5)
    return static_cast<int64_t>(m.nearest == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

/// Resamples dim `axis` of `x` from its size to `out`.
Value resizeAxis(OpBuilder &b, Location loc, Value x, int64_t axis,
                 int64_t out, double scale, const ResizeMode &m) {
  int64_t in = shapeOf(x)[axis];
  // The filter's taps are positions floor(xs) + i, i in [first, first +
  // taps). Linear and cubic filters reach 1 and 2 input pixels either side;
  // antialiased downsampling stretches them by 1/scale.
  bool widen = m.antialias && m.mode != "nearest" && scale < 1;
  double reach = m.mode == "cubic" ? 2 : 1;
  int64_t first = m.mode == "nearest" ? 0
                  : widen ? static_cast<int64_t>(std::floor(-reach / scale)) + 1
                          : 1 - static_cast<int64_t>(reach);
  int taps = m.mode == "nearest" ? 1 : static_cast<int>(2 - 2 * first);
  double a = m.cubicA;
  auto kernel = [&](double t) {
    t = std::abs(t);
    if (m.mode == "linear")
      return std::max(0.0, 1 - t);
    if (t <= 1)
      return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
      return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.0;
  };
  SmallVector<SmallVector<int64_t>> index(taps);
  SmallVector<SmallVector<double>> weight(taps);
  // tf_crop_and_resize: 1 where the source is inside the input; elsewhere
  // the output is the extrapolation value.
  SmallVector<double> inside, outsideValue;
  bool anyOutside = false;
  for (int64_t o = 0; o < out; ++o) {
    double xs = sourceCoordinate(m, axis, o, in, out, scale);
    bool isOutside = m.transform == "tf_crop_and_resize" &&
                     (xs < 0 || xs > double(in - 1));
    anyOutside |= isOutside;
    inside.push_back(isOutside ? 0 : 1);
    outsideValue.push_back(isOutside ? m.extrapolation : 0);
    SmallVector<int64_t> pos(taps);
    SmallVector<double> w(taps);
    if (m.mode == "nearest") {
      pos[0] = roundNearest(m, xs);
      w[0] = 1;
    } else {
      double f = std::floor(xs), r = xs - f;
      if (widen && r == 0) {
        // On a pixel, ONNX takes the window that has it last.
        f -= 1;
        r = 1;
      }
      double stretch = widen ? scale : 1, sum = 0;
      for (int t = 0; t < taps; ++t) {
        pos[t] = int64_t(f) + first + t;
        w[t] = kernel(stretch * (first + t - r));
        sum += w[t];
      }
      if (widen && sum != 0)
        for (double &v : w)
          v /= sum;
    }
    double total = 0;
    for (int t = 0; t < taps; ++t) {
      bool outside = pos[t] < 0 || pos[t] >= in;
      if (outside && m.excludeOutside && m.mode != "nearest")
        w[t] = 0;
      total += w[t];
      pos[t] = std::clamp<int64_t>(pos[t], 0, in - 1);
    }
    for (int t = 0; t < taps; ++t) {
      index[t].push_back(pos[t]);
      weight[t].push_back(m.excludeOutside && total != 0 ? w[t] / total : w[t]);
    }
  }
  Value sum;
  for (int t = 0; t < taps; ++t) {
    Value gathered = gatherAxisConstant(b, loc, x, index[t], axis);
    if (m.mode != "nearest") {
      SmallVector<int64_t> shape(rankOf(gathered), 1);
      shape[axis] = out;
      Value w = constantFloats(b, loc, elementTypeOf(x), shape, weight[t]);
      gathered = b.create<MulOp>(loc, gathered,
                                 broadcastTo(b, loc, w, shapeOf(gathered)));
    }
    sum = sum ? Value(b.create<AddOp>(loc, sum, gathered)) : gathered;
  }
  if (anyOutside) {
    // Later axes interpolate between extrapolation values only (their
    // weights sum to 1), so a position outside on any axis keeps it.
    SmallVector<int64_t> shape(rankOf(sum), 1);
    shape[axis] = out;
    auto along = [&](ArrayRef<double> values) {
      return broadcastTo(
          b, loc, constantFloats(b, loc, elementTypeOf(x), shape, values),
          shapeOf(sum));
    };
    sum = b.create<AddOp>(loc, b.create<MulOp>(loc, sum, along(inside)),
                          along(outsideValue));
  }
  return sum;
}

LogicalResult resizeWith(NodeContext &ctx, Value x, SmallVector<double> scales,
                         SmallVector<int64_t> sizes, const ResizeMode &m) {
  int64_t rank = rankOf(x);
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return ctx.fail("mode '" + m.mode + "' is not supported");
  static const char *const transforms[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
      "align_corners", "asymmetric",
      "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn",
      "tf_crop_and_resize"};
  if (!llvm::is_contained(transforms, m.transform))
    return ctx.fail("coordinate_transformation_mode '" + m.transform +
                    "' is not supported");
  static const char *const roundings[] = {"round_prefer_floor",
                                          "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(roundings, m.nearest))
    return ctx.fail("nearest_mode '" + m.nearest + "' is not supported");
  if (m.mode != "nearest" && !isFloat(x))
    return ctx.fail("linear and cubic modes need a float input");
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != rank)
      return ctx.fail("sizes must have one entry per dim");
    // Scales given with sizes come from keep_aspect_ratio_policy.
    if (scales.empty())
      for (int64_t i = 0; i < rank; ++i)
        scales.push_back(double(sizes[i]) / double(shapeOf(x)[i]));
  } else {
    if (static_cast<int64_t>(scales.size()) != rank)
      return ctx.fail("scales must have one entry per dim");
    for (int64_t i = 0; i < rank; ++i) {
      if (scales[i] <= 0)
        return ctx.fail("scales must be positive");
      sizes.push_back(
          static_cast<int64_t>(std::floor(shapeOf(x)[i] * scales[i])));
    }
  }
  bool crop = m.transform == "tf_crop_and_resize";
  if (crop && static_cast<int64_t>(m.roi.size()) != 2 * rank)
    return ctx.fail("tf_crop_and_resize needs an roi of 2 * rank(X) = " +
                    Twine(2 * rank) + " values");
  Value y = x;
  for (int64_t i = 0; i < rank; ++i) {
    bool wholeAxis = !crop || (m.roi[i] == 0 && m.roi[rank + i] == 1);
    if (sizes[i] == shapeOf(x)[i] && scales[i] == 1 && wholeAxis)
      continue;
    if (shapeOf(x)[i] == 0 || sizes[i] <= 0)
      return ctx.fail("cannot resize an empty dim or to an empty dim");
    y = resizeAxis(ctx.b, ctx.loc, y, i, sizes[i], scales[i], m);
  }
  return ctx.setResults(y);
}

/// Resize-18's attributes: `antialias`; `axes`, which the scales, sizes and
/// roi list values for (the other dims keep their size); and
/// `keep_aspect_ratio_policy`, which with sizes scales every listed axis by
/// the smallest ("not_larger") or largest ("not_smaller") of their ratios.
/// Leaves full-rank scales, sizes and roi.
LogicalResult applyOpset18Attributes(NodeContext &ctx, ResizeMode &m,
                                     SmallVector<double> &scales,
                                     SmallVector<int64_t> &sizes) {
  ArrayRef<int64_t> in = shapeOf(ctx.input(0));
  int64_t rank = in.size();
  m.antialias = ctx.getInt("antialias", 0) != 0;
  SmallVector<int64_t> axes;
  if (const onnx::AttributeProto *a = ctx.attr("axes")) {
    for (int64_t axis : a->ints()) {
      std::optional<int64_t> n = normalizeAxis(axis, rank);
      if (!n || llvm::is_contained(axes, *n))
        return ctx.fail("axes has " + Twine(axis) +
                        ", out of range or repeated for an input of rank " +
                        Twine(rank));
      axes.push_back(*n);
    }
    size_t given = sizes.empty() ? scales.size() : sizes.size();
    if (given != axes.size())
      return ctx.fail(Twine(sizes.empty() ? "scales" : "sizes") + " has " +
                      Twine(given) + " entries for " + Twine(axes.size()) +
                      " axes");
    if (!m.roi.empty() && m.roi.size() != 2 * axes.size())
      return ctx.fail("roi has " + Twine(m.roi.size()) + " entries for " +
                      Twine(axes.size()) + " axes (a start and an end each)");
    SmallVector<double> fullScales(rank, 1.0), fullRoi(2 * rank, 0.0);
    SmallVector<int64_t> fullSizes(in.begin(), in.end());
    for (int64_t r = 0; r < rank; ++r)
      fullRoi[rank + r] = 1;
    for (auto [i, axis] : llvm::enumerate(axes)) {
      if (!sizes.empty())
        fullSizes[axis] = sizes[i];
      else
        fullScales[axis] = scales[i];
      if (!m.roi.empty()) {
        fullRoi[axis] = m.roi[i];
        fullRoi[rank + axis] = m.roi[axes.size() + i];
      }
    }
    if (sizes.empty())
      scales = fullScales;
    else
      sizes = fullSizes;
    if (!m.roi.empty())
      m.roi = fullRoi;
  } else {
    for (int64_t r = 0; r < rank; ++r)
      axes.push_back(r);
  }
  std::string policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch" || sizes.empty())
    return success();
  if (policy != "not_larger" && policy != "not_smaller")
    return ctx.fail("keep_aspect_ratio_policy '" + policy +
                    "' is not one of stretch, not_larger, not_smaller");
  if (static_cast<int64_t>(sizes.size()) != rank)
    return ctx.fail("sizes must have one entry per dim");
  double scale = policy == "not_larger" ? INFINITY : 0;
  for (int64_t axis : axes) {
    if (in[axis] == 0)
      return ctx.fail("cannot resize an empty dim");
    double ratio = double(sizes[axis]) / double(in[axis]);
    scale = policy == "not_larger" ? std::min(scale, ratio)
                                   : std::max(scale, ratio);
  }
  scales.assign(rank, 1.0);
  for (int64_t axis : axes) {
    scales[axis] = scale;
    // Rounded half up, as ONNX specifies.
    sizes[axis] = static_cast<int64_t>(std::floor(scale * in[axis] + 0.5));
  }
  return success();
}

LogicalResult resizeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ResizeMode m;
  m.mode = ctx.getString("mode", "nearest");
  m.cubicA = ctx.getFloat("cubic_coeff_a", -0.75f);
  m.excludeOutside = ctx.getInt("exclude_outside", 0);
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (ctx.version < 11) {
    // Resize-10: (X, scales), asymmetric coordinates, nearest rounds down.
    m.transform = "asymmetric";
    m.nearest = "floor";
    FailureOr<SmallVector<double>> s = ctx.constantFloats(1, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    m.transform = ctx.getString("coordinate_transformation_mode", "half_pixel");
    m.nearest = ctx.getString("nearest_mode", "round_prefer_floor");
    if (m.transform == "tf_crop_and_resize") {
      if (!ctx.hasInput(1) || numElementsOf(shapeOf(ctx.input(1))) == 0)
        return ctx.fail("tf_crop_and_resize needs the roi input");
      FailureOr<SmallVector<double>> roi = ctx.constantFloats(1, "roi");
      if (failed(roi))
        return failure();
      m.roi = *roi;
      m.extrapolation = ctx.getFloat("extrapolation_value", 0.0f);
    }
    if (ctx.hasInput(3) && numElementsOf(shapeOf(ctx.input(3)))) {
      FailureOr<SmallVector<int64_t>> s = ctx.constantInts(3, "sizes");
      if (failed(s))
        return failure();
      sizes = *s;
    } else if (ctx.hasInput(2)) {
      FailureOr<SmallVector<double>> s = ctx.constantFloats(2, "scales");
      if (failed(s))
        return failure();
      scales = *s;
    } else {
      return ctx.fail("one of scales and sizes is required");
    }
  }
  if (ctx.version >= 18 &&
      failed(applyOpset18Attributes(ctx, m, scales, sizes)))
    return failure();
  return resizeWith(ctx, ctx.input(0), scales, sizes, m);
}

/// Upsample (before opset 10): scales as an attribute (7) or input (9),
/// asymmetric coordinates, nearest rounding down.
LogicalResult upsampleOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ResizeMode m;
  m.mode = ctx.getString("mode", "nearest");
  m.transform = "asymmetric";
  m.nearest = "floor";
  SmallVector<double> scales;
  if (ctx.version < 9) {
    const onnx::AttributeProto *a = ctx.attr("scales");
    if (!a)
      return ctx.fail("attribute 'scales' is required");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    FailureOr<SmallVector<double>> s = ctx.constantFloats(1, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  }
  return resizeWith(ctx, ctx.input(0), scales, {}, m);
}

} // namespace

void registerResizeOps(OpTable &table) {
  table.add("Resize", resizeOp);
  table.add("Upsample", upsampleOp);
}

} // namespace onnx_import
} // namespace kiln
