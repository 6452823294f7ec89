"""kiln.numpy: numpy's API on traced arrays (`import kiln.numpy as knp`).

Every function records kiln ops into the trace being built (inside
kiln.jit, kiln.grad, ...). The ops, numpy-style broadcasting and dtype
promotion are the C++ tracer's (docs/python.md lists the rules: they follow
JAX, so `int32 + float32` is float32 and Python numbers adopt the array's
dtype). Called outside a trace on concrete arrays, a function is compiled
and run at once (the result is a numpy array), which is correct but slow:
it is meant for trying things out, not for loops.

Arrays of the dtypes kiln traces are bool, int32, int64, float32 and
float64.
"""

import builtins
import functools
import math

import numpy as _np

from .. import _core
from .._core import Tensor, as_tensor, fail, dtype_of
from .. import _kiln

float32 = _np.float32
float64 = _np.float64
int32 = _np.int32
int64 = _np.int64
bool_ = _np.bool_
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
ndarray = Tensor


def _eager(fn):
    """Makes `fn` callable on concrete values outside a trace: numpy array
    arguments become inputs of a compiled function, everything else is
    baked in (cached per function and static values)."""
    cache = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _kiln.is_tracing() or not any(isinstance(a, _np.ndarray)
                                         for a in args):
            return fn(*args, **kwargs)
        from .._jit import jit
        dynamic = tuple(i for i, a in enumerate(args)
                        if isinstance(a, _np.ndarray))
        statics = tuple((i, _freeze(a)) for i, a in enumerate(args)
                        if i not in dynamic)
        key = (dynamic, statics, _freeze(kwargs))
        compiled = cache.get(key)
        if compiled is None:
            def apply(*arrays):
                full = list(args)
                for i, array in zip(dynamic, arrays):
                    full[i] = array
                return fn(*full, **kwargs)
            compiled = cache[key] = jit(apply, name=fn.__name__)
        return compiled(*(args[i] for i in dynamic))
    return wrapper


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, _np.dtype) or isinstance(value, type):
        return str(value)
    return value


def _is_float(x):
    return dtype_of(x).kind == "f"


def _is_int(x):
    return dtype_of(x).kind == "i"


def _float_of(x):
    """x as a float tensor (integers and bools become float32)."""
    x = as_tensor(x)
    return x if _is_float(x) else _kiln.cast(x, _core.dtype_code(float32))


def _axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, int):
        return [axis]
    return list(axis)


# --- Creation ----------------------------------------------------------------

def asarray(a, dtype=None):
    """`a` as a traced array (numpy arrays and numbers become constants)."""
    x = as_tensor(a)
    return astype(x, dtype) if dtype is not None else x


array = asarray


def astype(x, dtype):
    x = as_tensor(x)
    code = _core.dtype_code(dtype)
    return x if code == x.dtype_code else _kiln.cast(x, code)


def full(shape, fill_value, dtype=None):
    shape = _shape(shape)
    if isinstance(fill_value, Tensor):
        return broadcast_to(astype(fill_value, dtype) if dtype else fill_value,
                            shape)
    if dtype is None:
        dtype = (bool_ if isinstance(fill_value, bool) else
                 int32 if isinstance(fill_value, int) else float32)
    return _kiln.full(shape, fill_value, _core.dtype_code(dtype))


def zeros(shape, dtype=float32):
    return full(shape, 0, dtype)


def ones(shape, dtype=float32):
    return full(shape, 1, dtype)


def zeros_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 0, dtype or dtype_of(x))


def ones_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 1, dtype or dtype_of(x))


def full_like(x, fill_value, dtype=None):
    x = as_tensor(x)
    return full(x.shape, fill_value, dtype or dtype_of(x))


def arange(start, stop=None, step=1, dtype=None):
    """Static bounds only (the result's shape must be known)."""
    if stop is None:
        start, stop = 0, start
    values = _np.arange(start, stop, step)
    if dtype is None:
        dtype = int32 if values.dtype.kind in "iu" else float32
    return asarray(values.astype(dtype))


def eye(n, m=None, dtype=float32):
    return asarray(_np.eye(n, m, dtype=dtype))


def _shape(shape):
    if isinstance(shape, int):
        return [shape]
    return [int(d) for d in shape]


# --- Elementwise ---------------------------------------------------------------

def _binary(name, fn):
    op = _eager(lambda x1, x2: fn(x1, x2))
    op.__name__ = op.__qualname__ = name
    return op


add = _binary("add", _kiln.add)
subtract = _binary("subtract", _kiln.sub)
multiply = _binary("multiply", _kiln.mul)
maximum = _binary("maximum", _kiln.maximum)
minimum = _binary("minimum", _kiln.minimum)
equal = _binary("equal", _kiln.equal)
not_equal = _binary("not_equal", _kiln.not_equal)
less = _binary("less", _kiln.less)
less_equal = _binary("less_equal", _kiln.less_equal)
greater = _binary("greater", _kiln.greater)
greater_equal = _binary("greater_equal", _kiln.greater_equal)
logical_and = _binary("logical_and", _kiln.logical_and)
logical_or = _binary("logical_or", _kiln.logical_or)


@_eager
def logical_xor(x1, x2):
    return _kiln.not_equal(astype(x1, bool_), astype(x2, bool_))


@_eager
def logical_not(x):
    return _kiln.logical_not(x)


def _bool_only(name, fn):
    @_eager
    def op(x1, x2):
        t1, t2 = as_tensor(x1), as_tensor(x2)
        if dtype_of(t1) != bool_ or dtype_of(t2) != bool_:
            fail(f"kiln.numpy.{name} is defined on bool arrays only "
                 f"(got {dtype_of(t1)} and {dtype_of(t2)})", TypeError)
        return fn(t1, t2)
    op.__name__ = name
    return op


bitwise_and = _bool_only("bitwise_and", logical_and)
bitwise_or = _bool_only("bitwise_or", logical_or)
bitwise_xor = _bool_only("bitwise_xor", logical_xor)


@_eager
def invert(x):
    x = as_tensor(x)
    if dtype_of(x) != bool_:
        fail("kiln.numpy.invert (~) is defined on bool arrays only "
             f"(got {dtype_of(x)})", TypeError)
    return _kiln.logical_not(x)


@_eager
def true_divide(x1, x2):
    """Division; integer operands divide as float32 (as in JAX)."""
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if not _is_float(t1) and not _is_float(t2):
        return _kiln.div(_float_of(t1), _float_of(t2))
    return _kiln.div(x1 if not isinstance(x1, Tensor) else t1,
                     x2 if not isinstance(x2, Tensor) else t2)


divide = true_divide


@_eager
def floor_divide(x1, x2):
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if _is_float(t1) or _is_float(t2) or isinstance(x1, float) or \
            isinstance(x2, float):
        return _kiln.floor(_kiln.div(x1, x2))
    quotient = _kiln.div(x1, x2)          # truncates toward zero
    rest = _kiln.sub(x1, _kiln.mul(quotient, x2))
    adjust = _kiln.logical_and(
        _kiln.not_equal(rest, 0),
        _kiln.not_equal(_kiln.less(rest, 0), _kiln.less(x2, 0)))
    return _kiln.sub(quotient, _kiln.cast(adjust, quotient.dtype_code))


@_eager
def remainder(x1, x2):
    """x1 - floor(x1 / x2) * x2: the sign follows x2, as in numpy."""
    return _kiln.sub(x1, _kiln.mul(floor_divide(x1, x2), x2))


mod = remainder


@_eager
def power(x1, x2):
    t1 = as_tensor(x1)
    if isinstance(x2, int) and not isinstance(x2, bool) and 0 <= x2 <= 4:
        # Small integer powers by multiplication: exact, also for integers.
        result = ones_like(t1) if x2 == 0 else t1
        for _ in range(x2 - 1):
            result = _kiln.mul(result, t1)
        return result
    return _kiln.pow(x1, x2)


def _unary(name, fn):
    op = _eager(fn)
    op.__name__ = op.__qualname__ = name
    return op


negative = _unary("negative", lambda x: _kiln.neg(x))
positive = _unary("positive", lambda x: as_tensor(x))
abs = _unary("abs", lambda x: _kiln.abs(x))
absolute = abs
sign = _unary("sign", lambda x: _kiln.sign(x))
exp = _unary("exp", lambda x: _kiln.exp(x))
log = _unary("log", lambda x: _kiln.log(x))
sqrt = _unary("sqrt", lambda x: _kiln.sqrt(x))
tanh = _unary("tanh", lambda x: _kiln.tanh(x))
sin = _unary("sin", lambda x: _kiln.sin(x))
cos = _unary("cos", lambda x: _kiln.cos(x))
tan = _unary("tan", lambda x: _kiln.tan(x))
arcsin = _unary("arcsin", lambda x: _kiln.asin(x))
arccos = _unary("arccos", lambda x: _kiln.acos(x))
arctan = _unary("arctan", lambda x: _kiln.atan(x))
sinh = _unary("sinh", lambda x: _kiln.sinh(x))
cosh = _unary("cosh", lambda x: _kiln.cosh(x))
arcsinh = _unary("arcsinh", lambda x: _kiln.asinh(x))
arccosh = _unary("arccosh", lambda x: _kiln.acosh(x))
arctanh = _unary("arctanh", lambda x: _kiln.atanh(x))
floor = _unary("floor", lambda x: _kiln.floor(_float_of(x)))
ceil = _unary("ceil", lambda x: _kiln.ceil(_float_of(x)))
round = _unary("round", lambda x: _kiln.round(_float_of(x)))
rint = round
square = _unary("square", lambda x: _kiln.mul(x, x))
reciprocal = _unary("reciprocal", lambda x: _kiln.div(1.0, _float_of(x)))
exp2 = _unary("exp2", lambda x: _kiln.pow(2.0, _float_of(x)))
log2 = _unary("log2", lambda x: _kiln.div(_kiln.log(x),
                                          math.log(2.0)))
log10 = _unary("log10", lambda x: _kiln.div(_kiln.log(x),
                                            math.log(10.0)))
expm1 = _unary("expm1", lambda x: _kiln.sub(_kiln.exp(x), 1.0))
log1p = _unary("log1p", lambda x: _kiln.log(_kiln.add(_float_of(x), 1.0)))
isnan = _unary("isnan", lambda x: _kiln.not_equal(x, x))


@_eager
def isfinite(x):
    x = as_tensor(x)
    if not _is_float(x):
        return full(x.shape, True, bool_)
    return _kiln.less(_kiln.abs(x), math.inf)


@_eager
def isinf(x):
    x = as_tensor(x)
    if not _is_float(x):
        return full(x.shape, False, bool_)
    return _kiln.equal(_kiln.abs(x), math.inf)


@_eager
def clip(a, a_min=None, a_max=None):
    x = as_tensor(a)
    if a_min is not None:
        x = _kiln.maximum(x, a_min)
    if a_max is not None:
        x = _kiln.minimum(x, a_max)
    return x


@_eager
def where(condition, x=None, y=None):
    if x is None or y is None:
        fail("kiln.numpy.where needs x and y: the one-argument form has a "
             "data-dependent shape", TypeError)
    return _kiln.where(astype(condition, bool_), x, y)


# --- Shapes ----------------------------------------------------------------------

def _normalize_axis(axis, ndim, what="axis"):
    if not -ndim <= axis < builtins.max(ndim, 1):
        fail(f"{what} {axis} is out of range for an array of rank {ndim}",
             ValueError)
    return axis % builtins.max(ndim, 1)


@_eager
def reshape(a, newshape):
    x = as_tensor(a)
    return _kiln.reshape(x, _shape(newshape))


@_eager
def ravel(a):
    return reshape(a, [-1])


@_eager
def transpose(a, axes=None):
    x = as_tensor(a)
    perm = list(range(x.ndim))[::-1] if axes is None else \
        [_normalize_axis(int(i), x.ndim) for i in axes]
    return _kiln.transpose(x, perm)


@_eager
def swapaxes(a, axis1, axis2):
    x = as_tensor(a)
    perm = list(range(x.ndim))
    i, j = _normalize_axis(axis1, x.ndim), _normalize_axis(axis2, x.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _kiln.transpose(x, perm)


@_eager
def moveaxis(a, source, destination):
    x = as_tensor(a)
    source = [_normalize_axis(s, x.ndim) for s in _axes(source, x.ndim)]
    destination = [_normalize_axis(d, x.ndim)
                   for d in _axes(destination, x.ndim)]
    order = [i for i in range(x.ndim) if i not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return _kiln.transpose(x, order)


@_eager
def expand_dims(a, axis):
    x = as_tensor(a)
    axes = _axes(axis, x.ndim)
    rank = x.ndim + len(axes)
    axes = sorted(_normalize_axis(ax, rank) for ax in axes)
    shape = list(x.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return _kiln.reshape(x, shape)


@_eager
def squeeze(a, axis=None):
    x = as_tensor(a)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = [_normalize_axis(ax, x.ndim) for ax in _axes(axis, x.ndim)]
        for ax in axes:
            if x.shape[ax] != 1:
                fail(f"cannot squeeze axis {ax} of shape {x.shape}: its "
                     "size is not 1", ValueError)
    return _kiln.reshape(x, [d for i, d in enumerate(x.shape)
                             if i not in axes])


def concatenate(arrays, axis=0):
    tensors = [as_tensor(a) for a in arrays]
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    return _kiln.concat(tensors, axis)


def stack(arrays, axis=0):
    tensors = [as_tensor(a) for a in arrays]
    if not tensors:
        fail("kiln.numpy.stack needs at least one array", ValueError)
    rank = tensors[0].ndim + 1
    axis = _normalize_axis(axis, rank)
    return _kiln.concat([expand_dims(t, axis) for t in tensors], axis)


@_eager
def broadcast_to(array, shape):
    return _kiln.broadcast_to(as_tensor(array), _shape(shape))


@_eager
def flip(m, axis=None):
    x = as_tensor(m)
    axes = range(x.ndim) if axis is None else _axes(axis, x.ndim)
    index = [slice(None)] * x.ndim
    for ax in axes:
        index[_normalize_axis(ax, x.ndim)] = slice(None, None, -1)
    return x[tuple(index)]


# --- Reductions ----------------------------------------------------------------

@_eager
def sum(a, axis=None, keepdims=False):
    x = as_tensor(a)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    return _kiln.sum(x, _axes(axis, x.ndim), keepdims)


@_eager
def mean(a, axis=None, keepdims=False):
    return _kiln.mean(as_tensor(a), _axes(axis, as_tensor(a).ndim), keepdims)


@_eager
def max(a, axis=None, keepdims=False):
    x = as_tensor(a)
    if dtype_of(x) == bool_:
        return astype(_kiln.max(astype(x, int32), _axes(axis, x.ndim),
                                keepdims), bool_)
    return _kiln.max(x, _axes(axis, x.ndim), keepdims)


amax = max


@_eager
def min(a, axis=None, keepdims=False):
    x = as_tensor(a)
    if dtype_of(x) == bool_:
        return logical_not(max(logical_not(x), axis, keepdims))
    if _is_float(x):
        return _kiln.neg(_kiln.max(_kiln.neg(x), _axes(axis, x.ndim),
                                   keepdims))
    # -1 - x maps the integers onto themselves in reverse without overflow.
    flipped = _kiln.max(_kiln.sub(-1, x), _axes(axis, x.ndim), keepdims)
    return _kiln.sub(-1, flipped)


amin = min


@_eager
def any(a, axis=None, keepdims=False):
    return max(astype(a, bool_), axis, keepdims)


@_eager
def all(a, axis=None, keepdims=False):
    return min(astype(a, bool_), axis, keepdims)


@_eager
def var(a, axis=None, keepdims=False, ddof=0):
    x = _float_of(a)
    centered = _kiln.sub(x, mean(x, axis, keepdims=True))
    total = sum(_kiln.mul(centered, centered), axis, keepdims)
    count = x.size // builtins.max(total.size, 1)
    return _kiln.div(total, float(builtins.max(count - ddof, 0)))


@_eager
def std(a, axis=None, keepdims=False, ddof=0):
    return _kiln.sqrt(var(a, axis, keepdims, ddof))


def _arg_reduce(name, op):
    @_eager
    def reduce(a, axis=None, keepdims=False):
        x = as_tensor(a)
        if axis is None:
            x, axis = ravel(x), 0
        axis = _normalize_axis(axis, x.ndim)
        result = op(x, axis, False)
        return expand_dims(result, axis) if keepdims else result
    reduce.__name__ = name
    return reduce


argmax = _arg_reduce("argmax", _kiln.argmax)
argmin = _arg_reduce("argmin", _kiln.argmin)


@_eager
def cumsum(a, axis=None):
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    return _kiln.cumsum(x, axis, False, False)


# --- Products ----------------------------------------------------------------------

@_eager
def matmul(x1, x2):
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if t1.ndim == 0 or t2.ndim == 0:
        fail("matmul: operands must have at least one dimension (use * for "
             "a scalar)", ValueError)
    if t1.ndim > 3 or t2.ndim > 3:
        # Fold the leading batch dimensions into one.
        batch = _np.broadcast_shapes(t1.shape[:-2], t2.shape[:-2])
        t1 = broadcast_to(t1, batch + t1.shape[-2:]) if t1.ndim >= 2 else t1
        t2 = broadcast_to(t2, batch + t2.shape[-2:]) if t2.ndim >= 2 else t2
        n = int(_np.prod(batch))
        out = _kiln.matmul(reshape(t1, (n,) + t1.shape[-2:]),
                           reshape(t2, (n,) + t2.shape[-2:]))
        return reshape(out, batch + out.shape[-2:])
    return _kiln.matmul(t1, t2)


@_eager
def dot(a, b):
    t1, t2 = as_tensor(a), as_tensor(b)
    if t1.ndim == 0 or t2.ndim == 0:
        return multiply(t1, t2)
    if t1.ndim <= 2 and t2.ndim <= 2:
        return matmul(t1, t2)
    fail("kiln.numpy.dot takes arrays of rank <= 2; use matmul or einsum "
         "for batches", ValueError)


@_eager
def vdot(a, b):
    return sum(multiply(ravel(a), ravel(b)))


@_eager
def outer(a, b):
    return multiply(reshape(a, [-1, 1]), reshape(b, [1, -1]))


@_eager
def inner(a, b):
    return sum(multiply(a, b), axis=-1)


# --- Indexing -----------------------------------------------------------------------

@_eager
def take(a, indices, axis=None):
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    index = [slice(None)] * x.ndim
    index[_normalize_axis(axis, x.ndim)] = as_tensor(indices)
    return x[tuple(index)]


def _ensure_indexing_loaded():
    from .. import _tensor  # noqa: F401  (installs Tensor's operators)


__all__ = [n for n in dir() if not n.startswith("_")]
