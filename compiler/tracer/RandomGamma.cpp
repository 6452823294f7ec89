//===- RandomGamma.cpp - Gamma, beta, Dirichlet and exponential draws -----===//
//
// jax.random's gamma family with JAX's streams. JAX draws each element of
// a gamma with its own key (element i of split(key, n)) and Marsaglia and
// Tsang's rejection sampler, a while loop per element (with a while loop
// for the normal draw inside), run under its vmap. Here the n elements run
// in one kiln.while whose body draws for every element and keeps the new
// state only where the element has not accepted yet, which is what a
// batched while does: each element walks through exactly the keys and
// draws its own loop would, so the values are JAX's up to the rounding of
// log, pow and erf_inv where an acceptance test falls within it. The loop
// ends when every element has accepted (about 1.03 rounds each on average;
// the most over n elements grows like log n).
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "RandomDraws.h"

#include "kiln/Tracer/ControlFlow.h"
#include "kiln/Tracer/Random.h"

namespace kiln {
namespace random {

using detail::fail;
using mlir::kiln::RngWord;
using namespace draws;

namespace {

/// The two words of n keys, each a ui32[n].
struct KeyWords {
  Tensor k0, k1;
};

KeyWords wordsOf(const Tensor &keys, SourceLoc loc) {
  int64_t n = keys.shape()[0];
  auto word = [&](int64_t i) {
    return reshape(slice(keys, {0, i}, {n, i + 1}, {}, loc), {n}, loc);
  };
  return {word(0), word(1)};
}

/// Key j of split(key, num) of each key (the same for every num > j).
KeyWords splitEach(const KeyWords &keys, int64_t j, SourceLoc loc) {
  const Shape &shape = keys.k0.shape();
  std::pair<Tensor, Tensor> counter{
      zeros(shape, DType::UI32, loc),
      full(shape, Scalar(j), DType::UI32, loc)};
  return {threefryWords(keys.k0, keys.k1, counter, RngWord::First, loc),
          threefryWords(keys.k0, keys.k1, counter, RngWord::Second, loc)};
}

/// uniform(key, (), dtype) of each key.
Tensor uniformEach(const KeyWords &keys, DType dtype, SourceLoc loc) {
  const Shape &shape = keys.k0.shape();
  std::pair<Tensor, Tensor> counter{zeros(shape, DType::UI32, loc),
                                    zeros(shape, DType::UI32, loc)};
  return unitFloats(
      [&](RngWord word) {
        return threefryWords(keys.k0, keys.k1, counter, word, loc);
      },
      dtype, loc);
}

/// log1p(-u) for u in [0, 1), JAX's log of 1 - uniform: Goldberg's
/// log(w) x / (w - 1) with w = 1 - u rounded, which corrects w's rounding;
/// x itself where w rounds to 1.
Tensor log1pNegated(const Tensor &u, SourceLoc loc) {
  Tensor x = neg(u, loc);
  Tensor w = add(x, 1.0, loc);
  Tensor one = equal(w, 1.0, loc);
  Tensor safe = where(one, 2.0, w, loc);
  Tensor ratio = mul(log(safe, loc), div(x, sub(safe, 1.0, loc), loc), loc);
  return where(one, x, ratio, loc);
}

/// Whether any element of the i1 tensor `mask` is set, as a rank-0 i1.
Tensor anySet(const Tensor &mask, SourceLoc loc) {
  return greater(max(cast(mask, DType::I32, loc), Axes::all(), false, loc), 0,
                 loc);
}

/// Carries `next` where `going` is set and `old` elsewhere.
Tensors keepWhere(const Tensor &going, const Tensors &next, const Tensors &old,
                  SourceLoc loc) {
  Tensors kept;
  for (size_t i = 0; i < next.size(); ++i)
    kept.push_back(where(going, next[i], old[i], loc));
  return kept;
}

/// JAX's _gamma_one for every element of `alpha` (rank 1) with its key.
Tensor gammaEach(const KeyWords &keys, const Tensor &alpha, bool logSpace,
                 SourceLoc loc) {
  DType dtype = alpha.dtype();
  const Shape &shape = alpha.shape();
  Tensor boostMask = greater_equal(alpha, 1.0, loc);
  Tensor boosted = where(boostMask, alpha, add(alpha, 1.0, loc), loc);
  Tensor d = sub(boosted, 1.0 / 3.0, loc);
  // The samples depend on alpha through the rejection loop, whose steps'
  // derivatives do not make the samples' (JAX's implicit reparameterization
  // gradient), so differentiating with respect to alpha is refused here.
  detail::TraceState &trace = detail::TraceState::of(d, loc);
  trace.use(d, loc).getDefiningOp()->setAttr(
      mlir::kiln::kNoDerivativeAttrName,
      trace.getBuilder().getStringAttr(
          "the samples of kiln.random.gamma, loggamma, beta and dirichlet "
          "have no derivative with respect to their shape parameters here "
          "(JAX's implicit reparameterization gradient is not "
          "implemented)"));
  Tensor c = div(full({}, Scalar(1.0 / 3.0), dtype, loc), sqrt(d, loc), loc);

  // Go on while the sample is rejected; the initial state is.
  auto rejected = [&](const Tensor &x2, const Tensor &v3, const Tensor &u) {
    Tensor squeeze =
        greater_equal(u, sub(1.0, mul(0.0331, mul(x2, x2, loc), loc), loc),
                      loc);
    Tensor full = greater_equal(
        log(u, loc),
        add(mul(x2, 0.5, loc),
            mul(d, add(sub(1.0, v3, loc), log(v3, loc), loc), loc), loc),
        loc);
    return logical_and(squeeze, full, loc);
  };
  KeyWords loopKey = splitEach(keys, 0, loc);
  KeyWords boostKey = splitEach(keys, 1, loc);
  // (key words, X = x^2, V = v^3, U).
  Tensors init{loopKey.k0, loopKey.k1, zeros(shape, dtype, loc),
               ones(shape, dtype, loc), full(shape, Scalar(2.0), dtype, loc)};
  Tensors state = while_loop(
      [&](const Tensors &s) { return anySet(rejected(s[2], s[3], s[4]), loc); },
      [&](const Tensors &s) {
        Tensor going = rejected(s[2], s[3], s[4]);
        KeyWords key{s[0], s[1]};
        KeyWords next = splitEach(key, 0, loc);
        KeyWords xKey = splitEach(key, 1, loc);
        KeyWords uKey = splitEach(key, 2, loc);
        // A normal x with v = 1 + c x > 0, drawn until v is.
        Tensors drawn = while_loop(
            [&](const Tensors &t) {
              return anySet(less_equal(t[3], 0.0, loc), loc);
            },
            [&](const Tensors &t) {
              KeyWords key{t[0], t[1]};
              KeyWords after = splitEach(key, 0, loc);
              Tensor x = normalFromUnit(
                  uniformEach(splitEach(key, 1, loc), dtype, loc), loc);
              Tensor v = add(1.0, mul(x, c, loc), loc);
              return keepWhere(less_equal(t[3], 0.0, loc),
                               {after.k0, after.k1, x, v}, t, loc);
            },
            Tensors{xKey.k0, xKey.k1, zeros(shape, dtype, loc),
                    full(shape, Scalar(-1.0), dtype, loc)},
            loc);
        Tensor x = drawn[2], v = drawn[3];
        return keepWhere(going,
                         {next.k0, next.k1, mul(x, x, loc),
                          mul(mul(v, v, loc), v, loc),
                          uniformEach(uKey, dtype, loc)},
                         s, loc);
      },
      init, loc);
  Tensor v3 = state[3];
  Tensor u = uniformEach(boostKey, dtype, loc);
  if (logSpace) {
    Tensor logSamples = log1pNegated(u, loc);
    Tensor logBoost =
        where(logical_or(boostMask, equal(logSamples, 0.0, loc), loc), 0.0,
              mul(logSamples, div(1.0, alpha, loc), loc), loc);
    return add(add(log(d, loc), log(v3, loc), loc), logBoost, loc);
  }
  Tensor samples = sub(1.0, u, loc);
  Tensor boost = where(boostMask, 1.0,
                       pow(samples, div(1.0, alpha, loc), loc), loc);
  return mul(mul(d, v3, loc), boost, loc);
}

/// `value` as a tensor of `dtype` broadcast to `shape`.
Tensor parameter(const Operand &value, const Shape &shape, DType dtype,
                 const char *what, SourceLoc loc) {
  Tensor tensor = bound(value, dtype, loc);
  Shape broadcast = detail::broadcastShapes({tensor.shape(), shape}, what, loc);
  if (broadcast != shape)
    fail(loc, std::string(what) + ": a parameter of shape " +
                  shapeString(tensor.shape()) +
                  " does not broadcast to the shape " + shapeString(shape));
  return broadcast_to(tensor, shape, loc);
}

Tensor gammaImpl(const Tensor &key, const Operand &a,
                 std::optional<Shape> shape, DType dtype, bool logSpace,
                 const char *what, SourceLoc loc) {
  checkKey(key, what, loc);
  checkFloat(dtype, what, loc);
  Shape drawn = shape ? *shape : detail::shapeOf(a);
  int64_t count = detail::checkedNumElements(drawn, what, loc);
  Tensor alpha = parameter(a, drawn, dtype, what, loc);
  if (count == 0)
    return alpha;
  Tensor samples = gammaEach(wordsOf(split(key, count, loc), loc),
                             reshape(alpha, {count}, loc), logSpace, loc);
  return reshape(samples, drawn, loc);
}

} // namespace

Tensor exponential(const Tensor &key, const Shape &shape, DType dtype,
                   SourceLoc loc) {
  checkKey(key, "kiln::random::exponential", loc);
  checkFloat(dtype, "kiln::random::exponential", loc);
  return neg(log1pNegated(uniform(key, shape, dtype, 0.0, 1.0, loc), loc),
             loc);
}

Tensor gamma(const Tensor &key, const Operand &a, std::optional<Shape> shape,
             DType dtype, SourceLoc loc) {
  return gammaImpl(key, a, shape, dtype, /*logSpace=*/false,
                   "kiln::random::gamma", loc);
}

Tensor loggamma(const Tensor &key, const Operand &a,
                std::optional<Shape> shape, DType dtype, SourceLoc loc) {
  return gammaImpl(key, a, shape, dtype, /*logSpace=*/true,
                   "kiln::random::loggamma", loc);
}

Tensor beta(const Tensor &key, const Operand &a, const Operand &b,
            std::optional<Shape> shape, DType dtype, SourceLoc loc) {
  const char *what = "kiln::random::beta";
  checkKey(key, what, loc);
  checkFloat(dtype, what, loc);
  Shape drawn = shape ? *shape
                      : detail::broadcastShapes(
                            {detail::shapeOf(a), detail::shapeOf(b)}, what,
                            loc);
  Tensor alpha = parameter(a, drawn, dtype, what, loc);
  Tensor betaParam = parameter(b, drawn, dtype, what, loc);
  Tensor keys = split(key, 2, loc);
  Tensor logA = loggamma(keyRow(keys, 0, loc), alpha, drawn, dtype, loc);
  Tensor logB = loggamma(keyRow(keys, 1, loc), betaParam, drawn, dtype, loc);
  // gamma_a / (gamma_a + gamma_b), scaled by the larger one.
  Tensor logMax = maximum(logA, logB, loc);
  Tensor scaledA = exp(sub(logA, logMax, loc), loc);
  Tensor scaledB = exp(sub(logB, logMax, loc), loc);
  return div(scaledA, add(scaledA, scaledB, loc), loc);
}

Tensor dirichlet(const Tensor &key, const Tensor &alpha,
                 std::optional<Shape> shape, DType dtype, SourceLoc loc) {
  const char *what = "kiln::random::dirichlet";
  checkKey(key, what, loc);
  checkFloat(dtype, what, loc);
  if (alpha.rank() < 1)
    fail(loc, std::string(what) + " needs alpha of rank >= 1, got rank 0");
  Shape batch(alpha.shape().begin(), alpha.shape().end() - 1);
  Shape drawn = shape ? *shape : batch;
  drawn.push_back(alpha.shape().back());
  Tensor logGammas = loggamma(key, cast(alpha, dtype, loc), drawn, dtype, loc);
  // jax.nn.softmax: exp(x - max) over its sum.
  Tensor top = max(logGammas, Axes(int64_t{-1}), true, loc);
  Tensor unnormalized = exp(sub(logGammas, top, loc), loc);
  return div(unnormalized, sum(unnormalized, Axes(int64_t{-1}), true, loc), loc);
}

} // namespace random
} // namespace kiln
