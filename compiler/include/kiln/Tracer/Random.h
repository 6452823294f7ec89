//===- Random.h - Counter-based random numbers, traced ----------*- C++ -*-===//
//
// jax.random's functions as tracer ops, with its streams: a key is a ui32[2]
// tensor, every random value is kiln.rng_bits (Threefry-2x32) of the key
// and the value's flat index, and splitting or folding data into a key
// hashes the key the way JAX's partitionable Threefry does. The same key
// therefore gives JAX's bits, integers and uniform floats exactly, and its
// normal, gumbel and categorical draws to within the rounding of erf_inv
// and log (docs/tracer.md, "Random numbers").
//
// Nothing here has state: a function that draws takes a key and the same
// key gives the same values. Draw with fresh keys from split or fold_in;
// under SPMD, per_rank(key) gives each rank a stream of its own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_RANDOM_H
#define KILN_TRACER_RANDOM_H

#include "kiln/Tracer/Tensor.h"

#include <cstdint>
#include <optional>

namespace kiln {
namespace random {

/// The key of an integer seed, jax.random.PRNGKey(seed): [0, seed] for a
/// seed in the i32 range (negative ones as their ui32 bits), [seed >> 32,
/// seed & 0xffffffff] beyond it.
Tensor key(int64_t seed, SourceLoc loc = SourceLoc::current());
/// The key of a traced integer scalar (i32, i64 or ui32), as above.
Tensor key(const Tensor &seed, SourceLoc loc = SourceLoc::current());

/// `num` new keys, a ui32[num, 2] tensor (jax.random.split).
Tensor split(const Tensor &key, int64_t num = 2,
             SourceLoc loc = SourceLoc::current());
/// A new key from `key` and an integer scalar (jax.random.fold_in): data is
/// read as ui32.
Tensor fold_in(const Tensor &key, const Operand &data,
               SourceLoc loc = SourceLoc::current());
/// fold_in(key, rank_index()): a key of this rank's own under SPMD.
Tensor per_rank(const Tensor &key, SourceLoc loc = SourceLoc::current());

/// Uniform ui32 bits of `shape` (jax.random.bits).
Tensor bits(const Tensor &key, const Shape &shape,
            SourceLoc loc = SourceLoc::current());
/// Floats uniform in [minval, maxval) (jax.random.uniform); the bounds
/// broadcast to `shape`.
Tensor uniform(const Tensor &key, const Shape &shape = {},
               DType dtype = DType::F32, const Operand &minval = 0.0,
               const Operand &maxval = 1.0,
               SourceLoc loc = SourceLoc::current());
/// Standard normal floats (jax.random.normal): sqrt(2) erf_inv(u) of u
/// uniform in (-1, 1).
Tensor normal(const Tensor &key, const Shape &shape = {},
              DType dtype = DType::F32, SourceLoc loc = SourceLoc::current());
/// Floats of the standard normal truncated to (lower, upper)
/// (jax.random.truncated_normal): sqrt(2) erf_inv(u) of u uniform between
/// erf(lower / sqrt 2) and erf(upper / sqrt 2), kept inside the open
/// interval. The bounds may be infinite, and broadcast to `shape`, which
/// defaults to their broadcast shape. Any float dtype; f16 and bf16
/// compute in their own precision, as JAX does.
Tensor truncated_normal(const Tensor &key, const Operand &lower,
                        const Operand &upper,
                        std::optional<Shape> shape = std::nullopt,
                        DType dtype = DType::F32,
                        SourceLoc loc = SourceLoc::current());
/// Integers uniform in [minval, maxval) (jax.random.randint): i32, JAX's
/// default integers, or i64 (JAX's with x64 enabled, from 64-bit draws).
Tensor randint(const Tensor &key, const Shape &shape, const Operand &minval,
               const Operand &maxval, DType dtype = DType::I32,
               SourceLoc loc = SourceLoc::current());
/// True with probability `p` (jax.random.bernoulli); the shape defaults to
/// p's.
Tensor bernoulli(const Tensor &key, const Operand &p = 0.5,
                 std::optional<Shape> shape = std::nullopt,
                 SourceLoc loc = SourceLoc::current());
/// Standard Gumbel floats (jax.random.gumbel): -log(-log(u)).
Tensor gumbel(const Tensor &key, const Shape &shape = {},
              DType dtype = DType::F32, SourceLoc loc = SourceLoc::current());
/// Indices drawn from the distributions softmax(logits, axis), with
/// replacement (jax.random.categorical): argmax of gumbel noise plus the
/// logits. `shape` defaults to logits' shape without `axis`; a longer one
/// draws several samples per distribution.
Tensor categorical(const Tensor &key, const Tensor &logits, int64_t axis = -1,
                   std::optional<Shape> shape = std::nullopt,
                   SourceLoc loc = SourceLoc::current());
/// Standard exponential floats (jax.random.exponential): -log1p(-u).
Tensor exponential(const Tensor &key, const Shape &shape = {},
                   DType dtype = DType::F32,
                   SourceLoc loc = SourceLoc::current());
/// Gamma(a, 1) floats (jax.random.gamma): JAX's Marsaglia-Tsang sampler on
/// each element's key of split(key, n), with a < 1 boosted to a + 1; `a`
/// broadcasts to `shape`, which defaults to a's. The while loop runs until
/// every element has accepted a sample.
Tensor gamma(const Tensor &key, const Operand &a,
             std::optional<Shape> shape = std::nullopt,
             DType dtype = DType::F32, SourceLoc loc = SourceLoc::current());
/// log of Gamma(a, 1) floats, computed in log space so that a small `a`
/// does not underflow (jax.random.loggamma).
Tensor loggamma(const Tensor &key, const Operand &a,
                std::optional<Shape> shape = std::nullopt,
                DType dtype = DType::F32,
                SourceLoc loc = SourceLoc::current());
/// Beta(a, b) floats (jax.random.beta): the ratio of two log-space gammas.
/// The shape defaults to the broadcast shape of `a` and `b`.
Tensor beta(const Tensor &key, const Operand &a, const Operand &b,
            std::optional<Shape> shape = std::nullopt,
            DType dtype = DType::F32, SourceLoc loc = SourceLoc::current());
/// Dirichlet(alpha) vectors along the last dim (jax.random.dirichlet): the
/// softmax of log-space gammas. `shape` is the batch shape, which defaults
/// to alpha's without its last dim.
Tensor dirichlet(const Tensor &key, const Tensor &alpha,
                 std::optional<Shape> shape = std::nullopt,
                 DType dtype = DType::F32,
                 SourceLoc loc = SourceLoc::current());
/// A random permutation of 0 ... n-1, i32 (jax.random.permutation(key, n)).
Tensor permutation(const Tensor &key, int64_t n,
                   SourceLoc loc = SourceLoc::current());
/// `x` with its slices along `axis` in random order (jax.random.permutation
/// of an array, not independent).
Tensor permutation(const Tensor &key, const Tensor &x, int64_t axis = 0,
                   SourceLoc loc = SourceLoc::current());

} // namespace random
} // namespace kiln

#endif // KILN_TRACER_RANDOM_H
