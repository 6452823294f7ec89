//===- LossScaler.cpp - Dynamic loss scaling as a traced step -------------===//
//
// kiln::optim::LossScaler (kiln/Optim.h): torch.amp.GradScaler's unscale,
// inf/NaN check, skip and scale update, traced into the training step so
// that the decision to skip an update is a kiln.cond in the program and
// the scale is program state, not a host-side loop.
//
//===----------------------------------------------------------------------===//

#include "kiln/Optim.h"

#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/Ops.h"
#include "kiln/Tracer/TraceError.h"

namespace kiln {
namespace optim {

void LossScaler::checkHyperParameters(SourceLoc loc) const {
  if (!(initScale > 0) || !(growthFactor > 1) || !(backoffFactor > 0) ||
      !(backoffFactor < 1) || growthInterval < 1)
    detail::fail(loc, "kiln::optim::LossScaler: needs initScale > 0, "
                      "growthFactor > 1, 0 < backoffFactor < 1 and "
                      "growthInterval >= 1");
}

void LossScaler::check(const Tensors &scalerState, SourceLoc loc) const {
  checkHyperParameters(loc);
  if (scalerState.size() != 2 || scalerState[0].dtype() != DType::F32 ||
      scalerState[0].rank() != 0 || scalerState[1].dtype() != DType::I64 ||
      scalerState[1].rank() != 0)
    detail::fail(loc, "kiln::optim::LossScaler: the scaler state is {scale: "
                      "f32 rank-0, growth_tracker: i64 rank-0}");
}

std::vector<TensorSpec> LossScaler::stateSpecs(SourceLoc loc) const {
  checkHyperParameters(loc);
  return {{DType::F32, {}, "scale"}, {DType::I64, {}, "growth_tracker"}};
}

Tensors LossScaler::init(SourceLoc loc) const {
  checkHyperParameters(loc);
  return {constant(Scalar(initScale), DType::F32, loc),
          constant(Scalar(int64_t(0)), DType::I64, loc)};
}

Tensor LossScaler::scale(const Tensor &loss, const Tensors &scalerState,
                         SourceLoc loc) const {
  check(scalerState, loc);
  if (!isFloat(loss.dtype()))
    detail::fail(loc, "kiln::optim::LossScaler: the loss must be a "
                      "floating-point tensor");
  return mul(loss, cast(scalerState[0], loss.dtype(), loc), loc);
}

ScaledUpdate LossScaler::step(const Optimizer &optimizer, const Tensors &params,
                              const Tensors &grads, const Tensors &state,
                              const Tensors &scalerState, const Tensor &lr,
                              SourceLoc loc) const {
  check(scalerState, loc);
  const Tensor &scale = scalerState[0], &tracker = scalerState[1];
  // The reciprocal in f32, as GradScaler's inv_scale, then each gradient
  // times it in its own dtype.
  Tensor inverse = div(1.0f, scale, loc);
  Tensors unscaled;
  Tensor nonFinite = constant(Scalar(0.0f), DType::F32, loc);
  for (const Tensor &g : grads) {
    if (!isFloat(g.dtype()))
      detail::fail(loc, "kiln::optim::LossScaler: gradients are floating "
                        "point");
    Tensor u = mul(g, cast(inverse, g.dtype(), loc), loc);
    unscaled.push_back(u);
    // 0 for finite elements, NaN for inf and NaN, so the sum is NaN when
    // any element is not finite.
    nonFinite = add(nonFinite, cast(sum(mul(u, 0.0, loc), Axes::all(),
                                        /*keepdims=*/false, loc),
                                    DType::F32, loc),
                    loc);
  }
  Tensor finite = equal(nonFinite, 0.0f, loc);
  const size_t numParams = params.size();
  Tensors results = cond(
      finite,
      [&](const Tensors &) {
        Update update = optimizer.step(params, unscaled, state, lr, loc);
        Tensor clean = add(tracker, int64_t(1), loc);
        Tensor grow = equal(clean, growthInterval, loc);
        Tensors out = update.params;
        out.insert(out.end(), update.state.begin(), update.state.end());
        out.push_back(
            where(grow, mul(scale, float(growthFactor), loc), scale, loc));
        out.push_back(where(grow, int64_t(0), clean, loc));
        return out;
      },
      [&](const Tensors &) {
        Tensors out = params;
        out.insert(out.end(), state.begin(), state.end());
        out.push_back(mul(scale, float(backoffFactor), loc));
        out.push_back(constant(Scalar(int64_t(0)), DType::I64, loc));
        return out;
      },
      {}, loc);
  ScaledUpdate result;
  result.params.assign(results.begin(), results.begin() + numParams);
  result.state.assign(results.begin() + numParams,
                      results.begin() + numParams + state.size());
  result.scalerState = {results[results.size() - 2], results.back()};
  result.skipped = logical_not(finite, loc);
  return result;
}

} // namespace optim
} // namespace kiln
