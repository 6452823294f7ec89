//===- RoiAlignOps.cpp - ONNX RoiAlign -----------------------------------===//
//
// RoiAlign pools each region of interest (x1, y1, x2, y2, scaled by
// spatial_scale, shifted by half a pixel for half_pixel) of the image its
// batch index names into output_height x output_width bins. Each bin
// averages (or, mode "max", takes the largest of) sampling_ratio^2 points
// at the centres of a regular grid in the bin, each read by bilinear
// interpolation as ONNX's reference and ONNX Runtime do: a point more than
// one pixel outside the image reads 0, one just outside is clamped to the
// edge. For "max" the largest of the four weighted neighbours counts, as
// in the reference.
//
// All sample points of all regions are computed at once, in a tensor of
// shape (R, H', grid, W', grid); X is viewed as rows (N * H * W, C) so each
// of the four neighbours is one kiln.gather of the channels.
//
// sampling_ratio 0 (ONNX's default) sizes each region's grid from the
// region itself, at run time; kiln's shapes are static, so it is refused
// with an error that says so.
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

/// One spatial dim's two neighbours of a sample coordinate: indices (i64,
/// in range), weights, and whether the point reads the image at all.
struct Neighbours {
  Value low, high, lowWeight, highWeight, valid;
};

Neighbours neighbours(OpBuilder &b, Location loc, Value t, int64_t size) {
  RankedTensorType type = typeOf(t);
  auto c = [&](double v) { return splat(b, loc, type, v); };
  Neighbours n;
  n.valid = b.create<AndOp>(
      loc, b.create<CompareOp>(loc, CompareDirection::ge, t, c(-1)),
      b.create<CompareOp>(loc, CompareDirection::le, t, c(size)));
  t = b.create<MaxOp>(loc, t, c(0));
  Value low = b.create<FloorOp>(loc, t);
  Value atEdge = b.create<CompareOp>(loc, CompareDirection::ge, low, c(size - 1));
  low = b.create<SelectOp>(loc, atEdge, c(size - 1), low);
  t = b.create<SelectOp>(loc, atEdge, low, t);
  Value high = b.create<SelectOp>(loc, atEdge, low,
                                  b.create<AddOp>(loc, low, c(1)));
  n.highWeight = b.create<SubOp>(loc, t, low);
  n.lowWeight = b.create<SubOp>(loc, c(1), n.highWeight);
  auto indexType = RankedTensorType::get(type.getShape(), b.getI64Type());
  n.low = b.create<CastOp>(loc, indexType, low);
  n.high = b.create<CastOp>(loc, indexType, high);
  return n;
}

LogicalResult roiAlignOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)) ||
      failed(ctx.requireFloat(1)))
    return failure();
  Value x = ctx.input(0), rois = ctx.input(1), batchIndices = ctx.input(2);
  if (rankOf(x) != 4)
    return ctx.fail("X must be (N, C, H, W)");
  int64_t r = shapeOf(rois)[0];
  if (rankOf(rois) != 2 || shapeOf(rois)[1] != 4)
    return ctx.fail("rois must be (num_rois, 4)");
  if (rankOf(batchIndices) != 1 || shapeOf(batchIndices)[0] != r ||
      !isa<IntegerType>(elementTypeOf(batchIndices)) || isBool(batchIndices))
    return ctx.fail("batch_indices must be an integer list of num_rois");
  std::string mode = ctx.getString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.fail("mode '" + mode + "' is not avg or max");
  std::string transform = ctx.version >= 16
                              ? ctx.getString("coordinate_transformation_mode",
                                              "half_pixel")
                              : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return ctx.fail("coordinate_transformation_mode '" + transform +
                    "' is not half_pixel or output_half_pixel");
  bool halfPixel = transform == "half_pixel";
  int64_t outH = ctx.getInt("output_height", 1);
  int64_t outW = ctx.getInt("output_width", 1);
  int64_t grid = ctx.getInt("sampling_ratio", 0);
  double scale = ctx.getFloat("spatial_scale", 1.0f);
  if (outH < 1 || outW < 1)
    return ctx.fail("output_height and output_width must be positive");
  if (grid < 0)
    return ctx.fail("sampling_ratio must not be negative");
  if (grid == 0)
    return ctx.fail("sampling_ratio 0 sizes each region's sampling grid "
                    "from the region at run time, which kiln's static "
                    "shapes cannot hold; give a positive sampling_ratio");
  ArrayRef<int64_t> xShape = shapeOf(x);
  int64_t n = xShape[0], c = xShape[1], h = xShape[2], w = xShape[3];
  if (h < 1 || w < 1 || c < 1)
    return ctx.fail("X has an empty dim");
  if (n < 1 && r > 0)
    return ctx.fail("X holds no images (N = 0) for its " + Twine(r) +
                    " regions to read");
  if (r == 0)
    return ctx.setResults(splat(
        ctx.b, ctx.loc,
        RankedTensorType::get({0, c, outH, outW}, elementTypeOf(x)), 0));

  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Type element = elementTypeOf(x);
  SmallVector<int64_t> sampleShape{r, outH, grid, outW, grid};
  auto sampleType = RankedTensorType::get(sampleShape, element);
  auto indexType = RankedTensorType::get(sampleShape, b.getI64Type());
  auto cs = [&](double v) { return splat(b, loc, sampleType, v); };
  // Per dim (0: y, 1: x): start and bin size per region, broadcast.
  auto coordinate = [&](int64_t column, int64_t bins, int64_t binDim,
                        int64_t gridDim) {
    auto vecType = RankedTensorType::get({r}, element);
    auto roiColumn = [&](int64_t k) {
      Value v = reshape(b, loc, sliceAxis(b, loc, rois, 1, k, k + 1), {r});
      v = b.create<MulOp>(loc, cast(b, loc, v, element),
                          splat(b, loc, vecType, scale));
      return halfPixel
                 ? Value(b.create<SubOp>(loc, v, splat(b, loc, vecType, 0.5)))
                 : v;
    };
    Value start = roiColumn(column), end = roiColumn(column + 2);
    Value size = b.create<SubOp>(loc, end, start);
    if (!halfPixel)
      size = b.create<MaxOp>(loc, size, splat(b, loc, vecType, 1));
    Value bin = b.create<DivOp>(loc, size, splat(b, loc, vecType, bins));
    auto perRegion = [&](Value v) {
      return b.create<BroadcastInDimOp>(loc, sampleType, v,
                                        SmallVector<int64_t>{0});
    };
    // start + bin_index * bin + (grid_index + 0.5) * bin / grid
    Value binIndex = b.create<IotaOp>(loc, sampleType, binDim);
    Value gridIndex = b.create<IotaOp>(loc, sampleType, gridDim);
    Value within = b.create<DivOp>(
        loc, b.create<MulOp>(loc, b.create<AddOp>(loc, gridIndex, cs(0.5)),
                             perRegion(bin)),
        cs(grid));
    return b.create<AddOp>(
        loc,
        b.create<AddOp>(loc, perRegion(start),
                        b.create<MulOp>(loc, binIndex, perRegion(bin))),
        within);
  };
  Neighbours ny = neighbours(b, loc, coordinate(1, outH, 1, 2), h);
  Neighbours nx = neighbours(b, loc, coordinate(0, outW, 3, 4), w);
  Value valid = b.create<AndOp>(loc, ny.valid, nx.valid);
  // X as rows (N * H * W, C), each region's image from its batch index.
  Value rows = reshape(b, loc, transpose(b, loc, x, {0, 2, 3, 1}), {n * h * w, c});
  Value imageBase = b.create<BroadcastInDimOp>(
      loc, indexType,
      b.create<MulOp>(
          loc, cast(b, loc, batchIndices, b.getI64Type()),
          splat(b, loc, RankedTensorType::get({r}, b.getI64Type()), h * w)),
      SmallVector<int64_t>{0});
  SmallVector<int64_t> gatheredShape(sampleShape);
  gatheredShape.push_back(c);
  SmallVector<int64_t> weightShape(sampleShape);
  weightShape.push_back(1);
  Value combined;
  for (auto [yi, yw] : {std::pair{ny.low, ny.lowWeight},
                        std::pair{ny.high, ny.highWeight}})
    for (auto [xi, xw] : {std::pair{nx.low, nx.lowWeight},
                          std::pair{nx.high, nx.highWeight}}) {
      Value at = b.create<AddOp>(
          loc, imageBase,
          b.create<AddOp>(loc,
                          b.create<MulOp>(loc, yi,
                                          splat(b, loc, indexType, w)),
                          xi));
      Value weight = b.create<SelectOp>(
          loc, valid, b.create<MulOp>(loc, yw, xw), cs(0));
      Value term = b.create<MulOp>(
          loc, b.create<GatherOp>(loc, rows, at),
          broadcastTo(b, loc, reshape(b, loc, weight, weightShape),
                      gatheredShape));
      combined = !combined ? term
                 : mode == "avg"
                     ? Value(b.create<AddOp>(loc, combined, term))
                     : Value(b.create<MaxOp>(loc, combined, term));
    }
  // Over the grid: (R, H', grid, W', grid, C) -> (R, H', W', C).
  Value pooled = reduce(b, loc, mode == "avg" ? Reduction::Mean : Reduction::Max,
                        combined, {2, 4}, false);
  return ctx.setResults(transpose(b, loc, pooled, {0, 3, 1, 2}));
}

} // namespace

void registerRoiAlignOps(OpTable &table) { table.add("RoiAlign", roiAlignOp); }

} // namespace onnx_import
} // namespace kiln
