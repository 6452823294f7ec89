//===- LossOps.cpp - ONNX NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss --===//
//
// Both pick, for every sample (and extra dim), the entry of the class its
// label names: here as a one-hot mask (iota over the class dim compared
// with the label) and a sum over the class dim, which also gives an ignored
// or out-of-range label a zero. Class weights are gathered by label; mean
// reduction divides by the summed weights of the labels not ignored, as
// ONNX defines it.
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

/// The loss of `logProb` [N, C, d...] at `labels` [N, d...], reduced.
FailureOr<Value> negativeLogLikelihood(NodeContext &ctx, Value logProb,
                                       Value labels, Value weight) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  ArrayRef<int64_t> shape = shapeOf(logProb);
  if (shape.size() < 2) {
    (void)ctx.fail("the input must have rank >= 2");
    return failure();
  }
  SmallVector<int64_t> labelShape(shape.begin(), shape.end());
  labelShape.erase(labelShape.begin() + 1);
  if (shapeOf(labels) != ArrayRef<int64_t>(labelShape) ||
      !isa<IntegerType>(elementTypeOf(labels)) || isBool(labels)) {
    (void)ctx.fail("the labels must be integers of the input's shape without "
                   "the class dim");
    return failure();
  }
  int64_t classes = shape[1];
  if (classes == 0) {
    (void)ctx.fail("the input has no classes (dim 1 is 0)");
    return failure();
  }
  if (weight && (rankOf(weight) != 1 || shapeOf(weight)[0] != classes)) {
    (void)ctx.fail("the weights must have one entry per class");
    return failure();
  }
  Type element = elementTypeOf(logProb);
  Value label = cast(b, loc, labels, b.getI64Type());
  SmallVector<int64_t> withClass(labelShape);
  withClass.insert(withClass.begin() + 1, 1);
  Value spread = broadcastTo(b, loc, reshape(b, loc, label, withClass), shape);
  Value iota = b.create<IotaOp>(
      loc, RankedTensorType::get(shape, b.getI64Type()), 1);
  Value hit = b.create<CompareOp>(loc, CompareDirection::eq, iota, spread);
  Value picked = b.create<SelectOp>(loc, hit, logProb,
                                    splat(b, loc, typeOf(logProb), 0));
  picked = b.create<ReduceSumOp>(loc, picked, ArrayRef<int64_t>{1});

  auto labelFloat = RankedTensorType::get(labelShape, element);
  Value w = weight ? Value(b.create<GatherOp>(loc, weight, label))
                   : splat(b, loc, labelFloat, 1);
  if (const onnx::AttributeProto *ignore = ctx.attr("ignore_index")) {
    Value ignored = b.create<CompareOp>(
        loc, CompareDirection::eq, label,
        splat(b, loc, typeOf(label), static_cast<double>(ignore->i())));
    w = b.create<SelectOp>(loc, ignored, splat(b, loc, labelFloat, 0), w);
  }
  Value loss = b.create<NegOp>(loc, b.create<MulOp>(loc, picked, w));
  std::string reduction = ctx.getString("reduction", "mean");
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < rankOf(loss); ++i)
    all.push_back(i);
  if (reduction == "none")
    return loss;
  Value sum = b.create<ReduceSumOp>(loc, loss, all);
  if (reduction == "sum")
    return sum;
  if (reduction != "mean") {
    (void)ctx.fail("reduction '" + reduction + "' is not none, sum or mean");
    return failure();
  }
  Value total = b.create<ReduceSumOp>(loc, w, all);
  return Value(b.create<DivOp>(loc, sum, total));
}

LogicalResult nllOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  FailureOr<Value> loss = negativeLogLikelihood(
      ctx, ctx.input(0), ctx.input(1), ctx.hasInput(2) ? ctx.input(2) : Value());
  if (failed(loss))
    return failure();
  return ctx.setResults(*loss);
}

LogicalResult softmaxCrossEntropyOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireFloat(0)))
    return failure();
  Value scores = ctx.input(0);
  if (rankOf(scores) < 2)
    return ctx.fail("the scores must have rank >= 2");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // log_softmax over the class dim, with the maximum subtracted first.
  Value max = reduce(b, loc, Reduction::Max, scores, {1}, true);
  Value shifted = b.create<SubOp>(loc, scores,
                                  broadcastTo(b, loc, max, shapeOf(scores)));
  Value sum = reduce(b, loc, Reduction::Sum, b.create<ExpOp>(loc, shifted),
                     {1}, true);
  Value logProb = b.create<SubOp>(
      loc, shifted,
      broadcastTo(b, loc, b.create<LogOp>(loc, sum), shapeOf(scores)));
  FailureOr<Value> loss = negativeLogLikelihood(
      ctx, logProb, ctx.input(1), ctx.hasInput(2) ? ctx.input(2) : Value());
  if (failed(loss))
    return failure();
  return ctx.setResults({*loss, logProb});
}

} // namespace

void registerLossOps(OpTable &table) {
  table.add("NegativeLogLikelihoodLoss", nllOp);
  table.add("SoftmaxCrossEntropyLoss", softmaxCrossEntropyOp);
}

} // namespace onnx_import
} // namespace kiln
