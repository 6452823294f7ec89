//===- ElementwiseOps.cpp - ONNX elementwise ops --------------------------===//
//
// Arithmetic, comparisons, activations and casts. ONNX broadcasts like
// numpy; the operands are broadcast explicitly (Emit.h). Activations that
// kiln has no op for are built from the ops it has, the way ONNX's own
// function bodies define them (e.g. Selu, HardSigmoid, Softplus).
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

/// Checks that inputs 0 .. count-1 exist and broadcast together.
LogicalResult checkBroadcast(NodeContext &ctx, unsigned count) {
  if (failed(ctx.requireInputs(count)))
    return failure();
  if (ctx.version < 7 && count == 2) {
    // Before opset 7: no broadcasting unless broadcast=1, which aligns B's
    // dims with A's from `axis` (default: trailing, as numpy does).
    int64_t ra = rankOf(ctx.input(0)), rb = rankOf(ctx.input(1));
    if (!ctx.getInt("broadcast", 0)) {
      if (shapeOf(ctx.input(0)) != shapeOf(ctx.input(1)))
        return ctx.fail("the inputs have different shapes and broadcast is "
                        "0");
    } else if (ctx.getInt("axis", ra - rb) != ra - rb) {
      return ctx.fail("broadcasting B from axis " +
                      Twine(ctx.getInt("axis", 0)) +
                      " (not its trailing dims) is not supported");
    }
  }
  SmallVector<int64_t> shape(shapeOf(ctx.input(0)));
  for (unsigned i = 1; i < count; ++i) {
    std::optional<SmallVector<int64_t>> next =
        broadcastShapes(shape, shapeOf(ctx.input(i)));
    if (!next)
      return ctx.fail("the input shapes do not broadcast together");
    shape = *next;
  }
  for (unsigned i = 1; i < count; ++i)
    if (elementTypeOf(ctx.input(i)) != elementTypeOf(ctx.input(0)))
      return ctx.fail("the inputs have different element types");
  return success();
}

template <typename OpTy>
LogicalResult binaryOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  if (isBool(ctx.input(0)))
    return ctx.fail("bool inputs are not supported by this op");
  return ctx.setResults(
      binary<OpTy>(ctx.b, ctx.loc, ctx.input(0), ctx.input(1)));
}

/// Max, Min, Sum, Mean: any number of inputs, folded left to right.
template <typename OpTy>
LogicalResult variadicOp(NodeContext &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.fail("needs at least one input");
  if (failed(checkBroadcast(ctx, ctx.numInputs())))
    return failure();
  Value acc = ctx.input(0);
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    acc = binary<OpTy>(ctx.b, ctx.loc, acc, ctx.input(i));
  return ctx.setResults(acc);
}

LogicalResult meanOp(NodeContext &ctx) {
  if (failed(variadicOp<AddOp>(ctx)))
    return failure();
  Value sum = ctx.results[0];
  Value n = splat(ctx.b, ctx.loc, typeOf(sum), ctx.numInputs());
  return ctx.setResults(ctx.b.create<DivOp>(ctx.loc, sum, n));
}

template <CompareDirection direction>
LogicalResult compareOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  return ctx.setResults(compare(ctx.b, ctx.loc, unsigned(direction),
                                ctx.input(0), ctx.input(1)));
}

template <typename OpTy, bool floatOnly>
LogicalResult unaryOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (floatOnly && failed(ctx.requireFloat(0)))
    return failure();
  if (isBool(ctx.input(0)))
    return ctx.fail("bool inputs are not supported by this op");
  return ctx.setResults(ctx.b.create<OpTy>(ctx.loc, ctx.input(0)));
}

LogicalResult identityOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.setResults(ctx.input(0));
}

/// Dropout at inference: the input, and an all-true mask. Training mode
/// (a true `training_mode` input, or is_test=0 before opset 7) draws random
/// numbers, which kiln does not do.
LogicalResult dropoutOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (ctx.version < 7 && !ctx.getInt("is_test", 0))
    return ctx.fail("is_test is 0: training mode draws random numbers, which "
                    "kiln does not support");
  // The drop ratio and the seed do not change the output at inference.
  (void)ctx.attr("ratio");
  (void)ctx.attr("seed");
  if (ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> training =
        ctx.constantInts(2, "training_mode");
    if (failed(training))
      return failure();
    // Training with a drop ratio of 0 drops nothing and scales by 1: the
    // output is the input, as at inference. Any other ratio needs random
    // numbers.
    if (!training->empty() && (*training)[0]) {
      if (!ctx.hasInput(1))
        return ctx.fail("training mode with the default ratio 0.5 draws "
                        "random numbers, which kiln does not support");
      FailureOr<SmallVector<double>> ratio = ctx.constantFloats(1, "ratio");
      if (failed(ratio))
        return failure();
      if (ratio->size() != 1 || (*ratio)[0] != 0)
        return ctx.fail("training mode with a ratio other than 0 draws "
                        "random numbers, which kiln does not support");
    }
  }
  Value x = ctx.input(0);
  SmallVector<Value> results{x};
  if (ctx.hasOutput(1))
    results.push_back(splat(ctx.b, ctx.loc,
                            RankedTensorType::get(shapeOf(x),
                                                  ctx.b.getI1Type()),
                            1));
  return ctx.setResults(results);
}

Value constLike(NodeContext &ctx, Value v, double value) {
  return splat(ctx.b, ctx.loc, typeOf(v), value);
}

LogicalResult reciprocalOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  return ctx.setResults(ctx.b.create<DivOp>(ctx.loc, constLike(ctx, x, 1), x));
}

LogicalResult leakyReluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 0.01f);
  Value zero = constLike(ctx, x, 0);
  Value positive = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::ge, x,
                                           zero);
  Value scaled = ctx.b.create<MulOp>(ctx.loc, x, constLike(ctx, x, alpha));
  return ctx.setResults(ctx.b.create<SelectOp>(ctx.loc, positive, x, scaled));
}

LogicalResult preluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), slope = ctx.input(1);
  // Before opset 7 a 1-d slope of one entry per channel applies along dim
  // 1 (the legacy broadcast of ONNX 1.1).
  if (ctx.version < 7 && rankOf(x) > 2 && rankOf(slope) == 1 &&
      shapeOf(slope)[0] == shapeOf(x)[1] && shapeOf(x)[1] != 1) {
    SmallVector<int64_t> shape(rankOf(x) - 1, 1);
    shape[0] = shapeOf(x)[1];
    slope = reshape(ctx.b, ctx.loc, slope, shape);
  }
  if (!broadcastShapes(shapeOf(x), shapeOf(slope)))
    return ctx.fail("the input shapes do not broadcast together");
  SmallVector<int64_t> shape = *broadcastShapes(shapeOf(x), shapeOf(slope));
  x = broadcastTo(ctx.b, ctx.loc, x, shape);
  slope = broadcastTo(ctx.b, ctx.loc, slope, shape);
  Value zero = constLike(ctx, x, 0);
  Value negative = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::lt, x,
                                           zero);
  Value scaled = ctx.b.create<MulOp>(ctx.loc, x, slope);
  return ctx.setResults(ctx.b.create<SelectOp>(ctx.loc, negative, scaled, x));
}

/// alpha * (exp(x) - 1) for x < 0, else x; Selu scales both by gamma.
Value eluOf(NodeContext &ctx, Value x, double alpha) {
  Value zero = constLike(ctx, x, 0);
  Value negative = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::lt, x,
                                           zero);
  Value em1 = ctx.b.create<SubOp>(ctx.loc, ctx.b.create<ExpOp>(ctx.loc, x),
                                  constLike(ctx, x, 1));
  Value scaled = ctx.b.create<MulOp>(ctx.loc, em1, constLike(ctx, x, alpha));
  return ctx.b.create<SelectOp>(ctx.loc, negative, scaled, x);
}

LogicalResult eluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  return ctx.setResults(eluOf(ctx, ctx.input(0), ctx.getFloat("alpha", 1.0f)));
}

LogicalResult seluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.67326319217681884765625f);
  double gamma = ctx.getFloat("gamma", 1.05070102214813232421875f);
  Value elu = eluOf(ctx, x, alpha);
  return ctx.setResults(
      ctx.b.create<MulOp>(ctx.loc, elu, constLike(ctx, x, gamma)));
}

/// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
LogicalResult celuOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  double alpha = ctx.getFloat("alpha", 1.0f);
  Value a = constLike(ctx, x, alpha);
  Value zero = constLike(ctx, x, 0);
  Value e = ctx.b.create<ExpOp>(ctx.loc, ctx.b.create<DivOp>(ctx.loc, x, a));
  Value em1 = ctx.b.create<MulOp>(
      ctx.loc, a, ctx.b.create<SubOp>(ctx.loc, e, constLike(ctx, x, 1)));
  Value pos = ctx.b.create<MaxOp>(ctx.loc, x, zero);
  Value neg = ctx.b.create<MinOp>(ctx.loc, em1, zero);
  return ctx.setResults(ctx.b.create<AddOp>(ctx.loc, pos, neg));
}

/// max(0, min(1, alpha * x + beta)).
Value hardSigmoidOf(NodeContext &ctx, Value x, double alpha, double beta) {
  Value y = ctx.b.create<AddOp>(
      ctx.loc, ctx.b.create<MulOp>(ctx.loc, x, constLike(ctx, x, alpha)),
      constLike(ctx, x, beta));
  y = ctx.b.create<MinOp>(ctx.loc, y, constLike(ctx, x, 1));
  return ctx.b.create<MaxOp>(ctx.loc, y, constLike(ctx, x, 0));
}

LogicalResult hardSigmoidOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  return ctx.setResults(hardSigmoidOf(ctx, ctx.input(0),
                                      ctx.getFloat("alpha", 0.2f),
                                      ctx.getFloat("beta", 0.5f)));
}

LogicalResult hardSwishOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  return ctx.setResults(ctx.b.create<MulOp>(
      ctx.loc, x, hardSigmoidOf(ctx, x, 1.0 / 6.0, 0.5)));
}

/// log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) so that it
/// neither overflows for large x nor loses small values for negative x.
Value softplusOf(NodeContext &ctx, Value x) {
  Value negAbs = ctx.b.create<NegOp>(ctx.loc, ctx.b.create<AbsOp>(ctx.loc, x));
  Value l = ctx.b.create<LogOp>(
      ctx.loc, ctx.b.create<AddOp>(ctx.loc, constLike(ctx, x, 1),
                                   ctx.b.create<ExpOp>(ctx.loc, negAbs)));
  Value relu = ctx.b.create<MaxOp>(ctx.loc, x, constLike(ctx, x, 0));
  return ctx.b.create<AddOp>(ctx.loc, relu, l);
}

LogicalResult softplusOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  return ctx.setResults(softplusOf(ctx, ctx.input(0)));
}

/// Gelu (opset 20): x/2 (1 + erf(x / sqrt 2)), or with approximate="tanh"
/// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch's
/// nn.GELU(approximate=...) that exporters map to it.
LogicalResult geluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  std::string approximate = ctx.getString("approximate", "none");
  Value inner;
  if (approximate == "none") {
    inner = ctx.b.create<ErfOp>(
        ctx.loc, ctx.b.create<MulOp>(ctx.loc, x, constLike(ctx, x, M_SQRT1_2)));
  } else if (approximate == "tanh") {
    Value cube = ctx.b.create<MulOp>(ctx.loc, x,
                                     ctx.b.create<MulOp>(ctx.loc, x, x));
    Value poly = ctx.b.create<AddOp>(
        ctx.loc, x,
        ctx.b.create<MulOp>(ctx.loc, cube, constLike(ctx, x, 0.044715)));
    inner = ctx.b.create<TanhOp>(
        ctx.loc, ctx.b.create<MulOp>(ctx.loc, poly,
                                     constLike(ctx, x, std::sqrt(2.0 / M_PI))));
  } else {
    return ctx.fail("attribute approximate is '" + approximate +
                    "'; Gelu takes 'none' or 'tanh'");
  }
  Value onePlus = ctx.b.create<AddOp>(ctx.loc, constLike(ctx, x, 1), inner);
  Value half = ctx.b.create<MulOp>(ctx.loc, x, constLike(ctx, x, 0.5));
  return ctx.setResults(ctx.b.create<MulOp>(ctx.loc, half, onePlus));
}

/// Swish (opset 24): x sigmoid(alpha x).
LogicalResult swishOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  Value ax = ctx.b.create<MulOp>(
      ctx.loc, x, constLike(ctx, x, ctx.getFloat("alpha", 1.0f)));
  return ctx.setResults(ctx.b.create<MulOp>(
      ctx.loc, x, ctx.b.create<SigmoidOp>(ctx.loc, ax)));
}

/// Mish (opset 18): x tanh(softplus(x)).
LogicalResult mishOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  return ctx.setResults(ctx.b.create<MulOp>(
      ctx.loc, x, ctx.b.create<TanhOp>(ctx.loc, softplusOf(ctx, x))));
}

LogicalResult softsignOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  Value d = ctx.b.create<AddOp>(ctx.loc, constLike(ctx, x, 1),
                                ctx.b.create<AbsOp>(ctx.loc, x));
  return ctx.setResults(ctx.b.create<DivOp>(ctx.loc, x, d));
}

LogicalResult thresholdedReluOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  Value above = ctx.b.create<CompareOp>(
      ctx.loc, CompareDirection::gt, x,
      constLike(ctx, x, ctx.getFloat("alpha", 1.0f)));
  return ctx.setResults(
      ctx.b.create<SelectOp>(ctx.loc, above, x, constLike(ctx, x, 0)));
}

/// Shrink: x - bias for x > lambd, x + bias for x < -lambd, else 0.
LogicalResult shrinkOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x))
    return ctx.fail("bool inputs are not supported by this op");
  double lambd = ctx.getFloat("lambd", 0.5f), bias = ctx.getFloat("bias", 0);
  Value above = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::gt, x,
                                        constLike(ctx, x, lambd));
  Value below = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::lt, x,
                                        constLike(ctx, x, -lambd));
  Value sub = ctx.b.create<SubOp>(ctx.loc, x, constLike(ctx, x, bias));
  Value add = ctx.b.create<AddOp>(ctx.loc, x, constLike(ctx, x, bias));
  Value inner = ctx.b.create<SelectOp>(ctx.loc, below, add,
                                       constLike(ctx, x, 0));
  return ctx.setResults(ctx.b.create<SelectOp>(ctx.loc, above, sub, inner));
}

LogicalResult clipOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x))
    return ctx.fail("bool inputs are not supported by this op");
  Value lo, hi;
  if (ctx.version < 11) {
    lo = constLike(ctx, x, ctx.getFloat("min", -3.4028234663852886e+38f));
    hi = constLike(ctx, x, ctx.getFloat("max", 3.4028234663852886e+38f));
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!ctx.hasInput(i))
        continue;
      Value bound = ctx.input(i);
      if (numElementsOf(shapeOf(bound)) != 1 ||
          elementTypeOf(bound) != elementTypeOf(x))
        return ctx.fail("min and max must be scalars of the input's type");
      bound = broadcastTo(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, bound, {}),
                          shapeOf(x));
      (i == 1 ? lo : hi) = bound;
    }
  }
  Value y = x;
  if (lo)
    y = ctx.b.create<MaxOp>(ctx.loc, y, lo);
  if (hi)
    y = ctx.b.create<MinOp>(ctx.loc, y, hi);
  return ctx.setResults(y);
}

LogicalResult whereOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value pred = ctx.input(0), a = ctx.input(1), c = ctx.input(2);
  if (!isBool(pred))
    return ctx.fail("the condition is not bool");
  if (elementTypeOf(a) != elementTypeOf(c))
    return ctx.fail("X and Y have different element types");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(shapeOf(a), shapeOf(c));
  if (shape)
    shape = broadcastShapes(*shape, shapeOf(pred));
  if (!shape)
    return ctx.fail("the input shapes do not broadcast together");
  return ctx.setResults(select(ctx.b, ctx.loc, pred, a, c));
}

LogicalResult notOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (!isBool(x))
    return ctx.fail("Not takes bool");
  return ctx.setResults(ctx.b.create<CompareOp>(ctx.loc, CompareDirection::eq,
                                                x, constLike(ctx, x, 0)));
}

/// And, Or and Xor on bool, as selects and comparisons.
template <int kind>
LogicalResult logicalOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  if (!isBool(ctx.input(0)))
    return ctx.fail("this op takes bool");
  SmallVector<int64_t> shape =
      *broadcastShapes(shapeOf(ctx.input(0)), shapeOf(ctx.input(1)));
  Value a = broadcastTo(ctx.b, ctx.loc, ctx.input(0), shape);
  Value c = broadcastTo(ctx.b, ctx.loc, ctx.input(1), shape);
  if (kind == 2)
    return ctx.setResults(
        ctx.b.create<CompareOp>(ctx.loc, CompareDirection::ne, a, c));
  Value constant = constLike(ctx, a, kind == 1);
  return ctx.setResults(kind == 0
                            ? ctx.b.create<SelectOp>(ctx.loc, a, c, constant)
                            : ctx.b.create<SelectOp>(ctx.loc, a, constant, c));
}

LogicalResult isNaNOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  return ctx.setResults(
      ctx.b.create<CompareOp>(ctx.loc, CompareDirection::ne, x, x));
}

LogicalResult isInfOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireFloat(0)))
    return failure();
  Value x = ctx.input(0);
  double inf = std::numeric_limits<double>::infinity();
  bool positive = ctx.getInt("detect_positive", 1);
  bool negative = ctx.getInt("detect_negative", 1);
  Value isPos = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::eq, x,
                                        constLike(ctx, x, inf));
  Value isNeg = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::eq, x,
                                        constLike(ctx, x, -inf));
  Value none = splat(ctx.b, ctx.loc, typeOf(isPos), 0);
  if (positive && negative)
    return ctx.setResults(ctx.b.create<SelectOp>(ctx.loc, isPos, isPos, isNeg));
  return ctx.setResults(positive ? isPos : negative ? isNeg : none);
}

/// Pow: a float base; an integer exponent is converted to it. Integer
/// bases are raised in double and converted back.
LogicalResult powOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), y = ctx.input(1);
  if (!broadcastShapes(shapeOf(x), shapeOf(y)))
    return ctx.fail("the input shapes do not broadcast together");
  if (isBool(x) || isBool(y))
    return ctx.fail("bool inputs are not supported by this op");
  Type resultType = elementTypeOf(x);
  Type computeType = isFloat(x) ? resultType : ctx.b.getF64Type();
  Value base = cast(ctx.b, ctx.loc, x, computeType);
  Value exponent = cast(ctx.b, ctx.loc, y, computeType);
  Value result = binary<PowOp>(ctx.b, ctx.loc, base, exponent);
  return ctx.setResults(cast(ctx.b, ctx.loc, result, resultType));
}

/// Mod: fmod=1 is C's fmod (kiln.rem); fmod=0 is Python's %,
/// whose result has the divisor's sign: the truncated remainder plus the
/// divisor where the two signs differ.
LogicalResult modOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  Value a = ctx.input(0), d = ctx.input(1);
  if (isBool(a))
    return ctx.fail("bool inputs are not supported by this op");
  // fmod=0 on floats (allowed from opset 28, and what a model asking for it
  // before means) is floor-rounded as for integers: fmod's NaNs for an
  // infinite dividend or a zero divisor carry over, and an infinite divisor
  // of the other sign than a finite x gives x + divisor, the divisor.
  bool fmod = ctx.getInt("fmod", 0);
  Value r = binary<RemOp>(ctx.b, ctx.loc, a, d);
  if (fmod)
    return ctx.setResults(r);
  d = broadcastTo(ctx.b, ctx.loc, d, shapeOf(r));
  Value zero = constLike(ctx, r, 0);
  Value nonzero = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::ne, r,
                                          zero);
  Value rNeg = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::lt, r, zero);
  Value dNeg = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::lt, d, zero);
  Value differ = ctx.b.create<CompareOp>(ctx.loc, CompareDirection::ne, rNeg,
                                         dNeg);
  Value fix = ctx.b.create<SelectOp>(ctx.loc, nonzero, differ,
                                     splat(ctx.b, ctx.loc, typeOf(differ), 0));
  Value adjusted = ctx.b.create<AddOp>(ctx.loc, r, d);
  Value result = ctx.b.create<SelectOp>(ctx.loc, fix, adjusted, r);
  if (isFloat(a)) {
    // A zero result takes the divisor's sign.
    Value signedZero = ctx.b.create<SelectOp>(
        ctx.loc, dNeg, constLike(ctx, r, -0.0), zero);
    Value isZero =
        ctx.b.create<CompareOp>(ctx.loc, CompareDirection::eq, r, zero);
    result = ctx.b.create<SelectOp>(ctx.loc, isZero, signedZero, result);
  }
  return ctx.setResults(result);
}

/// BitShift: kiln.shift_left or kiln.shift_right, logical on the unsigned
/// types and arithmetic on the signed ones (opset 28). kiln's shifts read
/// the amount as unsigned, so a negative amount, like one of at least the
/// bit width, shifts every bit out: ONNX's rule.
LogicalResult bitShiftOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  Value x = ctx.input(0), amount = ctx.input(1);
  if (!isa<IntegerType>(elementTypeOf(x)) || isBool(x))
    return ctx.fail("input 0 has element type " + typeString(elementTypeOf(x)) +
                    "; BitShift takes integers");
  std::string direction = ctx.getString("direction", "");
  if (direction == "LEFT")
    return ctx.setResults(binary<ShiftLeftOp>(ctx.b, ctx.loc, x, amount));
  if (direction == "RIGHT")
    return ctx.setResults(binary<ShiftRightOp>(ctx.b, ctx.loc, x, amount));
  return ctx.fail("direction must be \"LEFT\" or \"RIGHT\"");
}

/// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18) on integers, broadcast.
template <typename OpTy>
LogicalResult bitwiseOp(NodeContext &ctx) {
  if (failed(checkBroadcast(ctx, 2)))
    return failure();
  if (!isa<IntegerType>(elementTypeOf(ctx.input(0))) || isBool(ctx.input(0)))
    return ctx.fail("input 0 has element type " +
                    typeString(elementTypeOf(ctx.input(0))) +
                    "; bitwise ops take integers");
  return ctx.setResults(
      binary<OpTy>(ctx.b, ctx.loc, ctx.input(0), ctx.input(1)));
}

LogicalResult bitwiseNotOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (!isa<IntegerType>(elementTypeOf(x)) || isBool(x))
    return ctx.fail("input 0 has element type " + typeString(elementTypeOf(x)) +
                    "; BitwiseNot takes integers");
  return ctx.setResults(ctx.b.create<NotOp>(ctx.loc, x));
}

/// The scale or zero point `v` of a (De)QuantizeLinear, shaped to
/// broadcast against an input of rank `rank`: a scalar (or one-element
/// tensor) applies to every element, a 1-d tensor along `axis`.
FailureOr<Value> perAxis(NodeContext &ctx, Value v, int64_t rank,
                         llvm::StringRef what) {
  // Read (and so accepted) even where a scalar makes it irrelevant.
  int64_t axisAttr = ctx.getInt("axis", 1);
  if (numElementsOf(shapeOf(v)) == 1 && rankOf(v) <= 1)
    return reshape(ctx.b, ctx.loc, v, {});
  std::optional<int64_t> axis = normalizeAxis(axisAttr, rank);
  if (rankOf(v) != 1 || !axis)
    return ctx.fail(what + " must be a scalar, or 1-d along a valid axis");
  if (shapeOf(v)[0] != shapeOf(ctx.input(0))[*axis])
    return ctx.fail(what + " has " + Twine(shapeOf(v)[0]) +
                    " entries but the input has " +
                    Twine(shapeOf(ctx.input(0))[*axis]) + " along axis " +
                    Twine(*axis));
  SmallVector<int64_t> shape(rank, 1);
  shape[*axis] = shapeOf(v)[0];
  return reshape(ctx.b, ctx.loc, v, shape);
}

/// A blocked scale or zero point `v` of DequantizeLinear (opset 21): v has
/// x's shape with dim `axis` divided into blocks of `block` elements; each
/// entry is repeated over its block (the last block may be short).
FailureOr<Value> perBlock(NodeContext &ctx, Value v, Value x, int64_t block,
                          llvm::StringRef what) {
  std::optional<int64_t> axis = normalizeAxis(ctx.getInt("axis", 1), rankOf(x));
  if (!axis || rankOf(v) != rankOf(x))
    return ctx.fail(what + " must have x's rank for blocked quantization, "
                           "along a valid axis");
  ArrayRef<int64_t> xs = shapeOf(x), vs = shapeOf(v);
  for (int64_t d = 0; d < rankOf(x); ++d) {
    int64_t want = d == *axis ? (xs[d] + block - 1) / block : xs[d];
    if (vs[d] != want)
      return ctx.fail(what + " has " + Twine(vs[d]) + " entries along dim " +
                      Twine(d) + "; blocks of " + Twine(block) + " need " +
                      Twine(want));
  }
  SmallVector<int64_t> split(vs), repeated(vs);
  split.insert(split.begin() + *axis + 1, 1);
  repeated.insert(repeated.begin() + *axis + 1, block);
  Value spread = broadcastTo(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, v, split),
                             repeated);
  SmallVector<int64_t> merged(vs);
  merged[*axis] = vs[*axis] * block;
  return sliceAxis(ctx.b, ctx.loc, reshape(ctx.b, ctx.loc, spread, merged),
                   *axis, 0, xs[*axis]);
}

/// The type (De)QuantizeLinear's output_dtype (opset 21) names, or nullopt
/// where it is absent or 0 (the type then follows the other inputs);
/// failure (reported) for a type kiln does not have.
FailureOr<std::optional<Type>> outputDtype(NodeContext &ctx) {
  const onnx::AttributeProto *dtype = ctx.attr("output_dtype");
  if (!dtype || dtype->i() == 0)
    return std::optional<Type>();
  FailureOr<Type> type =
      ctx.importer.convertElementType(dtype->i(), "output_dtype");
  if (failed(type))
    return failure();
  return std::optional<Type>(*type);
}

/// Input `i` of (De)QuantizeLinear, a scale or zero point, shaped to
/// broadcast against x: per tensor or per axis, or per block where
/// block_size (opset 21) is set.
FailureOr<Value> quantParameter(NodeContext &ctx, unsigned i, Value x,
                                llvm::StringRef what) {
  int64_t block = ctx.getInt("block_size", 0);
  if (block < 0)
    return ctx.fail("block_size is negative");
  return block ? perBlock(ctx, ctx.input(i), x, block, what)
               : perAxis(ctx, ctx.input(i), rankOf(x), what);
}

/// QuantizeLinear: saturate(round(x / scale) + zero_point), rounding half to
/// even, into the zero point's type (uint8 when it is absent). The sum is
/// formed in x's float type, where it is exact, and kiln.cast saturates to
/// the integer type's range.
LogicalResult quantizeLinearOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0);
  if (!isFloat(x) && !elementTypeOf(x).isInteger(32))
    return ctx.fail("x must be a float or int32 tensor");
  Type compute = isFloat(x) ? elementTypeOf(x) : ctx.b.getF32Type();
  x = cast(ctx.b, ctx.loc, x, compute);
  FailureOr<Value> scale = quantParameter(ctx, 1, x, "y_scale");
  if (failed(scale))
    return failure();
  if (elementTypeOf(*scale) != compute)
    return ctx.fail("y_scale must have x's float type");
  // The result type: the zero point's, else output_dtype's (opset 21), else
  // uint8. Saturation to it is kiln.cast's.
  FailureOr<std::optional<Type>> dtype = outputDtype(ctx);
  if (failed(dtype))
    return failure();
  Type resultType =
      dtype->value_or(ctx.b.getIntegerType(8, /*isSigned=*/false));
  // saturate (opset 19) governs float8 results only, which kiln does not
  // produce.
  (void)ctx.attr("saturate");
  // The rounding precision (opset 24) of a float x is x's own here.
  if (int64_t precision = ctx.getInt("precision", 0);
      precision != 0 && precision != onnx::TensorProto::FLOAT)
    return ctx.fail("precision other than float is not supported");
  Value zeroPoint;
  if (ctx.hasInput(2)) {
    if (*dtype && elementTypeOf(ctx.input(2)) != resultType)
      return ctx.fail("output_dtype and y_zero_point's type disagree");
    resultType = elementTypeOf(ctx.input(2));
    FailureOr<Value> zp = quantParameter(ctx, 2, x, "y_zero_point");
    if (failed(zp))
      return failure();
    zeroPoint = cast(ctx.b, ctx.loc, *zp, compute);
  }
  auto integer = dyn_cast<IntegerType>(resultType);
  if (!integer || (integer.getWidth() != 8 && integer.getWidth() != 16))
    return ctx.fail("y_zero_point (or output_dtype) must be uint8, int8, "
                    "uint16 or int16");
  Value y =
      ctx.b.create<RoundOp>(ctx.loc, binary<DivOp>(ctx.b, ctx.loc, x, *scale));
  if (zeroPoint)
    y = binary<AddOp>(ctx.b, ctx.loc, y, zeroPoint);
  return ctx.setResults(cast(ctx.b, ctx.loc, y, resultType));
}

/// DequantizeLinear: (x - zero_point) * scale in the scale's float type, per
/// tensor, per axis or (opset 21) per block; the difference of two 8- or
/// 32-bit integers converted to float is exact for 8-bit x, as ONNX's
/// reference computes it. x is an integer tensor, or a float8 or 4-bit one,
/// which the importer has decoded (weights are constants: see
/// Importer::convertNarrowTensor); ONNX gives x no other float type.
LogicalResult dequantizeLinearOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0);
  if (isBool(x))
    return ctx.fail("x must be an integer or a float8 or 4-bit tensor");
  FailureOr<Value> scale = quantParameter(ctx, 1, x, "x_scale");
  if (failed(scale))
    return failure();
  if (!isFloat(*scale))
    return ctx.fail("x_scale must be a float tensor");
  Type compute = elementTypeOf(*scale);
  FailureOr<std::optional<Type>> dtype = outputDtype(ctx);
  if (failed(dtype))
    return failure();
  if (*dtype && **dtype != compute)
    return ctx.fail("output_dtype must be x_scale's element type");
  Value y = cast(ctx.b, ctx.loc, x, compute);
  if (ctx.hasInput(2)) {
    if (elementTypeOf(ctx.input(2)) != elementTypeOf(x))
      return ctx.fail("x_zero_point must have x's element type");
    FailureOr<Value> zp = quantParameter(ctx, 2, x, "x_zero_point");
    if (failed(zp))
      return failure();
    y = binary<SubOp>(ctx.b, ctx.loc, y, cast(ctx.b, ctx.loc, *zp, compute));
  }
  return ctx.setResults(binary<MulOp>(ctx.b, ctx.loc, y, *scale));
}

/// DynamicQuantizeLinear, as ONNX's function body defines it: the range
/// [min(0, min x), max(0, max x)] mapped onto uint8's [0, 255], so
/// scale = (max - min) / 255, zero_point = saturate(round(-min / scale)),
/// y = saturate(round(x / scale) + zero_point), rounding half to even.
LogicalResult dynamicQuantizeLinearOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (!elementTypeOf(x).isF32())
    return ctx.fail("x must be a float tensor");
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < rankOf(x); ++d)
    axes.push_back(d);
  Value zero = scalar(b, loc, b.getF32Type(), 0);
  Value low = b.create<MinOp>(loc,
                              reduce(b, loc, Reduction::Min, x, axes,
                                     /*keepDims=*/false),
                              zero);
  Value high = b.create<MaxOp>(loc,
                               reduce(b, loc, Reduction::Max, x, axes,
                                      /*keepDims=*/false),
                               zero);
  Value scale = b.create<DivOp>(loc, b.create<SubOp>(loc, high, low),
                                scalar(b, loc, b.getF32Type(), 255));
  Type u8 = b.getIntegerType(8, /*isSigned=*/false);
  // Saturating before rounding, as the function body does; the cast
  // saturates again, which changes nothing.
  Value intermediate =
      b.create<SubOp>(loc, zero, b.create<DivOp>(loc, low, scale));
  intermediate = b.create<MinOp>(loc, b.create<MaxOp>(loc, intermediate, zero),
                                 scalar(b, loc, b.getF32Type(), 255));
  Value zeroPointFloat = b.create<RoundOp>(loc, intermediate);
  Value y = b.create<RoundOp>(loc, binary<DivOp>(b, loc, x, scale));
  y = binary<AddOp>(b, loc, y, zeroPointFloat);
  return ctx.setResults(
      {cast(b, loc, y, u8), scale, cast(b, loc, zeroPointFloat, u8)});
}

LogicalResult castTo(NodeContext &ctx, Type type) {
  // saturate and round_mode (opsets 19 and 25) govern conversions to the
  // float8 and float4 types only, which kiln does not have.
  (void)ctx.attr("saturate");
  (void)ctx.attr("round_mode");
  return ctx.setResults(cast(ctx.b, ctx.loc, ctx.input(0), type));
}

/// The element type the attribute 'to' of Cast and BitCast names.
FailureOr<Type> targetType(NodeContext &ctx) {
  const onnx::AttributeProto *to = ctx.attr("to");
  if (!to)
    return ctx.fail("attribute 'to' is required");
  if (to->type() == onnx::AttributeProto::STRING)
    return ctx.fail("a string 'to' is not supported");
  FailureOr<Type> type = ctx.importer.convertElementType(
      to->i(), "the target of " + ctx.node.op_type());
  if (failed(type)) {
    // Restate the type error with the node it belongs to.
    std::string message = ctx.importer.error;
    ctx.importer.error.clear();
    return ctx.fail(message);
  }
  return type;
}

LogicalResult castOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<Type> type = targetType(ctx);
  return failed(type) ? failure() : castTo(ctx, *type);
}

/// BitCast: the bits of each element read as another type of one width.
/// ONNX stores bool in a byte, kiln in one bit, so bool is refused.
LogicalResult bitCastOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<Type> type = targetType(ctx);
  if (failed(type))
    return failure();
  Value x = ctx.input(0);
  Type from = elementTypeOf(x);
  if (from.isInteger(1) || type->isInteger(1))
    return ctx.fail("BitCast of bool is not supported");
  if (from.getIntOrFloatBitWidth() != type->getIntOrFloatBitWidth())
    return ctx.fail("BitCast from " + typeString(from) + " to " +
                    typeString(*type) + ": the widths differ");
  if (from == *type)
    return ctx.setResults(x);
  return ctx.setResults(
      ctx.b.create<BitcastOp>(ctx.loc, typeOf(x).clone(*type), x));
}

LogicalResult castLikeOp(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return castTo(ctx, elementTypeOf(ctx.input(1)));
}

} // namespace

void registerElementwiseOps(OpTable &table) {
  table.add("Add", binaryOp<AddOp>);
  table.add("Sub", binaryOp<SubOp>);
  table.add("Mul", binaryOp<MulOp>);
  table.add("Div", binaryOp<DivOp>);
  table.add("Pow", powOp);
  table.add("Max", variadicOp<MaxOp>);
  table.add("Min", variadicOp<MinOp>);
  table.add("Sum", variadicOp<AddOp>);
  table.add("Mean", meanOp);
  table.add("Equal", compareOp<CompareDirection::eq>);
  table.add("Less", compareOp<CompareDirection::lt>);
  table.add("LessOrEqual", compareOp<CompareDirection::le>);
  table.add("Greater", compareOp<CompareDirection::gt>);
  table.add("GreaterOrEqual", compareOp<CompareDirection::ge>);
  table.add("Not", notOp);
  table.add("And", logicalOp<0>);
  table.add("Or", logicalOp<1>);
  table.add("Xor", logicalOp<2>);
  table.add("Neg", unaryOp<NegOp, false>);
  table.add("Abs", unaryOp<AbsOp, false>);
  table.add("Relu", unaryOp<ReluOp, false>);
  table.add("Exp", unaryOp<ExpOp, true>);
  table.add("Log", unaryOp<LogOp, true>);
  table.add("Sqrt", unaryOp<SqrtOp, true>);
  table.add("Tanh", unaryOp<TanhOp, true>);
  table.add("Sigmoid", unaryOp<SigmoidOp, true>);
  table.add("Sin", unaryOp<SinOp, true>);
  table.add("Cos", unaryOp<CosOp, true>);
  table.add("Reciprocal", reciprocalOp);
  table.add("Sign", unaryOp<SignOp, false>);
  table.add("Erf", unaryOp<ErfOp, true>);
  table.add("Floor", unaryOp<FloorOp, true>);
  table.add("Ceil", unaryOp<CeilOp, true>);
  table.add("Round", unaryOp<RoundOp, true>);
  table.add("Tan", unaryOp<TanOp, true>);
  table.add("Asin", unaryOp<AsinOp, true>);
  table.add("Acos", unaryOp<AcosOp, true>);
  table.add("Atan", unaryOp<AtanOp, true>);
  table.add("Sinh", unaryOp<SinhOp, true>);
  table.add("Cosh", unaryOp<CoshOp, true>);
  table.add("Asinh", unaryOp<AsinhOp, true>);
  table.add("Acosh", unaryOp<AcoshOp, true>);
  table.add("Atanh", unaryOp<AtanhOp, true>);
  table.add("Mod", modOp);
  table.add("BitShift", bitShiftOp);
  table.add("BitwiseAnd", bitwiseOp<AndOp>);
  table.add("BitwiseOr", bitwiseOp<OrOp>);
  table.add("BitwiseXor", bitwiseOp<XorOp>);
  table.add("BitwiseNot", bitwiseNotOp);
  table.add("QuantizeLinear", quantizeLinearOp);
  table.add("DequantizeLinear", dequantizeLinearOp);
  table.add("DynamicQuantizeLinear", dynamicQuantizeLinearOp);
  table.add("IsNaN", isNaNOp);
  table.add("IsInf", isInfOp);
  table.add("Identity", identityOp);
  table.add("Dropout", dropoutOp);
  table.add("LeakyRelu", leakyReluOp);
  table.add("PRelu", preluOp);
  table.add("Elu", eluOp);
  table.add("Selu", seluOp);
  table.add("Celu", celuOp);
  table.add("HardSigmoid", hardSigmoidOp);
  table.add("HardSwish", hardSwishOp);
  table.add("Gelu", geluOp);
  table.add("Mish", mishOp);
  table.add("Swish", swishOp);
  table.add("Softplus", softplusOp);
  table.add("Softsign", softsignOp);
  table.add("ThresholdedRelu", thresholdedReluOp);
  table.add("Shrink", shrinkOp);
  table.add("Clip", clipOp);
  table.add("Where", whereOp);
  table.add("Cast", castOp);
  table.add("BitCast", bitCastOp);
  table.add("CastLike", castLikeOp);
}

} // namespace onnx_import
} // namespace kiln
