//===- RecurrentOps.cpp - ONNX RNN, GRU and LSTM --------------------------===//
//
// Each recurrent op becomes one kiln.for over the sequence, whose gradient
// needs no run-time stack (the trip count is static). The input projection
// X W^T + bias of every time step and direction is one kiln.matmul before
// the loop; the loop body reads its row for step t (seq - 1 - t for the
// reverse direction) with kiln.dynamic_slice and adds H W_R^T, one matmul
// per direction and step. Y is a preallocated [seq, batch, hidden] buffer
// per direction written with kiln.dynamic_update_slice, as for Scan. Both
// directions of a bidirectional op run in the same loop.
//
// sequence_lens must be a constant whose entries all equal the sequence
// length: shorter sequences would need a per-batch-entry mask, which kiln
// does not build yet.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"
#include "LoopBuilder.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

enum class Cell { Rnn, Gru, Lstm };

/// An activation function of the `activations` attribute with its alpha and
/// beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// The activations ONNX's recurrent ops accept, which of alpha and beta
/// each takes, and their defaults (those of the ONNX ops of the same name).
struct ActivationInfo {
  const char *name;
  bool takesAlpha, takesBeta;
  double alpha, beta;
};
const ActivationInfo kActivations[] = {
    {"Relu", false, false, 0, 0},
    {"Tanh", false, false, 0, 0},
    {"Sigmoid", false, false, 0, 0},
    {"Affine", true, true, 1.0, 0.0},
    {"LeakyRelu", true, false, 0.01, 0},
    {"ThresholdedRelu", true, false, 1.0, 0},
    {"ScaledTanh", true, true, 1.0, 1.0},
    {"HardSigmoid", true, true, 0.2, 0.5},
    {"Elu", true, false, 1.0, 0},
    {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0},
};

Value constLike(OpBuilder &b, Location loc, Value v, double value) {
  return splat(b, loc, typeOf(v), value);
}

Value applyActivation(OpBuilder &b, Location loc, const Activation &f,
                      Value x) {
  StringRef name = f.name;
  auto c = [&](double value) { return constLike(b, loc, x, value); };
  if (name == "Relu")
    return b.create<ReluOp>(loc, x);
  if (name == "Tanh")
    return b.create<TanhOp>(loc, x);
  if (name == "Sigmoid")
    return b.create<SigmoidOp>(loc, x);
  if (name == "Affine")
    return b.create<AddOp>(loc, b.create<MulOp>(loc, x, c(f.alpha)),
                           c(f.beta));
  if (name == "LeakyRelu") {
    Value positive = b.create<CompareOp>(loc, CompareDirection::ge, x, c(0));
    return b.create<SelectOp>(loc, positive, x,
                              b.create<MulOp>(loc, x, c(f.alpha)));
  }
  if (name == "ThresholdedRelu") {
    Value above = b.create<CompareOp>(loc, CompareDirection::gt, x, c(f.alpha));
    return b.create<SelectOp>(loc, above, x, c(0));
  }
  if (name == "ScaledTanh")
    return b.create<MulOp>(
        loc, c(f.alpha),
        b.create<TanhOp>(loc, b.create<MulOp>(loc, x, c(f.beta))));
  if (name == "HardSigmoid") {
    Value lin = b.create<AddOp>(loc, b.create<MulOp>(loc, x, c(f.alpha)),
                                c(f.beta));
    return b.create<MaxOp>(loc, c(0), b.create<MinOp>(loc, c(1), lin));
  }
  if (name == "Elu") {
    Value positive = b.create<CompareOp>(loc, CompareDirection::ge, x, c(0));
    Value negative = b.create<MulOp>(
        loc, c(f.alpha), b.create<SubOp>(loc, b.create<ExpOp>(loc, x), c(1)));
    return b.create<SelectOp>(loc, positive, x, negative);
  }
  if (name == "Softsign")
    return b.create<DivOp>(
        loc, x, b.create<AddOp>(loc, c(1), b.create<AbsOp>(loc, x)));
  // Softplus, as max(x, 0) + log(1 + exp(-|x|)), which does not overflow.
  Value negAbs = b.create<NegOp>(loc, b.create<AbsOp>(loc, x));
  Value l = b.create<LogOp>(
      loc, b.create<AddOp>(loc, c(1), b.create<ExpOp>(loc, negAbs)));
  return b.create<AddOp>(loc, b.create<MaxOp>(loc, x, c(0)), l);
}

/// The `activations` attribute with alpha and beta, `perDirection` for
/// each of `numDirections`, or the defaults. alpha and beta are taken in
/// order by the functions that have them (as ONNX Runtime reads them);
/// a function left without values gets its ONNX op's defaults, as ONNX's
/// specification says (ONNX Runtime 1.32 uses 0 instead for Affine,
/// ScaledTanh and ThresholdedRelu).
FailureOr<SmallVector<Activation>>
readActivations(NodeContext &ctx, ArrayRef<const char *> defaults,
                int64_t numDirections) {
  size_t perDirection = defaults.size();
  SmallVector<Activation> result;
  const onnx::AttributeProto *names = ctx.attr("activations");
  if (!names || names->strings_size() == 0) {
    for (int64_t d = 0; d < numDirections; ++d)
      for (const char *name : defaults)
        result.push_back({name, 0, 0});
    return result;
  }
  size_t count = names->strings_size();
  // One direction's list given for both directions applies to both.
  if (count != perDirection * numDirections && count != perDirection) {
    (void)ctx.fail("'activations' has " + Twine(count) + " entries; it needs " +
                   Twine(perDirection * numDirections) + " (" +
                   Twine(perDirection) + " per direction)");
    return failure();
  }
  const onnx::AttributeProto *alphas = ctx.attr("activation_alpha");
  const onnx::AttributeProto *betas = ctx.attr("activation_beta");
  int nextAlpha = 0, nextBeta = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::string &name = names->strings(i);
    const ActivationInfo *info = nullptr;
    for (const ActivationInfo &candidate : kActivations)
      if (StringRef(name).equals_insensitive(candidate.name))
        info = &candidate;
    if (!info) {
      (void)ctx.fail("activation '" + name + "' is not one of ONNX's "
                     "recurrent activations (Relu, Tanh, Sigmoid, Affine, "
                     "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                     "Elu, Softsign, Softplus)");
      return failure();
    }
    Activation f{info->name, info->alpha, info->beta};
    if (info->takesAlpha && alphas && nextAlpha < alphas->floats_size())
      f.alpha = alphas->floats(nextAlpha++);
    if (info->takesBeta && betas && nextBeta < betas->floats_size())
      f.beta = betas->floats(nextBeta++);
    result.push_back(f);
  }
  if (count != perDirection * numDirections)
    result.append(SmallVector<Activation>(result));
  return result;
}

/// Per-direction weights, in the layouts the loop uses.
struct DirectionWeights {
  /// R^T: [hidden, gates * hidden]. For GRU without linear_before_reset
  /// only the z and r gates' columns; the h gate's are `hiddenRT`.
  Value recurrentT;
  Value hiddenRT;
  /// GRU with linear_before_reset: Rb of the h gate, [batch, hidden].
  Value hiddenBias;
  /// LSTM peepholes, [batch, hidden] each (null without P).
  Value peepI, peepO, peepF;
  Value initialH, initialC;
};

LogicalResult recurrentOp(NodeContext &ctx, Cell cell) {
  const char *opName = cell == Cell::Rnn   ? "RNN"
                       : cell == Cell::Gru ? "GRU"
                                           : "LSTM";
  if (ctx.version < 7)
    return ctx.fail(Twine(opName) + "-" + Twine(ctx.version) +
                    " (with output_sequence) is not supported; kiln imports "
                    "the op from opset 7 on");
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireFloat(0)))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  const int64_t gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  Type elementType = elementTypeOf(x);

  int64_t layout = ctx.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.fail("layout must be 0 or 1, not " + Twine(layout));
  std::string direction = ctx.getString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.fail("direction '" + direction +
                    "' is not forward, reverse or bidirectional");
  const int64_t numDirections = direction == "bidirectional" ? 2 : 1;
  auto isReverse = [&](int64_t d) {
    return direction == "reverse" || (direction == "bidirectional" && d == 1);
  };

  if (rankOf(x) != 3 || rankOf(w) != 3 || rankOf(r) != 3)
    return ctx.fail("X, W and R must have rank 3");
  const int64_t seq = shapeOf(x)[layout == 0 ? 0 : 1];
  const int64_t batch = shapeOf(x)[layout == 0 ? 1 : 0];
  const int64_t inputSize = shapeOf(x)[2];
  const int64_t hidden = shapeOf(r)[2];
  const int64_t gateWidth = gates * hidden;
  if (ctx.attr("hidden_size") && ctx.getInt("hidden_size", 0) != hidden)
    return ctx.fail("hidden_size is " + Twine(ctx.getInt("hidden_size", 0)) +
                    " but R is " + typeString(r.getType()));
  if (shapeOf(w) != ArrayRef<int64_t>{numDirections, gateWidth, inputSize})
    return ctx.fail("W is " + typeString(w.getType()) + "; expected [" +
                    Twine(numDirections) + ", " + Twine(gateWidth) + ", " +
                    Twine(inputSize) + "]");
  if (shapeOf(r) != ArrayRef<int64_t>{numDirections, gateWidth, hidden})
    return ctx.fail("R is " + typeString(r.getType()) + "; expected [" +
                    Twine(numDirections) + ", " + Twine(gateWidth) + ", " +
                    Twine(hidden) + "]");
  if (seq == 0 || batch == 0 || hidden == 0)
    return ctx.fail("the sequence, batch and hidden sizes must be nonzero");
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (i != 4 && ctx.hasInput(i) && elementTypeOf(ctx.input(i)) != elementType)
      return ctx.fail("input " + Twine(i) + " has element type " +
                      typeString(elementTypeOf(ctx.input(i))) +
                      ", not X's " + typeString(elementType));

  if (ctx.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> lens = ctx.constantInts(4, "sequence_lens");
    if (failed(lens))
      return failure();
    if (static_cast<int64_t>(lens->size()) != batch ||
        llvm::any_of(*lens, [&](int64_t n) { return n != seq; }))
      return ctx.fail("sequence_lens must give every batch entry the full "
                      "sequence length " +
                      Twine(seq) +
                      "; kiln does not support shorter sequences yet");
  }

  std::optional<double> clip;
  if (ctx.attr("clip"))
    clip = ctx.getFloat("clip", 0);
  if (clip && !(*clip > 0))
    return ctx.fail("clip must be positive");
  bool inputForget = cell == Cell::Lstm && ctx.getInt("input_forget", 0) != 0;
  bool linearBeforeReset =
      cell == Cell::Gru && ctx.getInt("linear_before_reset", 0) != 0;

  SmallVector<const char *> defaults;
  if (cell == Cell::Rnn)
    defaults = {"Tanh"};
  else if (cell == Cell::Gru)
    defaults = {"Sigmoid", "Tanh"};
  else
    defaults = {"Sigmoid", "Tanh", "Tanh"};
  FailureOr<SmallVector<Activation>> activations =
      readActivations(ctx, defaults, numDirections);
  if (failed(activations))
    return failure();
  auto activation = [&](int64_t d, unsigned k) -> const Activation & {
    return (*activations)[d * defaults.size() + k];
  };

  // Optional inputs: B [dirs, 2 * gateWidth], initial_h/c [dirs, batch,
  // hidden] ([batch, dirs, hidden] in layout 1), P [dirs, 3 * hidden].
  SmallVector<int64_t> stateShape =
      layout == 0 ? SmallVector<int64_t>{numDirections, batch, hidden}
                  : SmallVector<int64_t>{batch, numDirections, hidden};
  auto checkShape = [&](unsigned i, const char *name,
                        ArrayRef<int64_t> shape) -> LogicalResult {
    if (ctx.hasInput(i) && shapeOf(ctx.input(i)) != shape)
      return ctx.fail(Twine(name) + " is " +
                      typeString(ctx.input(i).getType()) +
                      ", which does not match X, W and R");
    return success();
  };
  if (failed(checkShape(3, "B", {numDirections, 2 * gateWidth})) ||
      failed(checkShape(5, "initial_h", stateShape)) ||
      (cell == Cell::Lstm &&
       (failed(checkShape(6, "initial_c", stateShape)) ||
        failed(checkShape(7, "P", {numDirections, 3 * hidden})))))
    return failure();

  // Time-major X, then the projection of every step and direction:
  // [seq * batch, input] x [input, dirs * gateWidth] + bias.
  Value xTime = layout == 0 ? x : transpose(b, loc, x, {1, 0, 2});
  Value rows = reshape(b, loc, xTime, {seq * batch, inputSize});
  Value wT = transpose(
      b, loc, reshape(b, loc, w, {numDirections * gateWidth, inputSize}),
      {1, 0});
  Value projection = b.create<MatmulOp>(loc, rows, wT);
  Value bias = ctx.hasInput(3) ? ctx.input(3) : Value();
  if (bias) {
    Value wb = sliceAxis(b, loc, bias, 1, 0, gateWidth);
    Value rb = sliceAxis(b, loc, bias, 1, gateWidth, 2 * gateWidth);
    if (linearBeforeReset) {
      // The h gate's Rb is added inside the reset gate's product.
      Value rbZr = sliceAxis(b, loc, rb, 1, 0, 2 * hidden);
      Value zeros = splat(
          b, loc, RankedTensorType::get({numDirections, hidden}, elementType),
          0);
      rb = concat(b, loc, {rbZr, zeros}, 1);
    }
    Value total = b.create<AddOp>(loc, wb, rb);
    total = reshape(b, loc, total, {numDirections * gateWidth});
    projection = binary<AddOp>(b, loc, projection, total);
  }
  projection = reshape(b, loc, projection,
                       {seq, batch, numDirections * gateWidth});

  SmallVector<DirectionWeights> dirs(numDirections);
  auto initialState = [&](unsigned i, int64_t d) {
    if (!ctx.hasInput(i))
      return splat(b, loc, RankedTensorType::get({batch, hidden}, elementType),
                   0);
    Value s = sliceAxis(b, loc, ctx.input(i), layout == 0 ? 0 : 1, d, d + 1);
    return reshape(b, loc, s, {batch, hidden});
  };
  auto rowOf = [&](Value v, int64_t d, int64_t start, int64_t limit) {
    Value s = sliceAxis(b, loc, sliceAxis(b, loc, v, 0, d, d + 1), 1, start,
                        limit);
    return reshape(b, loc, s, {limit - start});
  };
  auto batchRows = [&](Value v) {
    return broadcastTo(b, loc, v, {batch, hidden});
  };
  for (int64_t d = 0; d < numDirections; ++d) {
    DirectionWeights &dw = dirs[d];
    Value rd = reshape(b, loc, sliceAxis(b, loc, r, 0, d, d + 1),
                       {gateWidth, hidden});
    if (cell == Cell::Gru && !linearBeforeReset) {
      dw.recurrentT =
          transpose(b, loc, sliceAxis(b, loc, rd, 0, 0, 2 * hidden), {1, 0});
      dw.hiddenRT = transpose(
          b, loc, sliceAxis(b, loc, rd, 0, 2 * hidden, gateWidth), {1, 0});
    } else {
      dw.recurrentT = transpose(b, loc, rd, {1, 0});
    }
    if (linearBeforeReset) {
      dw.hiddenBias =
          bias ? batchRows(rowOf(bias, d, gateWidth + 2 * hidden,
                                 2 * gateWidth))
               : splat(b, loc,
                       RankedTensorType::get({batch, hidden}, elementType), 0);
    }
    if (cell == Cell::Lstm && ctx.hasInput(7)) {
      Value p = ctx.input(7);
      dw.peepI = batchRows(rowOf(p, d, 0, hidden));
      dw.peepO = batchRows(rowOf(p, d, hidden, 2 * hidden));
      dw.peepF = batchRows(rowOf(p, d, 2 * hidden, 3 * hidden));
    }
    dw.initialH = initialState(5, d);
    if (cell == Cell::Lstm)
      dw.initialC = initialState(6, d);
  }

  bool wantY = ctx.hasOutput(0);
  Value yInit;
  if (wantY)
    yInit = splat(b, loc,
                  RankedTensorType::get({seq, batch, hidden}, elementType), 0);

  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  LoopBuilder loop(b, loc);
  unsigned projectionArg = loop.add(projection);
  struct DirectionArgs {
    unsigned h, c, y, recurrentT, hiddenRT, hiddenBias, peepI, peepO, peepF;
  };
  SmallVector<DirectionArgs> args(numDirections);
  for (int64_t d = 0; d < numDirections; ++d) {
    DirectionWeights &dw = dirs[d];
    DirectionArgs &a = args[d];
    a.h = loop.add(dw.initialH);
    if (cell == Cell::Lstm)
      a.c = loop.add(dw.initialC);
    if (wantY)
      a.y = loop.add(yInit);
    a.recurrentT = loop.add(dw.recurrentT);
    if (dw.hiddenRT)
      a.hiddenRT = loop.add(dw.hiddenRT);
    if (dw.hiddenBias)
      a.hiddenBias = loop.add(dw.hiddenBias);
    if (dw.peepI) {
      a.peepI = loop.add(dw.peepI);
      a.peepO = loop.add(dw.peepO);
      a.peepF = loop.add(dw.peepF);
    }
  }

  b.setInsertionPointToStart(loop.block.get());
  Value forwardIndex = loop.index, reverseIndex;
  if (direction != "forward")
    reverseIndex = b.create<SubOp>(
        loc, constantInts(b, loc, b.getI64Type(), {}, {seq - 1}),
        loop.index);
  auto clipped = [&](Value v) -> Value {
    if (!clip)
      return v;
    return b.create<MaxOp>(loc, constLike(b, loc, v, -*clip),
                           b.create<MinOp>(loc, constLike(b, loc, v, *clip), v));
  };
  auto gate = [&](Value v, int64_t k) {
    return sliceAxis(b, loc, v, 1, k * hidden, (k + 1) * hidden);
  };
  for (int64_t d = 0; d < numDirections; ++d) {
    const DirectionArgs &a = args[d];
    Value step = isReverse(d) ? reverseIndex : forwardIndex;
    Value row = b.create<DynamicSliceOp>(loc, loop.arg(projectionArg), step,
                                         uint64_t(1));
    row = reshape(b, loc, row, {batch, numDirections * gateWidth});
    Value xp = sliceAxis(b, loc, row, 1, d * gateWidth, (d + 1) * gateWidth);
    Value h = loop.arg(a.h);
    Value hr = b.create<MatmulOp>(loc, h, loop.arg(a.recurrentT));
    Value next;
    if (cell == Cell::Rnn) {
      Value pre = clipped(b.create<AddOp>(loc, xp, hr));
      next = applyActivation(b, loc, activation(d, 0), pre);
    } else if (cell == Cell::Gru) {
      // Gates z, r, h.
      Value z = applyActivation(
          b, loc, activation(d, 0),
          clipped(b.create<AddOp>(loc, gate(xp, 0), gate(hr, 0))));
      Value reset = applyActivation(
          b, loc, activation(d, 0),
          clipped(b.create<AddOp>(loc, gate(xp, 1), gate(hr, 1))));
      Value recurrent;
      if (linearBeforeReset)
        recurrent = b.create<MulOp>(
            loc, reset,
            b.create<AddOp>(loc, gate(hr, 2), loop.arg(a.hiddenBias)));
      else
        recurrent = b.create<MatmulOp>(loc, b.create<MulOp>(loc, reset, h),
                                       loop.arg(a.hiddenRT));
      Value candidate = applyActivation(
          b, loc, activation(d, 1),
          clipped(b.create<AddOp>(loc, gate(xp, 2), recurrent)));
      // (1 - z) * candidate + z * h = candidate + z * (h - candidate).
      next = b.create<AddOp>(
          loc, candidate,
          b.create<MulOp>(loc, z, b.create<SubOp>(loc, h, candidate)));
    } else {
      // Gates i, o, f, c; peepholes P = [i, o, f].
      Value c = loop.arg(a.c);
      Value pre = b.create<AddOp>(loc, xp, hr);
      Value preI = gate(pre, 0), preO = gate(pre, 1), preF = gate(pre, 2),
            preC = gate(pre, 3);
      bool peepholes = static_cast<bool>(dirs[d].peepI);
      if (peepholes) {
        preI = b.create<AddOp>(loc, preI,
                               b.create<MulOp>(loc, loop.arg(a.peepI), c));
        preF = b.create<AddOp>(loc, preF,
                               b.create<MulOp>(loc, loop.arg(a.peepF), c));
      }
      Value i = applyActivation(b, loc, activation(d, 0), clipped(preI));
      Value f = inputForget
                    ? Value(b.create<SubOp>(loc, constLike(b, loc, i, 1), i))
                    : applyActivation(b, loc, activation(d, 0), clipped(preF));
      Value candidate =
          applyActivation(b, loc, activation(d, 1), clipped(preC));
      Value cNext = b.create<AddOp>(loc, b.create<MulOp>(loc, f, c),
                                    b.create<MulOp>(loc, i, candidate));
      if (peepholes)
        preO = b.create<AddOp>(loc, preO,
                               b.create<MulOp>(loc, loop.arg(a.peepO), cNext));
      Value o = applyActivation(b, loc, activation(d, 0), clipped(preO));
      next = b.create<MulOp>(
          loc, o, applyActivation(b, loc, activation(d, 2), cNext));
      loop.setNext(a.c, cNext);
    }
    loop.setNext(a.h, next);
    if (wantY)
      loop.setNext(a.y, b.create<DynamicUpdateSliceOp>(
                            loc, loop.arg(a.y),
                            reshape(b, loc, next, {1, batch, hidden}), step));
  }
  ForOp op = loop.finish(outside, seq);

  // Outputs: Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch,
  // hidden]; in layout 1 [batch, seq, dirs, hidden] and [batch, dirs,
  // hidden].
  auto stack = [&](auto member, ArrayRef<int64_t> partShape, int64_t axis) {
    SmallVector<Value> parts;
    for (int64_t d = 0; d < numDirections; ++d)
      parts.push_back(
          reshape(b, loc, op.getResult(args[d].*member), partShape));
    return concat(b, loc, parts, axis);
  };
  SmallVector<Value> results(3);
  if (wantY) {
    Value y = stack(&DirectionArgs::y, {seq, 1, batch, hidden}, 1);
    results[0] = layout == 0 ? y : transpose(b, loc, y, {2, 0, 1, 3});
  }
  auto finalState = [&](unsigned DirectionArgs::*member) {
    Value s = stack(member, {1, batch, hidden}, 0);
    return layout == 0 ? s : transpose(b, loc, s, {1, 0, 2});
  };
  if (ctx.hasOutput(1))
    results[1] = finalState(&DirectionArgs::h);
  if (cell == Cell::Lstm && ctx.hasOutput(2))
    results[2] = finalState(&DirectionArgs::c);
  else if (cell != Cell::Lstm)
    results.resize(2);
  return ctx.setResults(results);
}

LogicalResult rnnOp(NodeContext &ctx) { return recurrentOp(ctx, Cell::Rnn); }
LogicalResult gruOp(NodeContext &ctx) { return recurrentOp(ctx, Cell::Gru); }
LogicalResult lstmOp(NodeContext &ctx) { return recurrentOp(ctx, Cell::Lstm); }

} // namespace

void registerRecurrentOps(OpTable &table) {
  table.add("RNN", rnnOp);
  table.add("GRU", gruOp);
  table.add("LSTM", lstmOp);
}

} // namespace onnx_import
} // namespace kiln
