//===- Optim.h - Optimizers traced into the program -------------*- C++ -*-===//
//
// SGD (with momentum, dampening, Nesterov and weight decay) and Adam/AdamW
// (bias correction, optional AMSGrad) as traced functions, and dynamic loss
// scaling for f16 training (LossScaler, torch.amp.GradScaler's rules)
//
//   (params, grads, state, lr?) -> (new params, new state)
//
// so that a training step compiled by kiln::jit holds its optimizer too, and
// the optimizer's state (momentum buffers, moment estimates, the step count)
// goes in and out of the compiled function as ordinary tensors:
//
//   kiln::optim::Adam adam(1e-3);
//   std::vector<kiln::Array> initial;              // zeros, one per spec
//   for (const kiln::TensorSpec &spec : adam.stateSpecs({kiln::f32({4, 2})}))
//     initial.emplace_back(spec.dtype, spec.shape);
//   auto step = kiln::jit("step", [&](const kiln::Tensors &a) {
//     kiln::Tensors vg = kiln::value_and_grad(loss, {0})(a);  // a: w, x, y,
//     kiln::Tensors state(a.begin() + 3, a.end());            // state...
//     kiln::optim::Update u = adam.step({a[0]}, {vg[1]}, state);
//     ...                                 // return loss, u.params, u.state
//   });
//
// The results follow PyTorch's torch.optim.SGD, Adam, AdamW and Adagrad
// (their single-tensor code path) formula by formula, in the same order of
// operations, with the per-step scalars (bias corrections, step size)
// computed in f64 and rounded to the parameter's dtype where they meet it,
// as PyTorch does with Python floats.
//
// State layout. With n parameters and the optimizer's slotNames() s_0 ..
// s_{m-1}, a state is a flat list of 1 + m*n tensors:
//
//   state[0]             the step count: i64, rank 0, the number of updates
//                        applied so far (0 in a fresh state);
//   state[1 + k*n + i]   slot s_k of parameter i: same shape and dtype as
//                        parameter i.
//
// Every tensor of a fresh state is zero (stateSpecs() and init()), and the
// step count being a tensor means that a compiled step is compiled once,
// not once per step.
//
// Elementwise contract. An update is elementwise in (param, grad, slots):
// element j of a new parameter and of its new slots depends only on element
// j of that parameter, its gradient and its slots, plus rank-0 values shared
// by the whole step (the step count, the learning rate and what is computed
// from them). No reduction and no data movement across elements happens.
// The data-parallel and ZeRO rewrites rely on this to shard parameters,
// gradients and slots alike and run the update on each shard, with the
// step count and the learning rate replicated. Keep it so (the unit test
// Optim.UpdatesAreElementwise allows elementwise ops only).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPTIM_H
#define KILN_OPTIM_H

#include "kiln/Tracer/DType.h"
#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Tensor.h"

#include <string>
#include <vector>

namespace kiln {
namespace optim {

/// The result of one optimizer step: the parameters after the update and
/// the state to pass to the next step (same layout as the state given).
struct Update {
  Tensors params;
  Tensors state;
};

/// What Sgd and Adam share: the state layout, its initialization and the
/// checks of a step's arguments. A step calls updateParameter() once per
/// parameter, which is where the elementwise contract above is kept.
class Optimizer {
public:
  explicit Optimizer(double lr) : lr(lr) {}
  virtual ~Optimizer();

  /// The learning rate of a step that is not given one.
  double lr;

  /// The names of the per-parameter state tensors, in layout order (e.g.
  /// "momentum_buffer"; "exp_avg", "exp_avg_sq"), as PyTorch names them.
  virtual std::vector<std::string> slotNames() const = 0;

  /// Number of state tensors for `numParams` parameters.
  size_t stateSize(size_t numParams) const;

  /// The shapes and dtypes of the state for parameters of `params`
  /// (floating point), named "count" and "<slot><i>". The initial state is
  /// all zeros: a host program makes one zero-filled array per spec.
  std::vector<TensorSpec>
  stateSpecs(const std::vector<TensorSpec> &params,
             SourceLoc loc = SourceLoc::current()) const;

  /// The initial (all-zero) state for `params`, as traced constants.
  Tensors init(const Tensors &params,
               SourceLoc loc = SourceLoc::current()) const;

  /// One update of `params` by `grads` (one gradient per parameter, same
  /// shape and dtype). `lr`, when given, is a rank-0 floating-point tensor
  /// that replaces the constant learning rate for this step (a schedule
  /// computed in or passed into the program); otherwise the optimizer's
  /// `lr` is used. Throws TraceError for mismatched arguments or invalid
  /// hyper-parameters.
  Update step(const Tensors &params, const Tensors &grads, const Tensors &state,
              const Tensor &lr = Tensor(),
              SourceLoc loc = SourceLoc::current()) const;

protected:
  /// The rank-0 values one step shares among its parameters.
  struct StepScalars {
    /// The number of this update, i64: 1 for the first one.
    Tensor count;
    /// The learning rate as an f64 tensor.
    Tensor lr;
  };

  /// Throws TraceError at `loc` if a hyper-parameter is out of range (the
  /// ranges PyTorch accepts).
  virtual void checkHyperParameters(SourceLoc loc) const = 0;

  /// The new value of one parameter; `slots` (one per slotNames() entry)
  /// are replaced by their new values. Elementwise in param, grad and
  /// slots; `step` holds the only other inputs.
  virtual Tensor updateParameter(const Tensor &param, const Tensor &grad,
                                 Tensors &slots, const StepScalars &step,
                                 SourceLoc loc) const = 0;
};

/// torch.optim.SGD: with g = grad (negated if `maximize`),
///
///   g = g + weightDecay * p                            (if weightDecay != 0)
///   b = g on the first step, else momentum * b + (1 - dampening) * g
///   g = g + momentum * b if nesterov, else b           (if momentum != 0)
///   p = p - lr * g
///
/// The momentum buffer starts at zero, so with dampening == 0 the first
/// step's b = momentum * 0 + g is g exactly; with dampening != 0 the first
/// step is told apart by the step count. Without momentum there are no
/// slots (the state is the step count alone).
class Sgd : public Optimizer {
public:
  explicit Sgd(double lr, double momentum = 0, double dampening = 0,
               double weightDecay = 0, bool nesterov = false,
               bool maximize = false)
      : Optimizer(lr), momentum(momentum), dampening(dampening),
        weightDecay(weightDecay), nesterov(nesterov), maximize(maximize) {}

  double momentum;
  double dampening;
  double weightDecay;
  bool nesterov;
  bool maximize;

  std::vector<std::string> slotNames() const override;

protected:
  void checkHyperParameters(SourceLoc loc) const override;
  Tensor updateParameter(const Tensor &param, const Tensor &grad,
                         Tensors &slots, const StepScalars &step,
                         SourceLoc loc) const override;
};

/// torch.optim.Adam, and torch.optim.AdamW with `decoupled`: with
/// g = grad (negated if `maximize`) and t the step count after increment,
///
///   p = p * (1 - lr * weightDecay)        (if decoupled and weightDecay != 0)
///   g = g + weightDecay * p               (if !decoupled and weightDecay != 0)
///   m = lerp(m, g, 1 - beta1)             (PyTorch's lerp, see Optim.cpp)
///   v = beta2 * v + (1 - beta2) * g * g
///   vmax = max(vmax, v), used for v below (if amsgrad)
///   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
///
/// Slots: "exp_avg" (m), "exp_avg_sq" (v) and, with amsgrad,
/// "max_exp_avg_sq" (vmax).
class Adam : public Optimizer {
public:
  explicit Adam(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                double eps = 1e-8, double weightDecay = 0, bool amsgrad = false,
                bool decoupled = false, bool maximize = false)
      : Optimizer(lr), beta1(beta1), beta2(beta2), eps(eps),
        weightDecay(weightDecay), amsgrad(amsgrad), decoupled(decoupled),
        maximize(maximize) {}

  /// AdamW: decoupled weight decay, PyTorch's defaults (weight decay 0.01).
  static Adam adamW(double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                    double eps = 1e-8, double weightDecay = 1e-2,
                    bool amsgrad = false, bool maximize = false) {
    return Adam(lr, beta1, beta2, eps, weightDecay, amsgrad,
                /*decoupled=*/true, maximize);
  }

  double beta1;
  double beta2;
  double eps;
  double weightDecay;
  bool amsgrad;
  /// AdamW's weight decay: shrink the parameter instead of adding
  /// weightDecay * p to the gradient.
  bool decoupled;
  bool maximize;

  std::vector<std::string> slotNames() const override;

protected:
  void checkHyperParameters(SourceLoc loc) const override;
  Tensor updateParameter(const Tensor &param, const Tensor &grad,
                         Tensors &slots, const StepScalars &step,
                         SourceLoc loc) const override;
};

/// torch.optim.Adagrad: with g = grad (negated if `maximize`) and t the
/// step count after increment,
///
///   g = g + weightDecay * p                            (if weightDecay != 0)
///   s = initialAccumulatorValue + g * g on the first step, else s + g * g
///   p = p - lr / (1 + (t - 1) * lrDecay) * g / (sqrt(s) + eps)
///
/// Slot "sum" (s) is PyTorch's state_sum. PyTorch fills it with
/// initialAccumulatorValue when the optimizer is made; here a fresh state
/// is all zeros, as for every optimizer, and the first step adds the
/// initial value, so that the sums agree from then on.
class Adagrad : public Optimizer {
public:
  explicit Adagrad(double lr = 1e-2, double lrDecay = 0,
                   double weightDecay = 0, double initialAccumulatorValue = 0,
                   double eps = 1e-10, bool maximize = false)
      : Optimizer(lr), lrDecay(lrDecay), weightDecay(weightDecay),
        initialAccumulatorValue(initialAccumulatorValue), eps(eps),
        maximize(maximize) {}

  double lrDecay;
  double weightDecay;
  double initialAccumulatorValue;
  double eps;
  bool maximize;

  std::vector<std::string> slotNames() const override;

protected:
  void checkHyperParameters(SourceLoc loc) const override;
  Tensor updateParameter(const Tensor &param, const Tensor &grad,
                         Tensors &slots, const StepScalars &step,
                         SourceLoc loc) const override;
};

/// What LossScaler::step returns: the optimizer's Update (the parameters
/// and optimizer state, unchanged when the step was skipped), the scaler's
/// next state, and whether the step was skipped (rank-0 i1).
struct ScaledUpdate {
  Tensors params;
  Tensors state;
  Tensors scalerState;
  Tensor skipped;
};

/// Dynamic loss scaling for f16 training, as torch.amp.GradScaler does it,
/// compiled into the step. f16 has 5 exponent bits: gradients of a loss of
/// order 1 underflow to zero in f16 products (kiln-autocast's backward
/// products round their cotangents to f16). Scaling the loss by S scales
/// every gradient by S and keeps them in range; the step then
///
///   g = grads * (1 / S)                    (in f32, the gradients' dtype)
///   if every element of every g is finite:  (one kiln.cond)
///     params, state = optimizer.step(params, g, state)
///     tracker += 1; if tracker == growthInterval: S *= growthFactor,
///                                                  tracker = 0
///   else:                                   (the update is skipped)
///     S *= backoffFactor; tracker = 0
///
/// The scaler's state is {scale: f32 rank-0, growth_tracker: i64 rank-0},
/// starting at {initScale, 0} (init(), or host arrays of those values).
/// Finiteness is tested as sum(g * 0) == 0, which inf and NaN turn into
/// NaN. The check reduces over whole gradients, so the scaler goes with
/// whole-gradient training steps (one process, or data parallelism after
/// the all-reduce), not with ZeRO's gradient shards.
class LossScaler {
public:
  explicit LossScaler(double initScale = 65536.0, double growthFactor = 2.0,
                      double backoffFactor = 0.5, int64_t growthInterval = 2000)
      : initScale(initScale), growthFactor(growthFactor),
        backoffFactor(backoffFactor), growthInterval(growthInterval) {}

  double initScale;
  double growthFactor;
  double backoffFactor;
  int64_t growthInterval;

  /// {f32 [] "scale", i64 [] "growth_tracker"}.
  std::vector<TensorSpec> stateSpecs(SourceLoc loc = SourceLoc::current()) const;

  /// The initial state, {initScale, 0}, as traced constants.
  Tensors init(SourceLoc loc = SourceLoc::current()) const;

  /// `loss` (a floating-point tensor) times the current scale.
  Tensor scale(const Tensor &loss, const Tensors &scalerState,
               SourceLoc loc = SourceLoc::current()) const;

  /// One step with `grads`, the gradients of the scaled loss (see above).
  /// Throws TraceError for a malformed scaler state or bad hyper-parameters;
  /// the optimizer checks its own arguments.
  ScaledUpdate step(const Optimizer &optimizer, const Tensors &params,
                    const Tensors &grads, const Tensors &state,
                    const Tensors &scalerState, const Tensor &lr = Tensor(),
                    SourceLoc loc = SourceLoc::current()) const;

private:
  void checkHyperParameters(SourceLoc loc) const;
  void check(const Tensors &scalerState, SourceLoc loc) const;
};

} // namespace optim
} // namespace kiln

#endif // KILN_OPTIM_H
