//===- SignalOps.cpp - ONNX DFT --------------------------------------------===//
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
  bool irfft = inverse && onesided;
  if (onesided && !inverse && complexInput)
    return ctx.fail("onesided applies to a real input");
  // Samples read along the axis, and frequencies (or samples) written.
  int64_t in = irfft ? *n / 2 + 1 : *n;
  int64_t out = irfft ? *n : onesided ? *n / 2 + 1 : *n;

  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // Sums of many terms of both signs that cancel (the imaginary part of a
  // real signal's inverse) are computed in double, and rounded once.
  Type resultElement = elementTypeOf(x);
  Type element = b.getF64Type();
  x = cast(b, loc, x, element);
  // The real and imaginary parts, each with the axis last.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
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
  double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / *n : 1;
  for (int64_t j = 0; j < in; ++j)
    for (int64_t k = 0; k < out; ++k) {
      double angle = 2 * M_PI * double((j * k) % *n) / double(*n);
      // A one-sided spectrum stands for its mirror too: every frequency
      // but 0 and N / 2 counts twice.
      double weight = irfft && j != 0 && 2 * j != *n ? 2 : 1;
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
  resultShape[*axis] = out;
  resultShape.push_back(1);
  auto finish = [&](Value v) {
    return cast(b, loc,
                reshape(b, loc, transpose(b, loc, v, inversePerm), resultShape),
                resultElement);
  };
  if (irfft)
    return ctx.setResults(finish(outRe));
  return ctx.setResults(
      concat(b, loc, {finish(outRe), finish(outIm)}, rank - 1));
}

} // namespace

void registerSignalOps(OpTable &table) { table.add("DFT", dftOp); }

} // namespace onnx_import
} // namespace kiln
