//===- Compositions.cpp - softmax, log_softmax, layer_norm ----------------===//
//
// Layers expressed with the public ops, so they get broadcasting, promotion
// and error checking for free and leave ordinary kiln ops in the graph for
// the compiler to fuse. Arguments are checked up front so that a mistake
// reports the layer, not one of the ops inside it.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

namespace kiln {

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
