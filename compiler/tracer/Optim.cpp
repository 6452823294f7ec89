//===- Optim.cpp - SGD, Adam/AdamW and Adagrad as traced updates ----------===//
//
// The optimizers of kiln/Optim.h, written with the public tensor ops so that
// a step leaves ordinary elementwise kiln ops in the graph. Each formula
// follows PyTorch's single-tensor implementation operation by operation
// (torch/optim/sgd.py, adam.py and adagrad.py), so that results agree to
// the last bits where the arithmetic is the same:
//
//   - a hyper-parameter that PyTorch passes to a tensor op as a Python
//     float is a C++ double here, which the tracer rounds to the tensor's
//     dtype the way PyTorch converts the Python scalar;
//   - what PyTorch computes in Python floats from the step count (bias
//     corrections, the step size) is computed here in f64 rank-0 tensors
//     and cast to the parameter's dtype where it meets a parameter.
//
//===----------------------------------------------------------------------===//

#include "kiln/Optim.h"

#include "kiln/Tracer/Ops.h"

#include <cmath>
#include <sstream>

namespace kiln {
namespace optim {

namespace {
/// `value` as C++ streams print it: 0.9, 1e-08.
std::string number(double value) {
  std::ostringstream stream;
  stream << value;
  return stream.str();
}

/// `name` must be a finite number >= 0 (as PyTorch checks lr, momentum,
/// eps and weight_decay).
void checkNonNegative(double value, const char *name, const char *optimizer,
                      SourceLoc loc) {
  if (!(value >= 0) || std::isinf(value))
    detail::fail(loc, std::string(optimizer) + ": " + name +
                          " must be a finite number >= 0, got " +
                          number(value));
}

/// Negates `grad` for `maximize`.
Tensor signedGrad(const Tensor &grad, bool maximize, SourceLoc loc) {
  return maximize ? neg(grad, loc) : grad;
}
} // namespace

//===----------------------------------------------------------------------===//
// Optimizer: the state layout and the checks of a step
//===----------------------------------------------------------------------===//

Optimizer::~Optimizer() = default;

size_t Optimizer::stateSize(size_t numParams) const {
  return 1 + slotNames().size() * numParams;
}

std::vector<TensorSpec>
Optimizer::stateSpecs(const std::vector<TensorSpec> &params,
                      SourceLoc loc) const {
  checkHyperParameters(loc);
  std::vector<TensorSpec> specs = {{DType::I64, {}, "count"}};
  for (const std::string &slot : slotNames())
    for (size_t i = 0; i < params.size(); ++i) {
      if (!isFloat(params[i].dtype))
        detail::fail(loc, "kiln::optim: parameter " + std::to_string(i) +
                              " is " + dtypeName(params[i].dtype) +
                              "; optimizers update f32 and f64 parameters");
      specs.push_back(
          {params[i].dtype, params[i].shape, slot + std::to_string(i)});
    }
  return specs;
}

Tensors Optimizer::init(const Tensors &params, SourceLoc loc) const {
  std::vector<TensorSpec> paramSpecs;
  for (const Tensor &p : params)
    paramSpecs.push_back({p.dtype(), p.shape(), ""});
  Tensors state;
  for (const TensorSpec &spec : stateSpecs(paramSpecs, loc))
    state.push_back(zeros(spec.shape, spec.dtype, loc));
  return state;
}

Update Optimizer::step(const Tensors &params, const Tensors &grads,
                       const Tensors &state, const Tensor &lrTensor,
                       SourceLoc loc) const {
  checkHyperParameters(loc);
  const size_t n = params.size();
  const size_t numSlots = slotNames().size();
  if (grads.size() != n)
    detail::fail(loc, "kiln::optim: " + std::to_string(n) + " parameters but " +
                          std::to_string(grads.size()) + " gradients");
  if (state.size() != stateSize(n))
    detail::fail(loc, "kiln::optim: the state of " + std::to_string(n) +
                          " parameters has " + std::to_string(stateSize(n)) +
                          " tensors (the count and " +
                          std::to_string(numSlots) + " per parameter), got " +
                          std::to_string(state.size()));
  if (state[0].dtype() != DType::I64 || state[0].rank() != 0)
    detail::fail(loc, "kiln::optim: state[0], the step count, must be a "
                      "rank-0 i64 tensor");
  if (lrTensor.defined() &&
      (lrTensor.rank() != 0 || !isFloat(lrTensor.dtype())))
    detail::fail(loc, "kiln::optim: the learning rate must be a rank-0 f32 "
                      "or f64 tensor");
  for (size_t i = 0; i < n; ++i) {
    const Tensor &p = params[i];
    auto describe = [](const Tensor &t) {
      return std::string(dtypeName(t.dtype())) + shapeString(t.shape());
    };
    if (!isFloat(p.dtype()))
      detail::fail(loc, "kiln::optim: parameter " + std::to_string(i) + " is " +
                            describe(p) +
                            "; optimizers update f32 and f64 parameters");
    if (grads[i].dtype() != p.dtype() || grads[i].shape() != p.shape())
      detail::fail(loc, "kiln::optim: gradient " + std::to_string(i) + " is " +
                            describe(grads[i]) + ", its parameter " +
                            describe(p));
    for (size_t k = 0; k < numSlots; ++k) {
      const Tensor &slot = state[1 + k * n + i];
      if (slot.dtype() != p.dtype() || slot.shape() != p.shape())
        detail::fail(loc, "kiln::optim: state tensor " +
                              std::to_string(1 + k * n + i) + " (" +
                              slotNames()[k] + " of parameter " +
                              std::to_string(i) + ") is " + describe(slot) +
                              ", its parameter " + describe(p));
    }
  }

  StepScalars scalars;
  scalars.count = add(state[0], 1, loc);
  scalars.lr = lrTensor.defined() ? cast(lrTensor, DType::F64, loc)
                                  : constant(Scalar(lr), DType::F64, loc);
  Update update;
  update.state.assign(state.size(), Tensor());
  update.state[0] = scalars.count;
  for (size_t i = 0; i < n; ++i) {
    Tensors slots;
    for (size_t k = 0; k < numSlots; ++k)
      slots.push_back(state[1 + k * n + i]);
    update.params.push_back(
        updateParameter(params[i], grads[i], slots, scalars, loc));
    for (size_t k = 0; k < numSlots; ++k)
      update.state[1 + k * n + i] = slots[k];
  }
  return update;
}

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

std::vector<std::string> Sgd::slotNames() const {
  if (momentum == 0)
    return {};
  return {"momentum_buffer"};
}

void Sgd::checkHyperParameters(SourceLoc loc) const {
  checkNonNegative(lr, "lr", "kiln::optim::Sgd", loc);
  checkNonNegative(momentum, "momentum", "kiln::optim::Sgd", loc);
  checkNonNegative(weightDecay, "weightDecay", "kiln::optim::Sgd", loc);
  if (!std::isfinite(dampening))
    detail::fail(loc, "kiln::optim::Sgd: dampening must be finite");
  if (nesterov && (momentum <= 0 || dampening != 0))
    detail::fail(loc, "kiln::optim::Sgd: Nesterov momentum requires a "
                      "momentum > 0 and zero dampening");
}

Tensor Sgd::updateParameter(const Tensor &param, const Tensor &grad,
                            Tensors &slots, const StepScalars &step,
                            SourceLoc loc) const {
  Tensor g = signedGrad(grad, maximize, loc);
  if (weightDecay != 0)
    g = add(g, mul(weightDecay, param, loc), loc);
  if (momentum != 0) {
    Tensor &buffer = slots[0];
    Tensor next =
        add(mul(buffer, momentum, loc), mul(1 - dampening, g, loc), loc);
    // PyTorch starts the buffer as a copy of the first gradient. From a
    // zero buffer that is what the formula gives unless it dampens.
    if (dampening != 0)
      next = where(equal(step.count, 1, loc), g, next, loc);
    buffer = next;
    g = nesterov ? add(g, mul(momentum, buffer, loc), loc) : buffer;
  }
  Tensor negLr = cast(neg(step.lr, loc), param.dtype(), loc);
  return add(param, mul(negLr, g, loc), loc);
}

//===----------------------------------------------------------------------===//
// Adam and AdamW
//===----------------------------------------------------------------------===//

std::vector<std::string> Adam::slotNames() const {
  if (amsgrad)
    return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::checkHyperParameters(SourceLoc loc) const {
  const char *name = decoupled ? "kiln::optim::AdamW" : "kiln::optim::Adam";
  checkNonNegative(lr, "lr", name, loc);
  checkNonNegative(eps, "eps", name, loc);
  checkNonNegative(weightDecay, "weightDecay", name, loc);
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    detail::fail(loc, std::string(name) +
                          ": beta1 and beta2 must be in [0, 1), got " +
                          number(beta1) + " and " + number(beta2));
}

Tensor Adam::updateParameter(const Tensor &param, const Tensor &grad,
                             Tensors &slots, const StepScalars &step,
                             SourceLoc loc) const {
  const DType dtype = param.dtype();
  Tensor p = param;
  Tensor g = signedGrad(grad, maximize, loc);
  if (weightDecay != 0) {
    if (decoupled)
      p = mul(p, cast(sub(1, mul(step.lr, weightDecay, loc), loc), dtype, loc),
              loc);
    else
      g = add(g, mul(weightDecay, p, loc), loc);
  }

  // exp_avg.lerp_(g, 1 - beta1): PyTorch's lerp picks its formula by the
  // weight, for accuracy near either end.
  Tensor &expAvg = slots[0];
  const double weight = 1 - beta1;
  Tensor diff = sub(g, expAvg, loc);
  expAvg = weight < 0.5 ? add(expAvg, mul(weight, diff, loc), loc)
                        : sub(g, mul(diff, 1 - weight, loc), loc);

  // exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2).
  Tensor &expAvgSq = slots[1];
  expAvgSq =
      add(mul(expAvgSq, beta2, loc), mul(mul(1 - beta2, g, loc), g, loc), loc);
  Tensor second = expAvgSq;
  if (amsgrad) {
    slots[2] = maximum(slots[2], expAvgSq, loc);
    second = slots[2];
  }

  // The bias corrections of step t, in f64 as PyTorch's Python floats.
  Tensor t = cast(step.count, DType::F64, loc);
  Tensor correction1 = sub(1, pow(beta1, t, loc), loc);
  Tensor correction2 = sub(1, pow(beta2, t, loc), loc);
  Tensor negStepSize =
      cast(neg(div(step.lr, correction1, loc), loc), dtype, loc);
  Tensor correction2Sqrt = cast(sqrt(correction2, loc), dtype, loc);

  // p.addcdiv_(exp_avg, denom, value=-step_size), with
  // denom = sqrt(v) / sqrt(correction2) + eps.
  Tensor denom = add(div(sqrt(second, loc), correction2Sqrt, loc), eps, loc);
  return add(p, div(mul(negStepSize, expAvg, loc), denom, loc), loc);
}

//===----------------------------------------------------------------------===//
// Adagrad
//===----------------------------------------------------------------------===//

std::vector<std::string> Adagrad::slotNames() const { return {"sum"}; }

void Adagrad::checkHyperParameters(SourceLoc loc) const {
  const char *name = "kiln::optim::Adagrad";
  checkNonNegative(lr, "lr", name, loc);
  checkNonNegative(lrDecay, "lrDecay", name, loc);
  checkNonNegative(weightDecay, "weightDecay", name, loc);
  checkNonNegative(initialAccumulatorValue, "initialAccumulatorValue", name,
                   loc);
  checkNonNegative(eps, "eps", name, loc);
}

Tensor Adagrad::updateParameter(const Tensor &param, const Tensor &grad,
                                Tensors &slots, const StepScalars &step,
                                SourceLoc loc) const {
  const DType dtype = param.dtype();
  Tensor g = signedGrad(grad, maximize, loc);
  if (weightDecay != 0)
    g = add(g, mul(weightDecay, param, loc), loc);
  // clr = lr / (1 + (t - 1) * lr_decay), a Python float in PyTorch.
  Tensor t = cast(step.count, DType::F64, loc);
  Tensor clr = div(step.lr, add(1, mul(sub(t, 1, loc), lrDecay, loc), loc),
                   loc);
  // state_sum.addcmul_(g, g, value=1), from state_sum = full_like(p,
  // initial_accumulator_value) on the first step.
  Tensor &sum = slots[0];
  Tensor previous = sum;
  if (initialAccumulatorValue != 0)
    previous = where(equal(step.count, 1, loc),
                     full(param.shape(), Scalar(initialAccumulatorValue),
                          dtype, loc),
                     sum, loc);
  sum = add(previous, mul(g, g, loc), loc);
  // p.addcdiv_(g, sqrt(state_sum) + eps, value=-clr).
  Tensor std = add(sqrt(sum, loc), eps, loc);
  Tensor negClr = cast(neg(clr, loc), dtype, loc);
  return add(param, div(mul(negClr, g, loc), std, loc), loc);
}

} // namespace optim
} // namespace kiln
