"""kiln.numpy: numpy's API on traced arrays (`import kiln.numpy as knp`).

Every function records kiln ops into the trace being built (inside
kiln.jit, kiln.grad, ...). The ops, numpy-style broadcasting and dtype
promotion are the C++ tracer's (docs/python.md lists the rules: they follow
JAX, so `int32 + float32` is float32 and Python numbers adopt the array's
dtype). Called outside a trace on concrete arrays, a function is compiled
and run at once (the result is a numpy array), which is correct but slow:
it is meant for trying things out, not for loops.

Arrays of the dtypes kiln traces are bool, int32, int64, uint32, float16,
bfloat16 (ml_dtypes', where installed), float32 and float64 (uint32 with
int32 computes in int64, which holds both; float16 with bfloat16 in
float32).

Where results differ from numpy's (as in JAX): float functions of
integers and integer true division give float32; sums and cumsums of
int32 stay int32 and those of bools count in int32 (numpy widens both to
int64); lists of Python numbers are float32/int32 like the numbers
themselves, while numpy scalars keep their dtype; traced index arrays
clamp out-of-range entries. Where numpy would raise or warn at run time,
values decide nothing at trace time: an integer // or % by 0 gives 0,
and an integer to a negative integer power gives the integer part of its
reciprocal.
"""

import builtins
import functools
import math

import numpy as _np

from .. import _core
from .._core import Tensor, fail, dtype_of
from .. import _kiln

float32 = _np.float32
float64 = _np.float64
int32 = _np.int32
int64 = _np.int64
uint32 = _np.uint32
float16 = _np.float16
# ml_dtypes' bfloat16 where installed (JAX's), else None.
bfloat16 = _core.BFLOAT16.type if _core.BFLOAT16 is not None else None
bool_ = _np.bool_
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
ndarray = Tensor


def _eager(fn):
    """Makes `fn` callable outside a trace, where it is compiled and run
    (the result is a numpy array): numpy arrays and scalars among the
    arguments (positional or keyword), also as the items of a list or
    tuple (concatenate's arrays), become inputs of the compiled function;
    everything else is baked in (cached per function and static values).
    Creation functions (zeros, arange, ...) take no arrays and compile
    with no inputs."""
    cache = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _kiln.is_tracing():
            return fn(*args, **kwargs)
        from .._jit import jit
        named = list(enumerate(args)) + sorted(kwargs.items())
        dynamic = tuple(k for k, a in named if _is_concrete(a))
        statics = tuple((k, _freeze(a)) for k, a in named
                        if k not in dynamic)
        key = (len(args), dynamic, statics)
        compiled = cache.get(key)
        if compiled is None:
            def apply(*arrays):
                full, kw = list(args), dict(kwargs)
                for k, array in zip(dynamic, arrays):
                    if isinstance(k, int):
                        full[k] = array
                    else:
                        kw[k] = array
                return fn(*full, **kw)
            compiled = cache[key] = jit(apply, name=fn.__name__)
        values = dict(named)
        return compiled(*(values[k] for k in dynamic))
    return wrapper


def _is_concrete(value):
    """A numpy array or scalar, or a non-empty list or tuple of them."""
    if isinstance(value, (list, tuple)):
        return bool(value) and builtins.all(
            isinstance(v, (_np.ndarray, _np.generic)) for v in value)
    return isinstance(value, (_np.ndarray, _np.generic))


def _freeze(value):
    """A hashable key for a static argument. Numbers keep their type: 2,
    2.0 and True are equal in Python but trace differently."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(_freeze(v) for v in value)
    if isinstance(value, _np.dtype) or isinstance(value, type):
        return str(value)
    return (type(value), value)


def _is_float(x):
    return _core.is_float_dtype(dtype_of(x))


def _is_int(x):
    return dtype_of(x).kind == "i"


def _is_bool_operand(x):
    if isinstance(x, Tensor):
        return dtype_of(x) == bool_
    return isinstance(x, (bool, _np.bool_)) or (
        isinstance(x, _np.ndarray) and x.dtype == bool_)


def as_tensor(a):
    """_core.as_tensor, with (nested) lists of Python numbers typed as
    Python numbers are (float32, int32 where the values fit), as in JAX:
    numpy alone would make them float64 and int64, which would then widen
    the other operand."""
    if isinstance(a, (list, tuple)) and not builtins.any(
            isinstance(e, Tensor) for e in _core._flat_items(a)):
        a = _narrow_python_values(_np.asarray(a))
    return _core.as_tensor(a)


def _operand(x):
    """An operand for the tracer's ops: lists become arrays (as_tensor's
    typing); numbers stay weakly typed Python numbers."""
    return as_tensor(x) if isinstance(x, (list, tuple)) else x


def _float_of(x):
    """x as a float tensor (integers and bools become float32)."""
    x = as_tensor(x)
    return x if _is_float(x) else _kiln.cast(x, _core.dtype_code(float32))


def _axes(axis, ndim):
    """None, or the axes as a list of ints (numpy integers included)."""
    if axis is None:
        return None
    if _np.ndim(axis) == 0:
        return [int(axis)]
    return [int(a) for a in axis]


def _distinct_axes(axis, ndim, what="axis"):
    """An int or a sequence of axes, normalized into range; repeats are a
    ValueError, as in numpy."""
    axes = [_normalize_axis(ax, ndim, what) for ax in _axes(axis, ndim)]
    if len(set(axes)) != len(axes):
        fail(f"repeated {what} in {axis}", ValueError)
    return axes


# --- Creation ----------------------------------------------------------------

@_eager
def asarray(a, dtype=None):
    """`a` as a traced array (numpy arrays and numbers become constants;
    nested lists of Python numbers are float32 or int32, see as_tensor)."""
    x = as_tensor(a)
    return astype(x, dtype) if dtype is not None else x


def _narrow_python_values(values):
    """numpy's float64/int64 for Python numbers as float32/int32."""
    if values.dtype == float64:
        return values.astype(float32)
    if values.dtype == int64 and (values.size == 0 or (
            _core.int_dtype(int(values.min())) ==
            _core.int_dtype(int(values.max())) == int32)):
        return values.astype(int32)
    return values


array = asarray


@_eager
def astype(x, dtype):
    x = as_tensor(x)
    code = _core.dtype_code(dtype)
    return x if code == x.dtype_code else _kiln.cast(x, code)


@_eager
def full(shape, fill_value, dtype=None):
    """A Python number fills with dtype (default: bool, int32 -- int64
    when it does not fit -- or float32); a traced or numpy array or a list
    is broadcast to the shape, keeping its dtype unless one is given."""
    shape = _shape(shape)
    if not isinstance(fill_value, (bool, int, float)):
        fill = asarray(fill_value)
        return broadcast_to(astype(fill, dtype) if dtype is not None
                            else fill, shape)
    if dtype is None:
        dtype = (bool_ if isinstance(fill_value, bool) else
                 float32 if isinstance(fill_value, float) else
                 _core.int_dtype(fill_value))
    return _kiln.full(shape, fill_value, _core.dtype_code(dtype))


@_eager
def zeros(shape, dtype=float32):
    return full(shape, 0, dtype)


@_eager
def ones(shape, dtype=float32):
    return full(shape, 1, dtype)


@_eager
def zeros_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 0, dtype if dtype is not None else dtype_of(x))


@_eager
def ones_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 1, dtype if dtype is not None else dtype_of(x))


@_eager
def full_like(x, fill_value, dtype=None):
    x = as_tensor(x)
    return full(x.shape, fill_value,
                dtype if dtype is not None else dtype_of(x))


@_eager
def arange(start, stop=None, step=1, dtype=None):
    """Static bounds only (the result's shape must be known)."""
    if stop is None:
        start, stop = 0, start
    values = _np.arange(start, stop, step)
    if dtype is None:
        dtype = int32 if values.dtype.kind in "iu" else float32
    return asarray(values.astype(dtype))


@_eager
def eye(n, m=None, k=0, dtype=float32):
    return asarray(_np.eye(n, m, k, dtype=dtype))


def _shape(shape):
    """A shape (an integer, numpy's included, or a sequence of them) as a
    list of ints."""
    if _np.ndim(shape) == 0:
        return [int(shape)]
    return [int(d) for d in shape]


# --- Elementwise -------------------------------------------------------------

def _binary(name, fn):
    def apply(x1, x2):
        return fn(_operand(x1), _operand(x2))
    apply.__name__ = apply.__qualname__ = name
    op = _eager(apply)
    op.__name__ = op.__qualname__ = name
    return op




def _with_bools(name, fn, bool_fn):
    """An arithmetic op that numpy also defines on two bools, where it is
    a logical one (True + True is True); the tracer's arithmetic takes
    numbers only."""
    def op(x1, x2):
        if _is_bool_operand(x1) and _is_bool_operand(x2):
            return bool_fn(x1, x2)
        return fn(x1, x2)
    return _binary(name, op)


add = _with_bools("add", _kiln.add, _kiln.logical_or)
subtract = _binary("subtract", _kiln.sub)
multiply = _with_bools("multiply", _kiln.mul, _kiln.logical_and)
maximum = _with_bools("maximum", _kiln.maximum, _kiln.logical_or)
minimum = _with_bools("minimum", _kiln.minimum, _kiln.logical_and)
equal = _binary("equal", _kiln.equal)
not_equal = _binary("not_equal", _kiln.not_equal)


def _ordered(name, fn):
    """An order comparison; bools compare as 0 and 1, as in numpy (the
    tracer orders numbers only)."""
    def compare(x1, x2):
        if _is_bool_operand(x1) and _is_bool_operand(x2):
            x1, x2 = astype(x1, int32), astype(x2, int32)
        return fn(x1, x2)
    return _binary(name, compare)


less = _ordered("less", _kiln.less)
less_equal = _ordered("less_equal", _kiln.less_equal)
greater = _ordered("greater", _kiln.greater)
greater_equal = _ordered("greater_equal", _kiln.greater_equal)


def _truth(x):
    """x's truth values (nonzero), as numpy's logical functions take them;
    Python bools stay Python bools (weakly typed)."""
    return x if isinstance(x, bool) else astype(x, bool_)


@_eager
def logical_and(x1, x2):
    return _kiln.logical_and(_truth(x1), _truth(x2))


@_eager
def logical_or(x1, x2):
    return _kiln.logical_or(_truth(x1), _truth(x2))


@_eager
def logical_xor(x1, x2):
    return _kiln.not_equal(_truth(x1), _truth(x2))


@_eager
def logical_not(x):
    return _kiln.logical_not(_truth(x))


def _bits(name, fn):
    """A bitwise op on bool or integer operands (numpy's promotion)."""
    @_eager
    def op(x1, x2):
        return fn(_operand(x1), _operand(x2))
    op.__name__ = name
    return op


bitwise_and = _bits("bitwise_and", _kiln.bitwise_and)
bitwise_or = _bits("bitwise_or", _kiln.bitwise_or)
bitwise_xor = _bits("bitwise_xor", _kiln.bitwise_xor)
left_shift = _bits("left_shift", _kiln.shift_left)


def _shift_right(x1, x2):
    """numpy's >>: zeros come in when the operands promote to uint32 (a
    uint32 array with nothing signed), copies of the sign bit otherwise."""
    dtypes = [dtype_of(as_tensor(x)) for x in (x1, x2)
              if isinstance(x, (Tensor, _np.ndarray, _np.generic))]
    if uint32 in dtypes and not builtins.any(d.kind == "i" for d in dtypes):
        return _kiln.shift_right_logical(x1, x2)
    return _kiln.shift_right_arithmetic(x1, x2)


right_shift = _bits("right_shift", _shift_right)


@_eager
def invert(x):
    """~x: bitwise complement (logical not on bools)."""
    return _kiln.bitwise_not(as_tensor(x))


bitwise_not = invert


@_eager
def sort(a, axis=-1):
    """Stable ascending sort along `axis` (axis=None sorts the flattened
    array); NaN sorts last."""
    a = as_tensor(a)
    if axis is None:
        a, axis = _kiln.reshape(a, [a.size]), 0
    return _kiln.sort(a, axis, False)[0]


@_eager
def argsort(a, axis=-1):
    """The int64 indices that sort `a` stably along `axis` (axis=None:
    of the flattened array)."""
    a = as_tensor(a)
    if axis is None:
        a, axis = _kiln.reshape(a, [a.size]), 0
    return _kiln.sort(a, axis, False)[1]


@_eager
def true_divide(x1, x2):
    """Division; integer operands divide as float32 (as in JAX)."""
    x1, x2 = _operand(x1), _operand(x2)
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if not _is_float(t1) and not _is_float(t2):
        return _kiln.div(_float_of(t1), _float_of(t2))
    return _kiln.div(x1 if not isinstance(x1, Tensor) else t1,
                     x2 if not isinstance(x2, Tensor) else t2)


divide = true_divide


@_eager
def floor_divide(x1, x2):
    """x1 // x2, rounding toward -inf as numpy does. For floats,
    floor(x1 / x2)."""
    x1, x2 = _operand(x1), _operand(x2)
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if _is_float(t1) or _is_float(t2) or isinstance(x1, float) or \
            isinstance(x2, float):
        return _kiln.floor(_kiln.div(x1, x2))
    return _integer_floor_divide(*_weakly_promoted(x1, x2))


def _weakly_promoted(x1, x2):
    """Both operands as tensors of their common dtype (a Python number
    takes the other operand's dtype)."""
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if not isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return astype(t1, dtype_of(t2)), t2
    if not isinstance(x2, Tensor) and isinstance(x1, Tensor):
        return t1, astype(t2, dtype_of(t1))
    dtype = _np.promote_types(dtype_of(t1), dtype_of(t2))
    return astype(t1, dtype), astype(t2, dtype)


def _integer_floor_divide(t1, t2):
    """Integer t1 // t2 as numpy gives it, also where the machine's
    division traps (a SIGFPE that would end the Python process): a zero
    divisor gives 0, and -1 divides by negation (MIN // -1 wraps)."""
    zero = _kiln.equal(t2, 0)
    minus_one = _kiln.equal(t2, -1)
    safe = _kiln.where(_kiln.logical_or(zero, minus_one), 1, t2)
    quotient = _kiln.div(t1, safe)          # truncates toward zero
    rest = _kiln.sub(t1, _kiln.mul(quotient, safe))
    adjust = _kiln.logical_and(
        _kiln.not_equal(rest, 0),
        _kiln.not_equal(_kiln.less(rest, 0), _kiln.less(safe, 0)))
    quotient = _kiln.sub(quotient, _kiln.cast(adjust, quotient.dtype_code))
    quotient = _kiln.where(minus_one, _kiln.neg(t1), quotient)
    return _kiln.where(zero, 0, quotient)


@_eager
def remainder(x1, x2):
    """x1 - floor(x1 / x2) * x2: the sign follows x2, as in numpy; an
    integer remainder by 0 is 0 (numpy's value)."""
    x1, x2 = _operand(x1), _operand(x2)
    result = _kiln.sub(x1, _kiln.mul(floor_divide(x1, x2), x2))
    if _core.is_float_dtype(dtype_of(result)):
        return result
    return _kiln.where(_kiln.equal(x2, 0), 0, result)


mod = remainder


@_eager
def power(x1, x2):
    """x1 ** x2. Integer operands give integers, as in numpy (the tracer's
    pow is a float op): by repeated squaring, with a negative exponent
    giving the integer part of 1 / x1**-x2 (0 unless |x1| is 1) where
    numpy raises."""
    x1, x2 = _operand(x1), _operand(x2)
    t1 = as_tensor(x1)
    static_int = isinstance(x2, int) and not isinstance(x2, bool)
    if static_int and (0 <= x2 <= 4 or x2 >= 0 and not _is_float(t1)):
        return _static_power(t1, x2)
    if isinstance(x2, float) or isinstance(x1, float):
        return _kiln.pow(x1, x2)
    t2 = as_tensor(x2)
    if _is_float(t1) or _is_float(t2):
        return _kiln.pow(x1, x2)
    dtype = (dtype_of(t2) if isinstance(x1, int) else
             dtype_of(t1) if isinstance(x2, int) else
             _np.promote_types(dtype_of(t1), dtype_of(t2)))
    if dtype == bool_:
        dtype = int32
    return _integer_power(astype(t1, dtype), astype(t2, dtype))


def _static_power(x, n):
    """x ** n for a Python integer n >= 0 by square-and-multiply: exact,
    also for integers."""
    result, square = None, x
    while n:
        if n & 1:
            result = square if result is None else _kiln.mul(result, square)
        n >>= 1
        if n:
            square = _kiln.mul(square, square)
    return ones_like(x) if result is None else result


def _integer_power(base, exponent):
    """base ** exponent for integer arrays of one dtype: square-and-multiply
    in a while loop over the exponents' bits (as many rounds as the largest
    exponent has bits)."""
    from .._control import while_loop
    shape = list(_np.broadcast_shapes(base.shape, exponent.shape))
    base, exponent = broadcast_to(base, shape), broadcast_to(exponent, shape)

    def body(state):
        result, square, rest = state
        half = _kiln.div(rest, 2)            # rest >= 0: truncation floors
        odd = _kiln.not_equal(_kiln.sub(rest, _kiln.mul(half, 2)), 0)
        return (_kiln.where(odd, _kiln.mul(result, square), result),
                _kiln.mul(square, square), half)

    result = while_loop(lambda state: any(_kiln.greater(state[2], 0)), body,
                        (ones_like(base), base, _kiln.abs(exponent)))[0]
    # Negative exponents: 1 / base**|exponent| truncated toward zero.
    unit = _kiln.equal(_kiln.abs(base), 1)
    return _kiln.where(
        _kiln.logical_or(_kiln.greater_equal(exponent, 0), unit), result,
        zeros_like(result))


def _unary(name, fn):
    def apply(x):
        return fn(_operand(x))
    apply.__name__ = apply.__qualname__ = name
    op = _eager(apply)
    op.__name__ = op.__qualname__ = name
    return op


negative = _unary("negative", lambda x: _kiln.neg(x))
positive = _unary("positive", lambda x: as_tensor(x))
abs = _unary("abs", lambda x: x if _is_bool_operand(x) else _kiln.abs(x))
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


@_eager
def round(a, decimals=0):
    """Halves round to even, as in numpy; with decimals, as numpy does it:
    round(a * 10**decimals) / 10**decimals. Integers stay integers (as in
    numpy and JAX): unchanged, or rounded to tens, hundreds, ... by a
    negative `decimals` (computed in float64)."""
    t = as_tensor(a)
    if not _is_float(t):
        if decimals >= 0:
            return t
        rounded = round(astype(t, float64), decimals)
        return astype(rounded, dtype_of(t) if _is_int(t) else int32)
    x = t
    if decimals == 0:
        return _kiln.round(x)
    scale = 10.0 ** decimals
    return _kiln.div(_kiln.round(_kiln.mul(x, scale)), scale)


around = round


@_eager
def rint(x):
    return _kiln.round(_float_of(x))
square = _unary("square", lambda x: multiply(x, x))
reciprocal = _unary("reciprocal", lambda x: _kiln.div(1.0, _float_of(x)))
exp2 = _unary("exp2", lambda x: _kiln.pow(2.0, _float_of(x)))
log2 = _unary("log2", lambda x: _kiln.div(_kiln.log(x),
                                          math.log(2.0)))
log10 = _unary("log10", lambda x: _kiln.div(_kiln.log(x),
                                            math.log(10.0)))


@_eager
def expm1(x):
    """exp(x) - 1, accurate near 0 (where exp(x) - 1 cancels every digit):
    (u - 1) * x / log(u) with u = exp(x) cancels the rounding error of u
    (Kahan's trick). Where that formula fails, u - 1 is exact or x is:
    u == 1 (expm1(x) = x), u == 0 (-1) and u == inf; there the formula
    gets harmless operands, so that its gradient, masked by the select,
    is 0 and not 0 * inf = nan."""
    x = _float_of(x)
    u = _kiln.exp(x)
    d = _kiln.sub(u, 1.0)
    one = _kiln.equal(u, 1.0)
    exact = _kiln.logical_or(_kiln.equal(u, 0.0), _kiln.equal(u, math.inf))
    special = _kiln.logical_or(one, exact)
    safe_u = _kiln.where(special, math.e, u)
    ratio = _kiln.mul(_kiln.sub(safe_u, 1.0),
                      _kiln.div(x, _kiln.log(safe_u)))
    return _kiln.where(one, x, _kiln.where(exact, d, ratio))


@_eager
def log1p(x):
    """log(1 + x), accurate near 0 (where 1 + x rounds x away):
    log(u) * x / (u - 1) with u = 1 + x corrects the rounding of u
    (Goldberg's trick). Where that formula fails: u == 1 (log1p(x) = x),
    u == 0 and u == inf (log(u) is exact); there the formula gets harmless
    operands, so that its gradient, masked by the select, is 0 and not
    0 * inf = nan."""
    x = _float_of(x)
    u = _kiln.add(x, 1.0)
    one = _kiln.equal(u, 1.0)
    exact = _kiln.logical_or(_kiln.equal(u, 0.0), _kiln.equal(u, math.inf))
    special = _kiln.logical_or(one, exact)
    safe_u = _kiln.where(special, 2.0, u)
    ratio = _kiln.mul(_kiln.log(safe_u),
                      _kiln.div(x, _kiln.sub(safe_u, 1.0)))
    safe_log = _kiln.log(_kiln.where(exact, u, 1.0))
    return _kiln.where(one, x, _kiln.where(exact, safe_log, ratio))


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
    a_min, a_max = _operand(a_min), _operand(a_max)
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
    return _kiln.where(astype(condition, bool_), _operand(x), _operand(y))


# --- Shapes ------------------------------------------------------------------

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
    source = _distinct_axes(source, x.ndim, "source axis")
    destination = _distinct_axes(destination, x.ndim, "destination axis")
    if len(source) != len(destination):
        fail(f"moveaxis: {len(source)} source axes but {len(destination)} "
             "destinations", ValueError)
    order = [i for i in range(x.ndim) if i not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return _kiln.transpose(x, order)


@_eager
def expand_dims(a, axis):
    x = as_tensor(a)
    rank = x.ndim + len(_axes(axis, x.ndim))
    axes = sorted(_distinct_axes(axis, rank))
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
        axes = _distinct_axes(axis, x.ndim)
        for ax in axes:
            if x.shape[ax] != 1:
                fail(f"cannot squeeze axis {ax} of shape {x.shape}: its "
                     "size is not 1", ValueError)
    return _kiln.reshape(x, [d for i, d in enumerate(x.shape)
                             if i not in axes])


@_eager
def concatenate(arrays, axis=0):
    tensors = [as_tensor(a) for a in arrays]
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    return _kiln.concat(tensors, axis)


@_eager
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


# --- Reductions --------------------------------------------------------------

@_eager
def sum(a, axis=None, keepdims=False, dtype=None):
    """dtype: the type to accumulate in (the input is cast first)."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    return _kiln.sum(x, _axes(axis, x.ndim), keepdims)


@_eager
def mean(a, axis=None, keepdims=False, dtype=None):
    """dtype: the type to compute in (integers otherwise give float32)."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    return _kiln.mean(x, _axes(axis, x.ndim), keepdims)


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
        if dtype_of(x) == bool_:
            x = astype(x, int32)        # the tracer orders numbers only
        if axis is None:
            # Over the flattened array; keepdims keeps every axis as 1.
            result = op(ravel(x), 0, False)
            return reshape(result, [1] * x.ndim) if keepdims else result
        axis = _normalize_axis(axis, x.ndim)
        result = op(x, axis, False)
        return expand_dims(result, axis) if keepdims else result
    reduce.__name__ = name
    return reduce


argmax = _arg_reduce("argmax", _kiln.argmax)
argmin = _arg_reduce("argmin", _kiln.argmin)


@_eager
def cumsum(a, axis=None, dtype=None):
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)            # counts, as sum counts
    if axis is None:
        x, axis = ravel(x), 0
    return _kiln.cumsum(x, axis, False, False)


def _ones_along(x, axis, count):
    shape = list(x.shape)
    shape[axis] = count
    return full(shape, 1, dtype_of(x))


@_eager
def prod(a, axis=None, keepdims=False, dtype=None):
    """Products by halving: the axis is padded with ones to a power of two,
    then its two halves are multiplied until one element is left (log2(n)
    elementwise multiplications, differentiable like any of them). The
    order of the multiplications differs from numpy's running product, so
    float results can differ in the last bits."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    if axis is None:
        result = prod(ravel(x), 0)
        return reshape(result, [1] * x.ndim) if keepdims else result
    axes = sorted({_normalize_axis(ax, x.ndim) for ax in _axes(axis, x.ndim)})
    for ax in reversed(axes):
        size = x.shape[ax]
        width = 1
        while width < size:
            width *= 2
        if width != size:
            x = concatenate([x, _ones_along(x, ax, width - size)], axis=ax)
        while x.shape[ax] > 1:
            low, high = split(x, 2, axis=ax)
            x = _kiln.mul(low, high)
        x = x if keepdims else squeeze(x, ax)
    return x


@_eager
def cumprod(a, axis=None, dtype=None):
    """Running products by doubling strides (Hillis-Steele): log2(n) steps,
    each multiplying every element by the one `stride` before it."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _normalize_axis(axis, x.ndim)
    size, stride = x.shape[axis], 1
    while stride < size:
        kept = [slice(None)] * x.ndim
        kept[axis] = slice(0, size - stride)
        shifted = concatenate([_ones_along(x, axis, stride), x[tuple(kept)]],
                              axis=axis)
        x = _kiln.mul(x, shifted)
        stride *= 2
    return x


# --- Products ----------------------------------------------------------------

@_eager
def matmul(x1, x2):
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if t1.ndim == 0 or t2.ndim == 0:
        fail("matmul: operands must have at least one dimension (use * for "
             "a scalar)", ValueError)
    if t1.ndim > 3 or t2.ndim > 3 or (
            t1.ndim == 3 and t2.ndim == 3 and t1.shape[0] != t2.shape[0]):
        # (the tracer's matmul takes one batch dimension, not broadcast)
        return _batched_matmul(t1, t2)
    return _kiln.matmul(t1, t2)


def _batched_matmul(t1, t2):
    """matmul with more than one batch dimension: the batch dimensions
    broadcast and fold into one (a vector operand first becomes a matrix,
    as numpy treats it, and its axis is dropped from the result)."""
    vector1, vector2 = t1.ndim == 1, t2.ndim == 1
    if vector1:
        t1 = reshape(t1, [1, t1.shape[0]])
    if vector2:
        t2 = reshape(t2, [t2.shape[0], 1])
    batch = tuple(_np.broadcast_shapes(t1.shape[:-2], t2.shape[:-2]))
    n = int(_np.prod(batch))
    t1 = reshape(broadcast_to(t1, batch + t1.shape[-2:]),
                 (n,) + t1.shape[-2:])
    t2 = reshape(broadcast_to(t2, batch + t2.shape[-2:]),
                 (n,) + t2.shape[-2:])
    out = _kiln.matmul(t1, t2)
    shape = batch + ((out.shape[1],) if not vector1 else ()) + \
        ((out.shape[2],) if not vector2 else ())
    return reshape(out, shape)


@_eager
def dot(a, b):
    t1, t2 = as_tensor(a), as_tensor(b)
    if t1.ndim == 0 or t2.ndim == 0:
        return multiply(t1, t2)
    if t1.ndim <= 2 and t2.ndim <= 2:
        return matmul(t1, t2)
    # numpy's N-D dot: a's last axis with b's second-to-last (b's other
    # axes all pair with each of a's), one matrix product.
    k = t1.shape[-1]
    rows = reshape(t1, [-1, k])
    columns = reshape(moveaxis(t2, -2, 0), [k, -1]) if t2.ndim >= 2 \
        else reshape(t2, [k, 1])
    rest = list(t2.shape[:-2]) + list(t2.shape[-1:]) if t2.ndim >= 2 else []
    return reshape(matmul(rows, columns), list(t1.shape[:-1]) + rest)


@_eager
def vdot(a, b):
    return sum(multiply(ravel(a), ravel(b)))


@_eager
def outer(a, b):
    return multiply(reshape(a, [-1, 1]), reshape(b, [1, -1]))


@_eager
def inner(a, b):
    """Sums over the last axes: the result's shape is a.shape[:-1] +
    b.shape[:-1] (a matrix product with b's rows)."""
    t1, t2 = as_tensor(a), as_tensor(b)
    if t1.ndim == 0 or t2.ndim == 0:
        return multiply(t1, t2)
    if t1.shape[-1] != t2.shape[-1]:
        fail(f"inner: the last axes differ ({t1.shape} and {t2.shape})",
             ValueError)
    k = t1.shape[-1]
    out = matmul(reshape(t1, [-1, k]), transpose(reshape(t2, [-1, k])))
    return reshape(out, list(t1.shape[:-1]) + list(t2.shape[:-1]))


def _distinct_letters(x, letters):
    """x with each repeated index letter reduced to its diagonal (a static
    gather of the elements whose repeated indices agree); returns the array
    and its letters, each once."""
    if len(set(letters)) == len(letters):
        return x, letters
    unique = "".join(dict.fromkeys(letters))
    sizes = {}
    for letter, size in zip(letters, x.shape):
        if sizes.setdefault(letter, size) != size:
            fail(f"einsum: index '{letter}' has sizes {sizes[letter]} and "
                 f"{size}", ValueError)
    grid = _np.indices([sizes[u] for u in unique])
    flat = _np.ravel_multi_index(
        tuple(grid[unique.index(letter)] for letter in letters), x.shape)
    return take(ravel(x), flat), unique


def _sum_letters(x, letters, keep):
    """x summed over its letters that are not in `keep`."""
    drop = tuple(i for i, c in enumerate(letters) if c not in keep)
    if not drop:
        return x, letters
    return sum(x, axis=drop), "".join(c for c in letters if c in keep)


def _einsum_pair(x, xl, y, yl, keep):
    """x (letters xl) times y (letters yl) as one batched matmul, summed
    over the letters that are not in `keep`; result letters: batch, x's
    free, y's free."""
    # A letter only one operand has and nobody needs is summed out first.
    x, xl = _sum_letters(x, xl, keep + yl)
    y, yl = _sum_letters(y, yl, keep + xl)
    batch = [c for c in xl if c in yl and c in keep]
    contract = [c for c in xl if c in yl and c not in keep]
    xfree = [c for c in xl if c not in yl]
    yfree = [c for c in yl if c not in xl]
    size = dict(zip(xl + yl, list(x.shape) + list(y.shape)))

    def volume(letters):
        return int(_np.prod([size[c] for c in letters])) if letters else 1
    x = transpose(x, [xl.index(c) for c in batch + xfree + contract])
    y = transpose(y, [yl.index(c) for c in batch + contract + yfree])
    x = reshape(x, [volume(batch), volume(xfree), volume(contract)])
    y = reshape(y, [volume(batch), volume(contract), volume(yfree)])
    letters = batch + xfree + yfree
    return (reshape(_kiln.matmul(x, y), [size[c] for c in letters]),
            "".join(letters))


def einsum(subscripts, *operands):
    """Einstein summation over one or more operands: pairs become one
    batched matmul (transposes and reshapes around it), repeated indices of
    an operand its diagonal, indices nobody keeps are summed. Explicit
    ('ij,jk->ik') and implicit ('ij,jk') outputs; no ellipsis."""
    if "..." in subscripts:
        fail("kiln.numpy.einsum does not take '...' yet; name every "
             "dimension", NotImplementedError)
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        fail(f"einsum: '{subscripts}' names {len(terms)} operands but "
             f"{len(operands)} were given", ValueError)
    if "->" not in subscripts:
        counts = {}
        for c in inputs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    arrays = []
    for term, operand in zip(terms, operands):
        x = as_tensor(operand)
        if len(term) != x.ndim:
            fail(f"einsum: '{term}' has {len(term)} indices for an operand "
                 f"of rank {x.ndim}", ValueError)
        arrays.append(_distinct_letters(x, term))
    x, letters = arrays[0]
    for k, (y, other) in enumerate(arrays[1:], 1):
        later = "".join(t for _, t in arrays[k + 1:])
        x, letters = _einsum_pair(x, letters, y, other, output + later)
    # Sum what the output drops, then order the rest as the output asks.
    x, letters = _sum_letters(x, letters, output)
    if sorted(letters) != sorted(output):
        fail(f"einsum: the output '{output}' names indices the operands "
             "do not have", ValueError)
    return transpose(x, [letters.index(c) for c in output]) \
        if letters != output else x


# --- Indexing ----------------------------------------------------------------

@_eager
def take(a, indices, axis=None):
    """numpy's take: static indices (numbers, lists, numpy arrays) index as
    numpy does (out of range is an IndexError); traced ones clamp."""
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    index = [slice(None)] * x.ndim
    index[_normalize_axis(axis, x.ndim)] = (
        indices if isinstance(indices, Tensor) else _np.asarray(indices))
    return x[tuple(index)]


# --- Building arrays from others ------------------------------------------------
# Shapes, counts and offsets are static (numpy values), as the result's shape
# depends on them; the data may be traced.

def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """Static bounds: a constant (float32 unless dtype says otherwise)."""
    return asarray(_np.linspace(start, stop, num, endpoint=endpoint,
                                dtype=dtype or float32))


@_eager
def tile(A, reps):
    x = as_tensor(A)
    reps = [int(r) for r in ((reps,) if isinstance(reps, int) else reps)]
    rank = builtins.max(x.ndim, len(reps))
    dims = [1] * (rank - x.ndim) + list(x.shape)
    reps = [1] * (rank - len(reps)) + reps
    # [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 d0, r1 d1]
    spread = [v for d in dims for v in (1, d)]
    target = [v for r, d in zip(reps, dims) for v in (r, d)]
    x = broadcast_to(reshape(x, spread), target)
    return reshape(x, [r * d for r, d in zip(reps, dims)])


@_eager
def repeat(a, repeats, axis=None):
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _normalize_axis(axis, x.ndim)
    counts = _np.asarray(repeats)
    if counts.ndim == 0:
        # Each element repeated r times: a new axis after `axis`, widened.
        r = int(counts)
        inner = list(x.shape[:axis + 1]) + [1] + list(x.shape[axis + 1:])
        wide = list(x.shape[:axis + 1]) + [r] + list(x.shape[axis + 1:])
        shape = list(x.shape)
        shape[axis] *= r
        return reshape(broadcast_to(reshape(x, inner), wide), shape)
    return take(x, _np.repeat(_np.arange(x.shape[axis]), counts), axis=axis)


def split(ary, indices_or_sections, axis=0):
    """A list of static slices along `axis`, as numpy.split."""
    x = as_tensor(ary)
    axis = _normalize_axis(axis, x.ndim)
    size = x.shape[axis]
    if isinstance(indices_or_sections, int):
        if size % indices_or_sections:
            fail(f"array of size {size} along axis {axis} does not split "
                 f"into {indices_or_sections} equal parts", ValueError)
        step = size // indices_or_sections
        bounds = list(range(step, size, step))
    else:
        bounds = [int(b) for b in indices_or_sections]
    edges = [0] + bounds + [size]
    parts = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        index = [slice(None)] * x.ndim
        index[axis] = slice(lo, hi)
        parts.append(x[tuple(index)])
    return parts


def _triangle(m, k, lower):
    x = as_tensor(m)
    if x.ndim < 2:
        fail("tril/triu need an array of rank 2 or more", ValueError)
    rows, cols = x.shape[-2:]
    mask = _np.tri(rows, cols, k, dtype=bool)
    if not lower:
        mask = ~_np.tri(rows, cols, k - 1, dtype=bool)
    return _kiln.where(mask, x, zeros_like(x))


@_eager
def tril(m, k=0):
    return _triangle(m, k, lower=True)


@_eager
def triu(m, k=0):
    return _triangle(m, k, lower=False)


@_eager
def diagonal(a, offset=0):
    """The diagonal of a matrix (rank 2), shifted by `offset`."""
    x = as_tensor(a)
    if x.ndim != 2:
        fail("kiln.numpy.diagonal takes a matrix (rank 2)", ValueError)
    rows, cols = x.shape
    positions = _np.arange(rows * cols).reshape(rows, cols).diagonal(offset)
    return take(x, positions)


@_eager
def diag(v, k=0):
    """The diagonal of a matrix, or a matrix with vector v on diagonal k."""
    x = as_tensor(v)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        fail("kiln.numpy.diag takes a vector or a matrix", ValueError)
    n = x.shape[0] + builtins.abs(int(k))
    # Element j of v lands at flat position j * (n + 1) + the offset.
    source = _np.full(n * n, -1)
    target = _np.diag(_np.arange(x.shape[0]), k).reshape(-1)
    mask = _np.diag(_np.ones(x.shape[0], bool), k).reshape(-1)
    source[mask] = target[mask]
    gathered = _kiln.gather(x, _np.maximum(source, 0))
    return reshape(_kiln.where(mask, gathered, zeros(n * n, dtype_of(x))),
                   [n, n])


@_eager
def trace(a, offset=0):
    return sum(diagonal(a, offset))


@_eager
def pad(array, pad_width, mode="constant", constant_values=0):
    """Constant padding only (numpy's default mode)."""
    if mode != "constant":
        fail(f"kiln.numpy.pad supports mode='constant', not {mode!r}",
             NotImplementedError)
    x = as_tensor(array)
    widths = _np.broadcast_to(_np.asarray(pad_width, int), (x.ndim, 2))
    for axis, (before, after) in enumerate(widths):
        if before < 0 or after < 0:
            fail("pad widths must not be negative", ValueError)
        parts = []
        for width in (before, after):
            shape = list(x.shape)
            shape[axis] = int(width)
            parts.append(full(shape, constant_values, dtype_of(x)))
        if before or after:
            x = concatenate([parts[0], x, parts[1]], axis=axis)
    return x


def _ensure_indexing_loaded():
    from .. import _tensor  # noqa: F401  (installs Tensor's operators)


# The public names, spelled out: not the modules this file imports
# (builtins, functools, math). test_numpy.py checks the list is complete.
__all__ = [
    'Tensor', 'abs', 'absolute', 'add', 'all', 'amax', 'amin', 'any',
    'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh',
    'argmax', 'argmin', 'argsort', 'around', 'array', 'as_tensor',
    'asarray', 'astype', 'bfloat16', 'bitwise_and', 'bitwise_not',
    'bitwise_or', 'bitwise_xor', 'bool_', 'broadcast_to', 'ceil', 'clip',
    'concatenate', 'cos', 'cosh', 'cumprod', 'cumsum', 'diag', 'diagonal',
    'divide', 'dot', 'dtype_of', 'e', 'einsum', 'equal', 'exp', 'exp2',
    'expand_dims', 'expm1', 'eye', 'fail', 'flip', 'float16', 'float32',
    'float64', 'floor', 'floor_divide', 'full', 'full_like', 'greater',
    'greater_equal', 'inf', 'inner', 'int32', 'int64', 'invert', 'isfinite',
    'isinf', 'isnan', 'left_shift', 'less', 'less_equal', 'linspace', 'log',
    'log10', 'log1p', 'log2', 'logical_and', 'logical_not', 'logical_or',
    'logical_xor', 'matmul', 'max', 'maximum', 'mean', 'min', 'minimum',
    'mod', 'moveaxis', 'multiply', 'nan', 'ndarray', 'negative', 'newaxis',
    'not_equal', 'ones', 'ones_like', 'outer', 'pad', 'pi', 'positive',
    'power', 'prod', 'ravel', 'reciprocal', 'remainder', 'repeat',
    'reshape', 'right_shift', 'rint', 'round', 'sign', 'sin', 'sinh',
    'sort', 'split', 'sqrt', 'square', 'squeeze', 'stack', 'std',
    'subtract', 'sum', 'swapaxes', 'take', 'tan', 'tanh', 'tile', 'trace',
    'transpose', 'tril', 'triu', 'true_divide', 'uint32', 'var', 'vdot',
    'where', 'zeros', 'zeros_like',
]
