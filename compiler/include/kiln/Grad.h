//===- Grad.h - Gradients of traced C++ functions ---------------*- C++ -*-===//
//
// Function transforms in the style of JAX, on top of the autodiff pass:
//
//   auto loss = [](const kiln::Tensor &w, const kiln::Tensor &x) {...};
//   auto dloss = kiln::grad(loss, {0});              // (w, x) -> dw
//   auto hvp = kiln::jvp(dloss, {0});     // ({w, x}, {v}) -> (dw, H v)
//   auto step = kiln::jit("step", [&](const kiln::Tensors &a) {
//     kiln::Tensors vg = kiln::value_and_grad(loss, {0})({a[0], a[1]});
//     return kiln::Tensors{vg[0], a[0] - 0.1f * vg[1]};  // loss, new w
//   });
//
// A transformed function is an ordinary traceable callable: called while a
// function is being traced (inside kiln::trace, kiln::jit or another
// transform), it traces the wrapped function on fresh inputs of the same
// types (in the enclosing trace's MLIRContext), derives its gradient ahead
// of time (mlir::kiln::buildGradient) and inlines the derived computation
// into the enclosing trace (kiln/Tracer/Inline.h). So forward,
// backward and whatever uses the gradients compile into one function.
//
// The wrapped function may use tensors of the enclosing trace (captured by
// reference in a lambda): they become extra inputs of the traced function,
// passed in from the enclosing trace and not differentiated, as JAX treats
// closed-over values. Nested transforms capture through every level, so
// grad(x -> grad(y -> x * y)(1)) differentiates through x.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GRAD_H
#define KILN_GRAD_H

#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/SourceLoc.h"
#include "kiln/Tracer/Trace.h"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// What a transformed function returns.
enum class GradKind {
  /// `(x...) -> (dx_argnums...)`; the function returns one rank-0 float.
  Grad,
  /// `(x...) -> (loss, dx_argnums...)`; same requirement as Grad.
  ValueAndGrad,
  /// `(x..., dy...) -> (y..., dx_argnums...)`: one cotangent `dy` per float
  /// output of the function (integer and i1 outputs take none), each of its
  /// output's type; the result is the vector-Jacobian product dy^T J.
  /// Called as `f(primals, cotangents)`; kiln::vjp on a TracedFunction
  /// gives a traced function taking both as one argument list.
  Vjp,
  /// `(x..., tx_argnums...) -> (y..., ty...)`: one tangent `tx` per argnum,
  /// of its input's type, and one tangent `ty` per float output (integer
  /// and i1 outputs have none); ty is the Jacobian-vector product J tx,
  /// derived in forward mode (mlir::kiln::buildJvp). Called as
  /// `f(primals, tangents)`, like Vjp.
  Jvp,
};

/// A function together with the transform applied to it. Callable with
/// `const kiln::Tensors &` while a trace is active, so it can be passed to
/// kiln::trace / kiln::jit directly or called from another traced function.
class GradFunction {
public:
  GradFunction(GradKind kind, detail::RegionFn fn, std::vector<int> argnums,
               SourceLoc loc);

  /// Inlines the derived computation for `args` into the active trace
  /// (grad and value_and_grad).
  /// Throws TraceError if there is no active trace, if an argnum is out of
  /// range, repeated or names a non-float input, if (for grad and
  /// value_and_grad) the function does not return exactly one rank-0 float,
  /// or if differentiation fails (e.g. an op without a derivative).
  Tensors operator()(const Tensors &args) const;
  /// The same for vjp (fn's inputs, then one cotangent per float output)
  /// and jvp (fn's inputs, then one tangent per argnum).
  Tensors operator()(const Tensors &primals, const Tensors &second) const;

  GradKind kind() const { return gradKind; }
  const std::vector<int> &argnums() const { return wrt; }

private:
  GradKind gradKind;
  detail::RegionFn fn;
  std::vector<int> wrt;
  SourceLoc loc;
};

namespace detail {
template <typename F>
using NotTraced =
    std::enable_if_t<!std::is_same_v<std::decay_t<F>, TracedFunction>, int>;

/// The transform's name in messages: "kiln::grad", "kiln::value_and_grad",
/// "kiln::vjp" or "kiln::jvp".
const char *gradKindName(GradKind kind);

/// Applies `kind` to the traced function `primal` and inlines the result,
/// for `args` of the active trace (primal's inputs, then for Vjp the
/// cotangents and for Jvp the tangents), into the active trace.
Tensors applyGradKind(const TracedFunction &primal, GradKind kind,
                      const std::vector<int> &argnums, const Tensors &args,
                      SourceLoc loc);
} // namespace detail

/// The gradient of `fn` (which returns one rank-0 float: a loss) with
/// respect to the inputs `argnums`. `fn` is anything kiln::trace accepts.
template <typename F, detail::NotTraced<F> = 0>
GradFunction grad(F &&fn, std::vector<int> argnums = {0},
                  SourceLoc loc = SourceLoc::current()) {
  return GradFunction(GradKind::Grad,
                      detail::makeTracedFn(std::forward<F>(fn), loc),
                      std::move(argnums), loc);
}

/// Like grad, but the loss itself comes first: (loss, dx_argnums...).
template <typename F, detail::NotTraced<F> = 0>
GradFunction value_and_grad(F &&fn, std::vector<int> argnums = {0},
                            SourceLoc loc = SourceLoc::current()) {
  return GradFunction(GradKind::ValueAndGrad,
                      detail::makeTracedFn(std::forward<F>(fn), loc),
                      std::move(argnums), loc);
}

/// The vector-Jacobian product of `fn`: the returned function is called as
/// `(primals, cotangents)` with one cotangent per float output and returns
/// fn's outputs followed by the cotangents of the inputs `argnums`.
template <typename F, detail::NotTraced<F> = 0>
GradFunction vjp(F &&fn, std::vector<int> argnums = {0},
                 SourceLoc loc = SourceLoc::current()) {
  return GradFunction(GradKind::Vjp,
                      detail::makeTracedFn(std::forward<F>(fn), loc),
                      std::move(argnums), loc);
}

/// The Jacobian-vector product of `fn` (forward mode): the returned
/// function is called as `(primals, tangents)` with one tangent per argnum
/// and returns fn's outputs followed by the tangent of each float output.
/// Composed with grad it gives Hessian-vector products at the cost of
/// about two gradients: `jvp(grad(loss), {0})({w}, {v})`.
template <typename F, detail::NotTraced<F> = 0>
GradFunction jvp(F &&fn, std::vector<int> argnums = {0},
                 SourceLoc loc = SourceLoc::current()) {
  return GradFunction(GradKind::Jvp,
                      detail::makeTracedFn(std::forward<F>(fn), loc),
                      std::move(argnums), loc);
}

/// A function whose intermediate values an enclosing gradient recomputes
/// instead of storing (jax.checkpoint). Callable with `const kiln::Tensors
/// &` while a trace is active.
class CheckpointFunction {
public:
  CheckpointFunction(detail::RegionFn fn, SourceLoc loc);

  /// Records fn on `args` in the active trace, wrapped so that the backward
  /// pass of a gradient taken through it stores only `args` and recomputes
  /// the rest: a one-trip kiln.for whose body is another, marked
  /// kiln.recompute (the mechanism of buildGradient's checkpointEvery).
  /// Throws TraceError outside a trace.
  Tensors operator()(const Tensors &args) const;

private:
  detail::RegionFn fn;
  SourceLoc loc;
};

/// `fn` with its activations rematerialized in the backward pass: memory
/// of its inputs instead of its intermediate values, for one more forward
/// run of it.
template <typename F, detail::NotTraced<F> = 0>
CheckpointFunction checkpoint(F &&fn, SourceLoc loc = SourceLoc::current()) {
  return CheckpointFunction(detail::makeTracedFn(std::forward<F>(fn), loc),
                            loc);
}

/// The same transforms applied to an already traced function; the result
/// is a new traced function `<name>_grad`, `<name>_value_and_grad`,
/// `<name>_vjp` or `<name>_jvp` in f's context. Gradient outputs are named
/// `d<input>`; vjp cotangent inputs `d<output>`; jvp tangent inputs
/// `t<input>` and tangent outputs `t<output>`.
TracedFunction grad(const TracedFunction &f, std::vector<int> argnums = {0},
                    SourceLoc loc = SourceLoc::current());
TracedFunction value_and_grad(const TracedFunction &f,
                              std::vector<int> argnums = {0},
                              SourceLoc loc = SourceLoc::current());
TracedFunction vjp(const TracedFunction &f, std::vector<int> argnums = {0},
                   SourceLoc loc = SourceLoc::current());
TracedFunction jvp(const TracedFunction &f, std::vector<int> argnums = {0},
                   SourceLoc loc = SourceLoc::current());

} // namespace kiln

#endif // KILN_GRAD_H
