//===- SignalOps.cpp - ONNX DFT, STFT and MelWeightMatrix -----------------===//
//
// DFT as matrix products with constant cosine and sine tables: the signal
// (real, or complex as its last dim's two entries) is moved to have the
// transformed axis last, cut or zero-padded to dft_length N, and
// multiplied by the N x K tables, K = N frequencies, or N / 2 + 1 when
// onesided. The inverse divides by N; inverse and onesided together is the
// real inverse of a one-sided spectrum (numpy's irfft), whose missing half
// is the conjugate mirror of the given one. O(N K) per signal, as dense as
// the tables: kiln has no FFT.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

/// A scalar input (`what`) of the node as a constant, or `fallback` where
/// the input is absent.
FailureOr<int64_t> scalarInput(NodeContext &ctx, unsigned i,
                               llvm::StringRef what, int64_t fallback) {
  if (!ctx.hasInput(i))
    return fallback;
  FailureOr<SmallVector<int64_t>> v = ctx.constantInts(i, what);
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return ctx.fail(what + " must be a scalar");
  return (*v)[0];
}

/// The DFT of `x` (..., 1 or 2 in the last dim: real or complex) along
/// `axis`, of length `n` (the axis cut or zero-padded to it): the result
/// has the frequencies (or, inverse, the samples) along the axis and a
/// last dim of 2, or of 1 for the real inverse of a one-sided spectrum.
Value buildDft(OpBuilder &b, Location loc, Value x, int64_t axis,
               int64_t n, bool inverse, bool onesided) {
  int64_t rank = rankOf(x);
  bool complexInput = shapeOf(x).back() == 2;
  int64_t length = shapeOf(x)[axis];
  bool irfft = inverse && onesided;
  // Samples read along the axis, and frequencies (or samples) written.
  int64_t in = irfft ? n / 2 + 1 : n;
  int64_t out = irfft ? n : onesided ? n / 2 + 1 : n;

  // Sums of many terms of both signs that cancel (the imaginary part of a
  // real signal's inverse) are computed in double, and rounded once.
  Type resultElement = elementTypeOf(x);
  Type element = b.getF64Type();
  x = cast(b, loc, x, element);
  // The real and imaginary parts, each with the axis last.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> partShape(shapeOf(x).drop_back());
  auto part = [&](int64_t which) {
    Value p = reshape(b, loc, sliceAxis(b, loc, x, rank - 1, which, which + 1),
                      partShape);
    p = transpose(b, loc, p, perm);
    // Cut or zero-pad the axis to `in` samples.
    if (length > in)
      return sliceAxis(b, loc, p, rank - 2, 0, in);
    if (length < in) {
      SmallVector<int64_t> padShape(shapeOf(p));
      padShape.back() = in - length;
      return concat(b, loc,
                    {p, splat(b, loc, RankedTensorType::get(padShape, element),
                              0)},
                    rank - 2);
    }
    return p;
  };
  Value re = part(0);
  Value im = complexInput ? part(1) : Value();

  // The tables: angle 2 pi j k / N for sample j and frequency k (or, for
  // the inverse, frequency j and sample k).
  SmallVector<double> cosTable, sinTable;
  double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / n : 1;
  for (int64_t j = 0; j < in; ++j)
    for (int64_t k = 0; k < out; ++k) {
      double angle = 2 * M_PI * double((j * k) % n) / double(n);
      // A one-sided spectrum stands for its mirror too: every frequency
      // but 0 and N / 2 counts twice.
      double weight = irfft && j != 0 && 2 * j != n ? 2 : 1;
      cosTable.push_back(weight * scale * std::cos(angle));
      sinTable.push_back(weight * scale * sign * std::sin(angle));
    }
  Value cosT = constantFloats(b, loc, element, {in, out}, cosTable);
  Value sinT = constantFloats(b, loc, element, {in, out}, sinTable);
  // (re + i im)(cos + i sin) = re cos - im sin + i (re sin + im cos).
  Value outRe = matmul(b, loc, re, cosT);
  Value outIm = matmul(b, loc, re, sinT);
  if (im) {
    outRe = b.create<SubOp>(loc, outRe, matmul(b, loc, im, sinT));
    outIm = b.create<AddOp>(loc, outIm, matmul(b, loc, im, cosT));
  }
  // Back to the input's layout, with `out` along the axis and the parts in
  // a last dim of 2 (of 1 for the real result of irfft).
  SmallVector<int64_t> inversePerm = invertPermutationVector(perm);
  SmallVector<int64_t> resultShape(partShape);
  resultShape[axis] = out;
  resultShape.push_back(1);
  auto finish = [&](Value v) {
    return cast(b, loc,
                reshape(b, loc, transpose(b, loc, v, inversePerm), resultShape),
                resultElement);
  };
  if (irfft)
    return finish(outRe);
  return concat(b, loc, {finish(outRe), finish(outIm)}, rank - 1);
}

LogicalResult dftOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = rankOf(x);
  if (rank < 2 || (shapeOf(x).back() != 1 && shapeOf(x).back() != 2))
    return ctx.fail("the input must end in a dim of 1 (real) or 2 (complex)");
  FailureOr<int64_t> axisValue =
      ctx.version < 20 ? FailureOr<int64_t>(ctx.getInt("axis", 1))
                       : scalarInput(ctx, 2, "axis", -2);
  if (failed(axisValue))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisValue, rank);
  if (!axis || *axis == rank - 1)
    return ctx.fail("axis " + Twine(*axisValue) +
                    " is out of range or the real/imaginary dim");
  bool inverse = ctx.getInt("inverse", 0) != 0;
  bool onesided = ctx.getInt("onesided", 0) != 0;
  bool complexInput = shapeOf(x).back() == 2;
  int64_t length = shapeOf(x)[*axis];
  FailureOr<int64_t> n = scalarInput(
      ctx, 1, "dft_length",
      inverse && onesided ? 2 * (length - 1) : length);
  if (failed(n))
    return failure();
  if (*n < 1)
    return ctx.fail("dft_length is " + Twine(*n) + "; it must be positive");
  if (onesided && !inverse && complexInput)
    return ctx.fail("onesided applies to a real input");
  return ctx.setResults(
      buildDft(ctx.b, ctx.loc, x, *axis, *n, inverse, onesided));
}

/// STFT: the signal (batch, length, 1 or 2) cut into frames of
/// frame_length samples every frame_step (1 + (length - frame_length) /
/// frame_step of them: a kiln.gather of constant positions), each
/// multiplied by the window and transformed: (batch, frames, bins, 2).
LogicalResult stftOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  if (rankOf(x) != 3 || (shapeOf(x)[2] != 1 && shapeOf(x)[2] != 2))
    return ctx.fail("the signal must be (batch, length, 1 or 2)");
  int64_t length = shapeOf(x)[1];
  FailureOr<int64_t> step = scalarInput(ctx, 1, "frame_step", 0);
  if (failed(step))
    return failure();
  Value window = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (window && rankOf(window) != 1)
    return ctx.fail("the window must be 1-d");
  int64_t fallback = window ? shapeOf(window)[0] : length;
  FailureOr<int64_t> frameLength = scalarInput(ctx, 3, "frame_length", fallback);
  if (failed(frameLength))
    return failure();
  if (*step < 1 || *frameLength < 1 || *frameLength > length)
    return ctx.fail("frame_step must be positive and frame_length in [1, " +
                    Twine(length) + "]");
  if (window && shapeOf(window)[0] != *frameLength)
    return ctx.fail("the window has " + Twine(shapeOf(window)[0]) +
                    " samples, frame_length is " + Twine(*frameLength));
  bool onesided = ctx.getInt("onesided", 1) != 0;
  if (onesided && shapeOf(x)[2] == 2)
    return ctx.fail("onesided applies to a real signal");
  int64_t frames = 1 + (length - *frameLength) / *step;
  if (frames * *frameLength > NodeContext::kMaxFoldedElements)
    return ctx.fail("more than 2^24 frame samples");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<int64_t> positions;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < *frameLength; ++j)
      positions.push_back(f * *step + j);
  Value framed = gatherAxis(
      b, loc, x,
      constantInts(b, loc, b.getI64Type(), {frames, *frameLength}, positions),
      1);
  if (window) {
    SmallVector<int64_t> windowShape{1, 1, *frameLength, 1};
    framed = b.create<MulOp>(
        loc, framed,
        broadcastTo(b, loc,
                    reshape(b, loc, cast(b, loc, window, elementTypeOf(x)),
                            windowShape),
                    shapeOf(framed)));
  }
  return ctx.setResults(buildDft(b, loc, framed, 2, *frameLength,
                                 /*inverse=*/false, onesided));
}

/// MelWeightMatrix: the (dft_length / 2 + 1, num_mel_bins) triangular
/// filter bank, computed here from its constant inputs exactly as ONNX's
/// reference does (num_mel_bins + 2 mel steps, bins floored).
LogicalResult melWeightMatrixOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  FailureOr<int64_t> bins = scalarInput(ctx, 0, "num_mel_bins", 0);
  FailureOr<int64_t> dftLength = scalarInput(ctx, 1, "dft_length", 0);
  FailureOr<int64_t> sampleRate = scalarInput(ctx, 2, "sample_rate", 0);
  if (failed(bins) || failed(dftLength) || failed(sampleRate))
    return failure();
  FailureOr<SmallVector<double>> lower =
      ctx.constantFloats(3, "lower_edge_hertz");
  FailureOr<SmallVector<double>> upper =
      ctx.constantFloats(4, "upper_edge_hertz");
  if (failed(lower) || failed(upper))
    return failure();
  if (lower->size() != 1 || upper->size() != 1)
    return ctx.fail("lower_edge_hertz and upper_edge_hertz must be scalars");
  if (*bins < 1 || *dftLength < 1 || *sampleRate < 1)
    return ctx.fail("num_mel_bins, dft_length and sample_rate must be "
                    "positive");
  int64_t spectrum = *dftLength / 2 + 1;
  if (spectrum * *bins > NodeContext::kMaxFoldedElements)
    return ctx.fail("the matrix has more than 2^24 entries");
  FailureOr<Type> type = ctx.importer.convertElementType(
      ctx.getInt("output_datatype", onnx::TensorProto::FLOAT),
      "the output_datatype of MelWeightMatrix");
  if (failed(type))
    return failure();
  auto mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  double low = mel((*lower)[0]), high = mel((*upper)[0]);
  double step = (high - low) / double(*bins + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < *bins + 2; ++i) {
    double hz = 700 * std::expm1((i * step + low) / 2595 * std::log(10.0));
    edges.push_back(static_cast<int64_t>(
        std::floor((*dftLength + 1) * hz / double(*sampleRate))));
  }
  SmallVector<double> matrix(spectrum * *bins, 0);
  for (int64_t i = 0; i < *bins; ++i) {
    int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (left < 0 || right >= spectrum || left > center || center > right)
      return ctx.fail("mel bin " + Twine(i) + " spans spectrum bins " +
                      Twine(left) + " to " + Twine(right) +
                      ", outside [0, " + Twine(spectrum - 1) + "]");
    if (center == left)
      matrix[center * *bins + i] = 1;
    else
      for (int64_t j = left; j <= center; ++j)
        matrix[j * *bins + i] = double(j - left) / double(center - left);
    for (int64_t j = center; j < right; ++j)
      matrix[j * *bins + i] = double(right - j) / double(right - center);
  }
  if (isa<FloatType>(*type))
    return ctx.setResults(
        constantFloats(ctx.b, ctx.loc, *type, {spectrum, *bins}, matrix));
  SmallVector<int64_t> truncated(matrix.begin(), matrix.end());
  return ctx.setResults(
      constantInts(ctx.b, ctx.loc, *type, {spectrum, *bins}, truncated));
}

} // namespace

void registerSignalOps(OpTable &table) {
  table.add("DFT", dftOp);
  table.add("STFT", stftOp);
  table.add("MelWeightMatrix", melWeightMatrixOp);
}

} // namespace onnx_import
} // namespace kiln
