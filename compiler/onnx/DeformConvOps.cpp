//===- DeformConvOps.cpp - ONNX DeformConv -------------------------------===//
//
// DeformConv is a convolution whose taps read X at learned fractional
// offsets: tap k of output point o reads X at
//   o * stride - pad_begin + k * dilation + offset[n, og, k, :, o]
// (per spatial dim, og the offset group of the input channel) by linear
// interpolation between the 2^r neighbouring pixels, a neighbour outside X
// reading 0, and is scaled by mask[n, og, k, o] (1 without a mask).
//
// The sampled values form the columns of an im2col: X is viewed as rows
// (N * OG * pixels, C / OG) so that each neighbour of each (n, og, k, o) is
// one kiln.gather of the channels of its offset group; weighted and summed
// they give (N, C, K, O), and the convolution is a batched product with
// W per group, plus the bias.
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

LogicalResult deformConvOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0), w = ctx.input(1), offset = ctx.input(2);
  int64_t rank = rankOf(x), r = rank - 2;
  if (rank < 3 || rankOf(w) != rank || rankOf(offset) != rank)
    return ctx.fail("X, W and offset must have one rank, at least 3");
  Type element = elementTypeOf(x);
  if (elementTypeOf(w) != element || elementTypeOf(offset) != element)
    return ctx.fail("X, W and offset must have one element type");
  ArrayRef<int64_t> xShape = shapeOf(x), wShape = shapeOf(w);
  int64_t n = xShape[0], c = xShape[1], oc = wShape[0];
  int64_t groups = ctx.getInt("group", 1);
  int64_t offsetGroups = ctx.getInt("offset_group", 1);
  if (groups < 1 || offsetGroups < 1 || c % groups || oc % groups ||
      wShape[1] * groups != c || c % offsetGroups)
    return ctx.fail("W must be (M, C / group, k...) with C and M divisible "
                    "by group, and C divisible by offset_group");
  SmallVector<int64_t> kernel(wShape.drop_front(2));
  if (std::optional<SmallVector<int64_t>> k = ctx.getInts("kernel_shape");
      k && *k != kernel)
    return ctx.fail("kernel_shape does not match W's spatial dims");
  FailureOr<StridedWindow> window = readStridedWindow(ctx, r);
  if (failed(window))
    return failure();
  ArrayRef<int64_t> strides = window->strides, dilations = window->dilations;
  ArrayRef<int64_t> pads = window->lo;
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < r; ++i) {
    int64_t span = xShape[2 + i] + pads[i] + window->hi[i] -
                   ((kernel[i] - 1) * dilations[i] + 1);
    if (span < 0 || xShape[2 + i] < 1)
      return ctx.fail("the kernel is larger than the padded input");
    out.push_back(span / strides[i] + 1);
  }
  int64_t taps = numElementsOf(kernel), points = numElementsOf(out);
  int64_t pixels = numElementsOf(xShape.drop_front(2));
  SmallVector<int64_t> offsetShape{n, offsetGroups * taps * r};
  offsetShape.append(out.begin(), out.end());
  if (shapeOf(offset) != ArrayRef<int64_t>(offsetShape))
    return ctx.fail("offset must be " + typeString(RankedTensorType::get(
                                             offsetShape, element)));
  SmallVector<int64_t> maskShape{n, offsetGroups * taps};
  maskShape.append(out.begin(), out.end());
  if (ctx.hasInput(4) && shapeOf(ctx.input(4)) != ArrayRef<int64_t>(maskShape))
    return ctx.fail("mask must be " +
                    typeString(RankedTensorType::get(maskShape, element)));
  if (ctx.hasInput(3) && numElementsOf(shapeOf(ctx.input(3))) != oc)
    return ctx.fail("B must have one entry per output channel");

  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // Sample points (N, OG, K, O): per dim, the tap's position plus offset.
  SmallVector<int64_t> sampleShape{n, offsetGroups, taps, points};
  auto sampleType = RankedTensorType::get(sampleShape, element);
  auto indexType = RankedTensorType::get(sampleShape, b.getI64Type());
  Value offsets =
      reshape(b, loc, offset, {n, offsetGroups, taps, r, points});
  auto c0 = [&](double v) { return splat(b, loc, sampleType, v); };
  SmallVector<Value> floors, fracs;
  for (int64_t i = 0; i < r; ++i) {
    SmallVector<double> base;
    for (int64_t k = 0; k < taps; ++k) {
      int64_t kIndex = k;
      for (int64_t j = r - 1; j > i; --j)
        kIndex /= kernel[j];
      kIndex %= kernel[i];
      for (int64_t p = 0; p < points; ++p) {
        int64_t oIndex = p;
        for (int64_t j = r - 1; j > i; --j)
          oIndex /= out[j];
        oIndex %= out[i];
        base.push_back(oIndex * strides[i] - pads[i] + kIndex * dilations[i]);
      }
    }
    Value position = b.create<AddOp>(
        loc,
        broadcastTo(b, loc, constantFloats(b, loc, element, {taps, points}, base),
                    sampleShape),
        reshape(b, loc, sliceAxis(b, loc, offsets, 3, i, i + 1), sampleShape));
    Value low = b.create<FloorOp>(loc, position);
    floors.push_back(low);
    fracs.push_back(b.create<SubOp>(loc, position, low));
  }
  // Base row of each (n, og): (n * OG + og) * pixels.
  Value rowBase = b.create<MulOp>(
      loc,
      b.create<AddOp>(
          loc,
          b.create<MulOp>(loc, b.create<IotaOp>(loc, indexType, 0),
                          splat(b, loc, indexType, offsetGroups)),
          b.create<IotaOp>(loc, indexType, 1)),
      splat(b, loc, indexType, pixels));
  // X as rows (N * OG * pixels, C / OG).
  int64_t perOffsetGroup = c / offsetGroups;
  SmallVector<int64_t> toRows{0, 1};
  for (int64_t i = 0; i < r; ++i)
    toRows.push_back(3 + i);
  toRows.push_back(2);
  SmallVector<int64_t> split{n, offsetGroups, perOffsetGroup};
  split.append(xShape.begin() + 2, xShape.end());
  Value rows = reshape(b, loc, transpose(b, loc, reshape(b, loc, x, split), toRows),
                       {n * offsetGroups * pixels, perOffsetGroup});
  SmallVector<int64_t> gatheredShape(sampleShape);
  gatheredShape.push_back(perOffsetGroup);
  SmallVector<int64_t> weightShape(sampleShape);
  weightShape.push_back(1);
  Value mask;
  if (ctx.hasInput(4))
    mask = reshape(b, loc, ctx.input(4), sampleShape);
  Value sampled;
  for (int64_t corner = 0; corner < (int64_t(1) << r); ++corner) {
    Value linear = rowBase, weight = mask;
    int64_t stride = pixels;
    for (int64_t i = 0; i < r; ++i) {
      bool high = (corner >> i) & 1;
      int64_t size = xShape[2 + i];
      stride /= size;
      Value at = high ? Value(b.create<AddOp>(loc, floors[i], c0(1))) : floors[i];
      Value part = high ? fracs[i] : Value(b.create<SubOp>(loc, c0(1), fracs[i]));
      Value inside = b.create<AndOp>(
          loc, b.create<CompareOp>(loc, CompareDirection::ge, at, c0(0)),
          b.create<CompareOp>(loc, CompareDirection::le, at, c0(size - 1)));
      part = b.create<SelectOp>(loc, inside, part, c0(0));
      weight = weight ? Value(b.create<MulOp>(loc, weight, part)) : part;
      Value clamped = b.create<MinOp>(loc, b.create<MaxOp>(loc, at, c0(0)),
                                      c0(size - 1));
      linear = b.create<AddOp>(
          loc, linear,
          b.create<MulOp>(loc, b.create<CastOp>(loc, indexType, clamped),
                          splat(b, loc, indexType, stride)));
    }
    Value term = b.create<MulOp>(
        loc, b.create<GatherOp>(loc, rows, linear),
        broadcastTo(b, loc, reshape(b, loc, weight, weightShape),
                    gatheredShape));
    sampled = sampled ? Value(b.create<AddOp>(loc, sampled, term)) : term;
  }
  // (N, OG, K, O, C/OG) -> columns (N, G, C/G * K, O).
  Value columns = transpose(b, loc, sampled, {0, 1, 4, 2, 3});
  columns = reshape(b, loc, columns, {n, groups, (c / groups) * taps, points});
  Value weights = reshape(b, loc, w, {1, groups, oc / groups, (c / groups) * taps});
  Value y = matmul(b, loc, weights, columns);
  SmallVector<int64_t> resultShape{n, oc};
  resultShape.append(out.begin(), out.end());
  y = reshape(b, loc, y, resultShape);
  if (ctx.hasInput(3)) {
    SmallVector<int64_t> biasShape(rank, 1);
    biasShape[1] = oc;
    y = b.create<AddOp>(
        loc, y,
        broadcastTo(b, loc,
                    reshape(b, loc, cast(b, loc, ctx.input(3), element),
                            biasShape),
                    resultShape));
  }
  return ctx.setResults(y);
}

} // namespace

void registerDeformConvOps(OpTable &table) {
  table.add("DeformConv", deformConvOp);
}

} // namespace onnx_import
} // namespace kiln
