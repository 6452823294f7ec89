//===- TrainingOps.cpp - ONNX's optimizer update rules -------------------===//
//
// The update rules of domain ai.onnx.preview.training (Adagrad, Adam,
// Momentum, Nesterov's momentum), elementwise over each optimized tensor:
// inputs R (learning rate) and T (update count, int64), both scalars, then
// per tensor group X..., G..., and the optimizer's state; outputs the new
// X... and the new state. T is a run-time value: the rules that depend on
// it (Adagrad's decay, Adam's bias correction, the first Momentum step)
// compute with it, not with a constant.
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

constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

/// The checked inputs of an update rule: R and T as rank-0 values of X's
/// element type, and `perTensor` lists (X, G, states...) of `n` tensors.
struct UpdateInputs {
  Value r, t;
  SmallVector<SmallVector<Value>> lists;
  int64_t n = 0;
};

FailureOr<UpdateInputs> readUpdateInputs(NodeContext &ctx,
                                         unsigned perTensor) {
  unsigned count = ctx.numInputs();
  if (count < 2 + perTensor || (count - 2) % perTensor)
    return ctx.fail("expects R, T and " + Twine(perTensor) +
                    " lists of one length (X, G and the state)");
  for (unsigned i = 0; i < count; ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is required");
  UpdateInputs in;
  in.n = (count - 2) / perTensor;
  if (ctx.numOutputs() > (perTensor - 1) * in.n)
    return ctx.fail("has more outputs than the updated tensors and states");
  Value r = ctx.input(0), t = ctx.input(1);
  if (!isFloat(r) || numElementsOf(shapeOf(r)) != 1)
    return ctx.fail("R must be a float scalar");
  if (!elementTypeOf(t).isInteger(64) || numElementsOf(shapeOf(t)) != 1)
    return ctx.fail("T must be an int64 scalar");
  Value x0 = ctx.input(2);
  if (!isFloat(x0))
    return ctx.fail("the optimized tensors must be floats");
  Type element = elementTypeOf(x0);
  in.r = cast(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, r, {}), element);
  in.t = cast(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, t, {}), element);
  for (unsigned list = 0; list < perTensor; ++list) {
    in.lists.emplace_back();
    for (int64_t i = 0; i < in.n; ++i) {
      Value v = ctx.input(2 + list * in.n + i);
      Value x = ctx.input(2 + i);
      if (typeOf(v) != typeOf(x))
        return ctx.fail("input " + Twine(2 + list * in.n + i) +
                        " must have the type of X" + Twine(i + 1) + ", " +
                        typeString(typeOf(x)));
      in.lists.back().push_back(v);
    }
  }
  return in;
}

/// Elementwise arithmetic on tensors of one type, rank-0 values broadcast.
struct Arith {
  OpBuilder &b;
  Location loc;
  RankedTensorType type;

  Value full(Value v) { return broadcastTo(b, loc, v, type.getShape()); }
  Value c(double v) { return splat(b, loc, type, v); }
  Value add(Value x, Value y) { return b.create<AddOp>(loc, full(x), full(y)); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, full(x), full(y)); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, full(x), full(y)); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, full(x), full(y)); }
  Value sqrt(Value x) { return b.create<SqrtOp>(loc, full(x)); }
};

/// Scalar arithmetic (rank 0) in `element`.
Arith scalars(NodeContext &ctx, Type element) {
  return Arith{ctx.b, ctx.loc, RankedTensorType::get({}, element)};
}

/// The gradient plus norm_coefficient * x (L2 regularization).
Value regularized(Arith &a, Value x, Value g, double normCoefficient) {
  return normCoefficient == 0 ? g : a.add(a.mul(a.c(normCoefficient), x), g);
}

LogicalResult adagradOp(NodeContext &ctx) {
  FailureOr<UpdateInputs> in = readUpdateInputs(ctx, 3);
  if (failed(in))
    return failure();
  double decay = ctx.getFloat("decay_factor", 0);
  double epsilon = ctx.getFloat("epsilon", 0);
  double norm = ctx.getFloat("norm_coefficient", 0);
  Arith s = scalars(ctx, elementTypeOf(in->r));
  // r / (1 + t * decay_factor)
  Value rate = s.div(in->r, s.add(s.c(1), s.mul(in->t, s.c(decay))));
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < in->n; ++i) {
    Value x = in->lists[0][i], g = in->lists[1][i], h = in->lists[2][i];
    Arith a{ctx.b, ctx.loc, typeOf(x)};
    Value gr = regularized(a, x, g, norm);
    Value hNew = a.add(h, a.mul(gr, gr));
    Value scale = a.add(a.sqrt(hNew), a.c(epsilon));
    xs.push_back(a.sub(x, a.div(a.mul(rate, gr), scale)));
    hs.push_back(hNew);
  }
  xs.append(hs);
  return ctx.setResults(xs);
}

LogicalResult adamOp(NodeContext &ctx) {
  FailureOr<UpdateInputs> in = readUpdateInputs(ctx, 4);
  if (failed(in))
    return failure();
  double alpha = ctx.getFloat("alpha", 0.9f);
  double beta = ctx.getFloat("beta", 0.999f);
  double epsilon = ctx.getFloat("epsilon", 0);
  double norm = ctx.getFloat("norm_coefficient", 0);
  double normPost = ctx.getFloat("norm_coefficient_post", 0);
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Arith s = scalars(ctx, elementTypeOf(in->r));
  // With t > 0 the rate is corrected for the moments' bias:
  // r * sqrt(1 - beta^t) / (1 - alpha^t).
  Value corrected = s.div(
      s.mul(in->r,
            s.sqrt(s.sub(s.c(1), b.create<PowOp>(loc, s.c(beta), in->t)))),
      s.sub(s.c(1), b.create<PowOp>(loc, s.c(alpha), in->t)));
  Value positive =
      b.create<CompareOp>(loc, CompareDirection::gt, in->t, s.c(0));
  Value rate = b.create<SelectOp>(loc, positive, corrected, in->r);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < in->n; ++i) {
    Value x = in->lists[0][i], g = in->lists[1][i], v = in->lists[2][i],
          h = in->lists[3][i];
    Arith a{b, loc, typeOf(x)};
    Value gr = regularized(a, x, g, norm);
    Value vNew = a.add(a.mul(a.c(alpha), v), a.mul(a.c(1 - alpha), gr));
    Value hNew = a.add(a.mul(a.c(beta), h), a.mul(a.c(1 - beta), a.mul(gr, gr)));
    Value scale = a.add(a.sqrt(hNew), a.c(epsilon));
    Value xNew = a.sub(x, a.mul(rate, a.div(vNew, scale)));
    xs.push_back(normPost == 0 ? xNew : a.mul(a.c(1 - normPost), xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  xs.append(vs);
  xs.append(hs);
  return ctx.setResults(xs);
}

LogicalResult momentumOp(NodeContext &ctx) {
  FailureOr<UpdateInputs> in = readUpdateInputs(ctx, 3);
  if (failed(in))
    return failure();
  const onnx::AttributeProto *alphaAttr = ctx.attr("alpha");
  const onnx::AttributeProto *betaAttr = ctx.attr("beta");
  const onnx::AttributeProto *normAttr = ctx.attr("norm_coefficient");
  if (!alphaAttr || !betaAttr || !normAttr)
    return ctx.fail("attributes alpha, beta and norm_coefficient are "
                    "required");
  double alpha = alphaAttr->f(), beta = betaAttr->f(), norm = normAttr->f();
  std::string mode = ctx.getString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.fail("mode '" + mode + "' is not standard or nesterov");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Arith s = scalars(ctx, elementTypeOf(in->r));
  // The first update (t = 0) takes the whole gradient.
  Value gradientScale = b.create<SelectOp>(
      loc, b.create<CompareOp>(loc, CompareDirection::gt, in->t, s.c(0)),
      s.c(beta), s.c(1));
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < in->n; ++i) {
    Value x = in->lists[0][i], g = in->lists[1][i], v = in->lists[2][i];
    Arith a{b, loc, typeOf(x)};
    Value gr = regularized(a, x, g, norm);
    Value vNew = a.add(a.mul(a.c(alpha), v), a.mul(gradientScale, gr));
    Value step = mode == "standard" ? vNew : a.add(gr, a.mul(a.c(alpha), vNew));
    xs.push_back(a.sub(x, a.mul(in->r, step)));
    vs.push_back(vNew);
  }
  xs.append(vs);
  return ctx.setResults(xs);
}

} // namespace

void registerTrainingOps(OpTable &table) {
  table.add(kTrainingDomain, "Adagrad", adagradOp);
  table.add(kTrainingDomain, "Adam", adamOp);
  table.add(kTrainingDomain, "Momentum", momentumOp);
}

} // namespace onnx_import
} // namespace kiln
