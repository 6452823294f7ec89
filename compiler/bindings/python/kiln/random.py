"""kiln.random: counter-based random numbers with jax.random's names,
signatures and streams.

    key = kiln.random.PRNGKey(0)
    key, sub = kiln.random.split(key)
    w = kiln.random.normal(sub, (784, 10)) * 0.01

    @kiln.jit
    def noisy(key, x):
        return x + 0.1 * kiln.random.normal(key, x.shape)

A key is a uint32 array of shape (2,), as jax.random.PRNGKey's; nothing
has state, and the same key gives the same numbers. Every draw is
kiln.rng_bits (Threefry-2x32) of the key and the element's flat index, as
in JAX's default (partitionable) Threefry, so the same key gives JAX's
bits, integers, permutations and uniform floats exactly, and its normal,
gumbel and categorical draws to within the rounding of erf_inv and log.
Inside a trace the functions record ops (and compile with the function);
outside one they are compiled and run on the spot, returning numpy arrays.

Under SPMD (kiln.distributed), `per_rank(key)` folds the rank into the key
so that each rank draws its own numbers; a key that is not folded gives
every rank the same ones (the same dropout mask for replicated
activations, the same initialization everywhere).
"""

import numpy as np

from . import _kiln
from . import _core
from . import numpy as knp
from ._core import fail
from ._eager import eager

__all__ = ["PRNGKey", "key", "key_data", "split", "fold_in", "per_rank",
           "bits", "uniform", "normal", "truncated_normal", "randint",
           "bernoulli", "gumbel", "exponential", "gamma", "loggamma", "beta",
           "dirichlet", "categorical", "permutation", "choice"]


def _shape(shape, what):
    """shape as a tuple of ints (an int is a 1-D shape)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        fail(f"{what}: shape must be a tuple of ints, got {shape!r}",
             TypeError)


def _float_code(dtype, what):
    """The dtype code of a float dtype; Python's float means float32, JAX's
    default without x64."""
    dtype = np.float32 if dtype is None or dtype is float else np.dtype(dtype)
    if not _core.is_float_dtype(dtype):
        fail(f"{what} draws floats, got dtype "
             f"{np.dtype(dtype)}", TypeError)
    return _core.dtype_code(dtype)


def _as_key_input(value):
    """A Python int as a numpy integer, so that a function run outside a
    trace takes it as an input instead of compiling once per value."""
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return np.asarray(value, dtype=_core.int_dtype(value))


def PRNGKey(seed):
    """The key of an integer seed (jax.random.PRNGKey): [0, seed] for a
    seed in the int32 range (a negative one as its uint32 bits), [seed >>
    32, seed & 0xffffffff] beyond it."""
    return _key(_as_key_input(seed))


@eager
def _key(seed):
    return _kiln.random_key(seed)


def key(seed):
    """jax.random.key: the same raw uint32[2] key as PRNGKey (kiln has no
    typed key arrays)."""
    return PRNGKey(seed)


def key_data(keys):
    """The uint32 words of `keys` (jax.random.key_data): kiln's keys are
    raw already."""
    return keys


@eager
def _split(key, num):
    return _kiln.random_split(key, num)


def split(key, num=2):
    """`num` new keys (jax.random.split): shape (num, 2), or num + (2,)
    for a tuple num."""
    shape = _shape(num, "kiln.random.split")
    keys = _split(key, int(np.prod(shape, dtype=np.int64)))
    if len(shape) == 1:
        return keys
    return knp.reshape(keys, shape + (2,))


@eager
def _fold_in(key, data):
    return _kiln.random_fold_in(key, data)


def fold_in(key, data):
    """A new key from `key` and the integer `data` (jax.random.fold_in);
    data is read as uint32."""
    return _fold_in(key, _as_key_input(data))


@eager
def per_rank(key):
    """fold_in(key, rank): a key of this rank's own in an SPMD program
    (kiln.distributed)."""
    return _kiln.random_per_rank(key)


@eager
def _bits(key, shape):
    return _kiln.random_bits(key, shape)


def bits(key, shape=(), dtype=None):
    """Uniform uint32 bits (jax.random.bits)."""
    if dtype is not None and np.dtype(dtype) != np.uint32:
        fail(f"kiln.random.bits draws uint32, got dtype {np.dtype(dtype)}",
             TypeError)
    return _bits(key, _shape(shape, "kiln.random.bits"))


@eager
def _uniform(key, shape, code, minval, maxval):
    return _kiln.random_uniform(key, shape, code, minval, maxval)


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Floats uniform in [minval, maxval) (jax.random.uniform); the bounds
    broadcast to `shape`."""
    return _uniform(key, _shape(shape, "kiln.random.uniform"),
                    _float_code(dtype, "kiln.random.uniform"), minval, maxval)


@eager
def _normal(key, shape, code):
    return _kiln.random_normal(key, shape, code)


def normal(key, shape=(), dtype=None):
    """Standard normal floats (jax.random.normal)."""
    return _normal(key, _shape(shape, "kiln.random.normal"),
                   _float_code(dtype, "kiln.random.normal"))


@eager
def _truncated_normal(key, lower, upper, shape, code):
    return _kiln.random_truncated_normal(key, lower, upper, shape, code)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to (lower, upper)
    (jax.random.truncated_normal); the bounds may be infinite and broadcast
    to `shape`, which defaults to their broadcast shape. Any float dtype;
    float16 and bfloat16 compute in their own precision, as JAX does."""
    what = "kiln.random.truncated_normal"
    code = _float_code(dtype, what)
    return _truncated_normal(key, lower, upper,
                             None if shape is None else _shape(shape, what), code)


@eager
def _gumbel(key, shape, code):
    return _kiln.random_gumbel(key, shape, code)


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel floats (jax.random.gumbel, its default "low"
    mode)."""
    return _gumbel(key, _shape(shape, "kiln.random.gumbel"),
                   _float_code(dtype, "kiln.random.gumbel"))


@eager
def _exponential(key, shape, code):
    return _kiln.random_exponential(key, shape, code)


def exponential(key, shape=(), dtype=None):
    """Standard exponential floats (jax.random.exponential)."""
    return _exponential(key, _shape(shape, "kiln.random.exponential"),
                        _float_code(dtype, "kiln.random.exponential"))


@eager
def _gamma(key, a, shape, code, log):
    return _kiln.random_gamma(key, a, shape, code, log)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (jax.random.gamma): JAX's Marsaglia-Tsang
    sampler with each element's own key, so the same key gives JAX's values
    (up to the rounding of log and pow where an acceptance test falls
    within it). `a` broadcasts to `shape`, which defaults to a's. Not
    differentiable with respect to `a`."""
    what = "kiln.random.gamma"
    return _gamma(key, a, None if shape is None else _shape(shape, what),
                  _float_code(dtype, what), False)


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, computed in log space so that a small `a`
    does not underflow to 0 (jax.random.loggamma)."""
    what = "kiln.random.loggamma"
    return _gamma(key, a, None if shape is None else _shape(shape, what),
                  _float_code(dtype, what), True)


@eager
def _beta(key, a, b, shape, code):
    return _kiln.random_beta(key, a, b, shape, code)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats (jax.random.beta); the shape defaults to the
    broadcast shape of a and b."""
    what = "kiln.random.beta"
    return _beta(key, a, b, None if shape is None else _shape(shape, what),
                 _float_code(dtype, what))


@eager
def _dirichlet(key, alpha, shape, code):
    return _kiln.random_dirichlet(key, alpha, shape, code)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along alpha's last axis
    (jax.random.dirichlet); `shape` is the batch shape, alpha's without its
    last axis by default."""
    what = "kiln.random.dirichlet"
    return _dirichlet(key, alpha, None if shape is None else _shape(shape, what),
                      _float_code(dtype, what))


@eager
def _randint(key, shape, minval, maxval, code):
    return _kiln.random_randint(key, shape, minval, maxval, code)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in [minval, maxval) (jax.random.randint): int32 by
    default, or int64 (the stream of JAX's int64 randint, with x64
    enabled)."""
    dtype = np.int32 if dtype is None or dtype is int else np.dtype(dtype)
    return _randint(key, _shape(shape, "kiln.random.randint"), minval,
                    maxval, _core.dtype_code(dtype))


@eager
def _bernoulli(key, p, shape):
    return _kiln.random_bernoulli(key, p, shape)


def bernoulli(key, p=0.5, shape=None):
    """True with probability p (jax.random.bernoulli); the shape defaults
    to p's."""
    return _bernoulli(key, p, None if shape is None else
                      _shape(shape, "kiln.random.bernoulli"))


@eager
def _categorical(key, logits, axis, shape):
    return _kiln.random_categorical(key, logits, axis, shape)


@eager
def _categorical_without_replacement(key, logits, axis, shape, draws):
    logits = knp.asarray(logits)
    noisy = logits + gumbel(key, logits.shape, logits.dtype)
    # The `draws` largest per distribution, ties to the lower index (as
    # lax.top_k): a stable ascending sort of the negated values.
    order = knp.argsort(-knp.moveaxis(noisy, axis, -1), axis=-1)
    top = knp.astype(order[..., :draws], np.int32)
    # [batch..., draws] -> [draws, batch...] -> shape.
    top = knp.moveaxis(top, -1, 0)
    return knp.reshape(top, shape)


def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Indices drawn from softmax(logits, axis) (jax.random.categorical),
    int32: the argmax of the logits plus Gumbel noise. `shape` defaults to
    the logits' shape without `axis`; a longer one draws several samples
    per distribution, which with replace=False are distinct (the largest
    of the logits plus one Gumbel draw each, as JAX's Gumbel top-k)."""
    what = "kiln.random.categorical"
    if replace:
        return _categorical(key, logits, int(axis), None if shape is None else
                            _shape(shape, what))
    dims = tuple(np.shape(logits))
    if not dims:
        fail(f"{what}: logits must have at least one dimension", ValueError)
    if not -len(dims) <= axis < len(dims):
        fail(f"{what}: axis {axis} is out of range for logits of rank "
             f"{len(dims)}", ValueError)
    axis = int(axis) % len(dims)
    batch = dims[:axis] + dims[axis + 1:]
    shape = batch if shape is None else _shape(shape, what)
    if len(shape) < len(batch) or shape[len(shape) - len(batch):] != batch:
        fail(f"{what}: shape {shape} must end with the logits' shape without "
             f"axis {axis}, {batch}", ValueError)
    draws = int(np.prod(shape[:len(shape) - len(batch)], dtype=np.int64))
    if draws > dims[axis]:
        fail(f"{what}: the number of samples without replacement ({draws}) "
             f"cannot exceed the number of categories ({dims[axis]})",
             ValueError)
    return _categorical_without_replacement(key, logits, axis, shape, draws)


@eager
def _permutation(key, x, axis):
    return _kiln.random_permutation(key, x, axis)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of range(x) for an int x, else of x's slices
    along `axis` (jax.random.permutation)."""
    if independent:
        fail("kiln.random.permutation shuffles whole slices only "
             "(independent=False)", NotImplementedError)
    if isinstance(x, (np.integer,)):
        x = int(x)
    return _permutation(key, x, int(axis))


@eager
def _choice(key, a, shape, replace, p, axis, draws):
    """jax.random.choice's draw (the public choice checks the arguments):
    a is an int n (draw from range(n)) or an array whose slices along
    `axis` are drawn."""
    ranged = isinstance(a, int)
    n = a if ranged else a.shape[axis]
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n)
        elif ranged:
            ind = permutation(key, n)[:draws]
        else:
            index = (slice(None),) * axis + (slice(draws),)
            return knp.reshape(permutation(key, a, axis)[index],
                               a.shape[:axis] + shape + a.shape[axis + 1:])
    else:
        p = knp.asarray(p)
        if p.dtype not in (np.float32, np.float64):
            p = knp.astype(p, np.float32)
        if replace:
            # The first index whose running sum reaches r (searchsorted,
            # side left): how many running sums are below r.
            cumulative = knp.cumsum(p)
            r = cumulative[-1] * (1 - uniform(key, shape, p.dtype))
            below = knp.expand_dims(r, -1) > cumulative
            ind = knp.astype(knp.sum(below, axis=-1), np.int32)
        else:
            # The Gumbel top-k trick, as JAX: the draws largest of
            # gumbel + log(p), ties to the lower index.
            g = gumbel(key, (n,), p.dtype) + knp.log(p)
            ind = knp.astype(knp.argsort(-g)[:draws], np.int32)
    if ranged:
        return knp.reshape(ind, shape)
    return knp.reshape(knp.take(a, knp.ravel(ind), axis),
                       a.shape[:axis] + shape + a.shape[axis + 1:])


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Draws from range(a) for an int a, else slices of `a` along `axis`
    (jax.random.choice): with replacement or not, uniformly or with the
    probabilities `p` (a vector of a's length along axis, normalized by
    its sum). The same key gives JAX's draws: exactly without p, and with
    p up to the rounding of its running sum (with replacement) or of the
    Gumbel noise's logarithm (without)."""
    what = "kiln.random.choice"
    if isinstance(shape, (int, np.integer)):
        fail(f"{what}: shape must be a sequence, got {shape!r}", TypeError)
    shape = _shape(shape, what)
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        a = int(a)
        n = a
    else:
        dims = tuple(np.shape(a))
        ndim = len(dims)
        if ndim == 0:
            fail(f"{what}: a must be an int or an array of at least one "
                 "dimension", ValueError)
        if not -ndim <= axis < ndim:
            fail(f"{what}: axis {axis} is out of range for a of rank {ndim}",
                 ValueError)
        axis = int(axis) % ndim
        n = dims[axis]
    draws = int(np.prod(shape, dtype=np.int64))
    if draws == 0:
        if isinstance(a, int):
            return knp.zeros(shape, np.int32)
        return knp.zeros(dims[:axis] + shape + dims[axis + 1:], a.dtype)
    if n <= 0:
        fail(f"{what}: a must be greater than 0 unless no samples are taken",
             ValueError)
    if not replace and draws > n:
        fail(f"{what}: cannot take a larger sample (size {draws}) than the "
             f"population (size {n}) when replace=False", ValueError)
    if p is not None and tuple(np.shape(p)) != (n,):
        fail(f"{what}: p must be None or a vector of a.shape[axis] = {n} "
             f"probabilities, got shape {tuple(np.shape(p))}", ValueError)
    return _choice(key, a, shape, bool(replace), p, axis, draws)

