//===- MLOps.cpp - ONNX's classical machine-learning domain ---------------===//
//
// The operators of domain ai.onnx.ml that work on tensors of numbers:
// Binarizer (x > threshold as 1 or 0 in x's type) and ArrayFeatureExtractor
// (columns of the last dim picked by run-time indices, a 1-d input read as
// one row, as ONNX Runtime does).
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

constexpr llvm::StringLiteral kMLDomain = "ai.onnx.ml";

LogicalResult binarizerOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x))
    return ctx.fail("X must be a tensor of numbers");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Value above =
      b.create<CompareOp>(loc, CompareDirection::gt, x,
                          splat(b, loc, typeOf(x), ctx.getFloat("threshold", 0)));
  return ctx.setResults(b.create<SelectOp>(loc, above, splat(b, loc, typeOf(x), 1),
                                           splat(b, loc, typeOf(x), 0)));
}

/// ArrayFeatureExtractor: X[..., indices] with the indices flattened into
/// the last dim; an index outside [-d, d) is an error in ONNX Runtime and
/// is clamped here (kiln.gather's rule), never read out of bounds.
LogicalResult arrayFeatureExtractorOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), indices = ctx.input(1);
  if (rankOf(x) < 1 || !elementTypeOf(indices).isInteger(64))
    return ctx.fail("X must have rank >= 1 and Y be int64 indices");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  if (rankOf(x) == 1)
    x = reshape(b, loc, x, {1, shapeOf(x)[0]});
  int64_t last = rankOf(x) - 1, dim = shapeOf(x)[last];
  int64_t count = numElementsOf(shapeOf(indices));
  if (dim == 0)
    return ctx.fail("X's last dim is empty");
  Value idx = wrapIndices(b, loc, reshape(b, loc, indices, {count}), dim);
  return ctx.setResults(gatherAxis(b, loc, x, idx, last));
}

} // namespace

void registerMLOps(OpTable &table) {
  table.add(kMLDomain, "Binarizer", binarizerOp);
  table.add(kMLDomain, "ArrayFeatureExtractor", arrayFeatureExtractorOp);
}

} // namespace onnx_import
} // namespace kiln
