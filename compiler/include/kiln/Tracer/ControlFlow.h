//===- ControlFlow.h - Traced control flow on tensor values -----*- C++ -*-===//
//
// C++ `if`/`while`/`for` on C++ values simply run at trace time (a loop over
// layers is unrolled into the graph). Control flow that depends on *tensor*
// values must be recorded instead, with these primitives. Each traces its
// C++ callables into the regions of a kiln.cond / kiln.while / kiln.for op.
//
// Closure conversion: a callable may use any Tensor of the enclosing trace,
// also ones captured by reference from scopes several regions up. Since kiln
// regions are isolated from above, every such use becomes an explicit region
// operand, threaded through each intermediate region op as needed (for loops
// as extra loop-carried values that pass through unchanged). Only the values
// the user returns come back.
//
// Callables take `const kiln::Tensors &` (or, where noted, Tensor arguments)
// and return a Tensor, kiln::Tensors or a std::tuple/std::pair of Tensors.
// Lambdas that return a braced list need `-> kiln::Tensors`. Generic lambdas
// (`auto` parameters) are not supported, because choosing how to call them
// would instantiate their bodies with the wrong argument types.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_CONTROLFLOW_H
#define KILN_TRACER_CONTROLFLOW_H

#include "kiln/Tracer/Tensor.h"

#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kiln {

/// What kiln::scan returns: the final carry and, for every per-step output,
/// the values of all steps stacked along a new leading axis.
struct ScanResult {
  Tensors carry;
  Tensors ys;
};

namespace detail {

using RegionFn = std::function<Tensors(const Tensors &)>;
using PredicateFn = std::function<Tensor(const Tensors &)>;
using LoopBodyFn = std::function<Tensors(const Tensor &, const Tensors &)>;
using ScanFn =
    std::function<std::pair<Tensors, Tensors>(const Tensors &, const Tensors &)>;

Tensors condImpl(const Tensor &pred, const RegionFn &thenFn,
                 const RegionFn &elseFn, const Tensors &operands,
                 SourceLoc loc);
Tensors whileImpl(const PredicateFn &condFn, const RegionFn &bodyFn,
                  const Tensors &init, SourceLoc loc);
Tensors foriImpl(int64_t lo, int64_t hi, const LoopBodyFn &bodyFn,
                 const Tensors &init, SourceLoc loc);
ScanResult scanImpl(const ScanFn &fn, const Tensors &init, const Tensors &xs,
                    int64_t length, SourceLoc loc);

/// Thrown (as TraceError) when a callable taking one Tensor is used with a
/// number of values other than one.
[[noreturn]] void throwArityError(const char *what, size_t expected,
                                  size_t got, SourceLoc loc);

template <typename T> struct IsTuple : std::false_type {};
template <typename... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};
template <typename A, typename B>
struct IsTuple<std::pair<A, B>> : std::true_type {};

/// Normalizes what a user callable returned to a list of tensors.
template <typename R> Tensors toTensors(R &&result) {
  using T = std::decay_t<R>;
  if constexpr (std::is_same_v<T, Tensors>) {
    return std::forward<R>(result);
  } else if constexpr (std::is_same_v<T, Tensor>) {
    return Tensors{std::forward<R>(result)};
  } else if constexpr (IsTuple<T>::value) {
    return std::apply(
        [](auto &&...parts) {
          return Tensors{Tensor(std::forward<decltype(parts)>(parts))...};
        },
        std::forward<R>(result));
  } else {
    static_assert(std::is_same_v<T, Tensors>,
                  "a traced callable must return kiln::Tensor, kiln::Tensors "
                  "or a std::tuple/std::pair of kiln::Tensor");
    return {};
  }
}

/// Wraps a callable taking `const Tensors &`, one `const Tensor &`, or
/// nothing, into a RegionFn.
template <typename F> RegionFn makeRegionFn(F &&fn, const char *what,
                                            SourceLoc loc) {
  using Fn = std::decay_t<F>;
  Fn f(std::forward<F>(fn));
  if constexpr (std::is_invocable_v<Fn &, const Tensors &>) {
    return [f](const Tensors &args) mutable { return toTensors(f(args)); };
  } else if constexpr (std::is_invocable_v<Fn &, const Tensor &>) {
    return [f, what, loc](const Tensors &args) mutable {
      if (args.size() != 1)
        throwArityError(what, 1, args.size(), loc);
      return toTensors(f(args[0]));
    };
  } else {
    static_assert(std::is_invocable_v<Fn &>,
                  "a region callable must take (const kiln::Tensors &), "
                  "(const kiln::Tensor &) or nothing");
    return [f, what, loc](const Tensors &args) mutable {
      if (!args.empty())
        throwArityError(what, 0, args.size(), loc);
      return toTensors(f());
    };
  }
}

/// Like makeRegionFn for callables returning one predicate tensor.
template <typename F> PredicateFn makePredicateFn(F &&fn, const char *what,
                                                  SourceLoc loc) {
  using Fn = std::decay_t<F>;
  Fn f(std::forward<F>(fn));
  if constexpr (std::is_invocable_v<Fn &, const Tensors &>) {
    return [f](const Tensors &args) mutable { return Tensor(f(args)); };
  } else {
    static_assert(std::is_invocable_v<Fn &, const Tensor &>,
                  "a loop condition must take (const kiln::Tensors &) or "
                  "(const kiln::Tensor &) and return a kiln::Tensor");
    return [f, what, loc](const Tensors &args) mutable {
      if (args.size() != 1)
        throwArityError(what, 1, args.size(), loc);
      return Tensor(f(args[0]));
    };
  }
}

/// Wraps a loop body taking (index, carried) into a LoopBodyFn; the carried
/// values may be `const Tensors &` or, for one value, `const Tensor &`.
template <typename F> LoopBodyFn makeLoopBodyFn(F &&fn, SourceLoc loc) {
  using Fn = std::decay_t<F>;
  Fn f(std::forward<F>(fn));
  if constexpr (std::is_invocable_v<Fn &, const Tensor &, const Tensors &>) {
    return [f](const Tensor &i, const Tensors &carry) mutable {
      return toTensors(f(i, carry));
    };
  } else {
    static_assert(std::is_invocable_v<Fn &, const Tensor &, const Tensor &>,
                  "a fori_loop body must take (const kiln::Tensor &index, "
                  "const kiln::Tensors &carry) or (const kiln::Tensor &, "
                  "const kiln::Tensor &)");
    return [f, loc](const Tensor &i, const Tensors &carry) mutable {
      if (carry.size() != 1)
        throwArityError("the fori_loop body", 1, carry.size(), loc);
      return toTensors(f(i, carry[0]));
    };
  }
}

/// Wraps a scan step (carry, x) -> pair(new carry, y) into a ScanFn.
template <typename F> ScanFn makeScanFn(F &&fn) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn &, const Tensors &, const Tensors &>,
                "a scan step must take (const kiln::Tensors &carry, "
                "const kiln::Tensors &x) and return a std::pair of "
                "(new carry, y) lists");
  Fn f(std::forward<F>(fn));
  return [f](const Tensors &carry, const Tensors &x) mutable {
    auto result = f(carry, x);
    return std::pair<Tensors, Tensors>(toTensors(std::get<0>(result)),
                                       toTensors(std::get<1>(result)));
  };
}

} // namespace detail

/// Runs `thenFn(operands)` if the rank-0 i1 `pred` is true, else
/// `elseFn(operands)`, as one kiln.cond. Both branches must return the same
/// number of tensors with identical shapes and dtypes. Branches may also use
/// tensors from enclosing scopes directly (closure conversion).
template <typename Then, typename Else>
Tensors cond(const Tensor &pred, Then &&thenFn, Else &&elseFn,
             const Tensors &operands = {},
             SourceLoc loc = SourceLoc::current()) {
  return detail::condImpl(
      pred,
      detail::makeRegionFn(std::forward<Then>(thenFn), "the then branch", loc),
      detail::makeRegionFn(std::forward<Else>(elseFn), "the else branch", loc),
      operands, loc);
}

/// `while (condFn(v)) v = bodyFn(v);` starting from `init`, as one
/// kiln.while with a data-dependent trip count. condFn returns a rank-0 i1;
/// bodyFn returns values of the same types as `init` (at least one).
/// Returns the final values.
template <typename Cond, typename Body>
Tensors while_loop(Cond &&condFn, Body &&bodyFn, const Tensors &init,
                   SourceLoc loc = SourceLoc::current()) {
  return detail::whileImpl(
      detail::makePredicateFn(std::forward<Cond>(condFn),
                              "the while_loop condition", loc),
      detail::makeRegionFn(std::forward<Body>(bodyFn), "the while_loop body",
                           loc),
      init, loc);
}

/// `for (i = lo; i < hi; ++i) v = bodyFn(i, v);` as one kiln.for with the
/// static trip count max(hi - lo, 0). `i` is a rank-0 i64 tensor.
template <typename Body>
Tensors fori_loop(int64_t lo, int64_t hi, Body &&bodyFn, const Tensors &init,
                  SourceLoc loc = SourceLoc::current()) {
  return detail::foriImpl(
      lo, hi, detail::makeLoopBodyFn(std::forward<Body>(bodyFn), loc), init,
      loc);
}

/// JAX-style scan over axis 0 of `xs`: for t in 0..N-1,
/// `(carry, y_t) = fn(carry, [x[t] for x in xs])`. Returns the final carry
/// and the y_t stacked into tensors of shape [N, ...]. All xs need the same
/// leading dimension N; with no xs, `length` gives N. Implemented as one
/// kiln.for; see docs/tracer.md for the cost of stacking the outputs.
template <typename F>
ScanResult scan(F &&fn, const Tensors &init, const Tensors &xs,
                int64_t length = -1, SourceLoc loc = SourceLoc::current()) {
  return detail::scanImpl(detail::makeScanFn(std::forward<F>(fn)), init, xs,
                          length, loc);
}

} // namespace kiln

#endif // KILN_TRACER_CONTROLFLOW_H
