//===- Compositions.cpp - softmax, log_softmax, layer_norm, erf_inv -------===//
//
// Layers expressed with the public ops, so they get broadcasting, promotion
// and error checking for free and leave ordinary kiln ops in the graph for
// the compiler to fuse. Arguments are checked up front so that a mistake
// reports the layer, not one of the ops inside it.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include <limits>

namespace kiln {

/// M. Giles, "Approximating the erfinv function", GPU Computing Gems Jade
/// Edition (2011): erfinv(x) = x p(w) with w = -log(1 - x^2), p of degree 8
/// in w - 2.5 below w = 5 and in sqrt(w) - 3 above, for a relative error
/// under 4e-7 in single precision.
static constexpr float kErfInvCentral[9] = {
    2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
    -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
    -0.00417768164f,  0.246640727f,    1.50140941f};
static constexpr float kErfInvTail[9] = {
    -0.000200214257f, 0.000100950558f, 0.00134934322f,
    -0.00367342844f,  0.00573950773f,  -0.0076224613f,
    0.00943887047f,   1.00167406f,     2.83297682f};

Tensor erf_inv(const Tensor &x, SourceLoc loc) {
  detail::TraceState::of(x, loc);
  DType dtype = detail::floatDType(x.dtype());
  // Half precision computes in f32 and rounds once, as XLA does.
  if (dtype == DType::F16 || dtype == DType::BF16)
    return cast(erf_inv(cast(x, DType::F32, loc), loc), dtype, loc);
  Tensor v = cast(x, dtype, loc);
  // (1 - x)(1 + x) rather than 1 - x^2: no cancellation near +-1.
  Tensor w = neg(log(mul(sub(1.0, v, loc), add(1.0, v, loc), loc), loc), loc);
  Tensor central = less(w, 5.0, loc);
  Tensor t = where(central, sub(w, 2.5, loc), sub(sqrt(w, loc), 3.0, loc),
                   loc);
  auto coefficient = [&](int i) {
    return where(central, constant(Scalar(kErfInvCentral[i]), dtype, loc),
                 constant(Scalar(kErfInvTail[i]), dtype, loc), loc);
  };
  Tensor p = coefficient(0);
  for (int i = 1; i < 9; ++i)
    p = add(coefficient(i), mul(p, t, loc), loc);
  Tensor y = mul(p, v, loc);
  if (dtype == DType::F64) {
    // Newton on erf(y) = x: y -= (erf(y) - x) sqrt(pi)/2 exp(y^2). The
    // float estimate has 7 correct digits, two steps give all of double's.
    for (int step = 0; step < 2; ++step)
      y = sub(y,
              mul(mul(sub(erf(y, loc), v, loc), 0.88622692545275801365, loc),
                  exp(mul(y, y, loc), loc), loc),
              loc);
  }
  // At +-1 the polynomial is indeterminate; erf_inv is +-inf there.
  return where(equal(abs(v, loc), 1.0, loc),
               mul(v, std::numeric_limits<double>::infinity(), loc), y, loc);
}

Tensor softmax(const Tensor &x, int64_t axis, SourceLoc loc) {
  detail::TraceState::of(x, loc);
  detail::normalizeAxis(axis, x.rank(), "kiln::softmax", loc);
  Tensor v = cast(x, detail::floatDType(x.dtype()), loc);
  // Subtracting the maximum keeps exp from overflowing; it cancels out.
  Tensor shifted = sub(v, max(v, axis, /*keepdims=*/true, loc), loc);
  Tensor e = exp(shifted, loc);
  return div(e, sum(e, axis, /*keepdims=*/true, loc), loc);
}

Tensor log_softmax(const Tensor &x, int64_t axis, SourceLoc loc) {
  detail::TraceState::of(x, loc);
  detail::normalizeAxis(axis, x.rank(), "kiln::log_softmax", loc);
  Tensor v = cast(x, detail::floatDType(x.dtype()), loc);
  Tensor shifted = sub(v, max(v, axis, /*keepdims=*/true, loc), loc);
  Tensor logSum = log(sum(exp(shifted, loc), axis, /*keepdims=*/true, loc), loc);
  return sub(shifted, logSum, loc);
}

Tensor layer_norm(const Tensor &x, const Tensor &gamma, const Tensor &beta,
                  double eps, Axes axes, SourceLoc loc) {
  Operand xOperand(x, loc), gammaOperand(gamma, loc), betaOperand(beta, loc);
  detail::TraceState::of({&xOperand, &gammaOperand, &betaOperand}, loc,
                         "kiln::layer_norm");
  if (!axes.isAll())
    for (int64_t axis : axes.values())
      detail::normalizeAxis(axis, x.rank(), "kiln::layer_norm", loc);
  // gamma and beta must broadcast against x without changing its shape.
  Shape full = detail::broadcastShapes({x.shape(), gamma.shape(), beta.shape()},
                                       "kiln::layer_norm", loc);
  if (full != x.shape())
    detail::fail(loc, "kiln::layer_norm: gamma " + shapeString(gamma.shape()) +
                          " and beta " + shapeString(beta.shape()) +
                          " must broadcast to the shape of x " +
                          shapeString(x.shape()));
  Tensor v = cast(x, detail::floatDType(x.dtype()), loc);
  Tensor centered = sub(v, mean(v, axes, /*keepdims=*/true, loc), loc);
  Tensor variance = mean(mul(centered, centered, loc), axes, true, loc);
  Tensor normalized = mul(centered, rsqrt(add(variance, eps, loc), loc), loc);
  return add(mul(normalized, gamma, loc), beta, loc);
}

} // namespace kiln
