"""Elementwise functions: arithmetic, comparisons, logical and bitwise
operations, and the unary math functions, with numpy's rules for bools
and integers where the tracer's ops take numbers only."""

import builtins
import math

import numpy as _np

from .. import _core
from .. import _kiln
from .._control import while_loop
from .._eager import eager
from ._base import (_float_of, _is_bool_operand, _is_float, _is_int,
                    _operand, Tensor, as_tensor, bool_, dtype_of, fail,
                    float64, int32, uint32)


from ._creation import astype, full, ones_like, zeros_like
from ._reductions import any
from ._shapes import broadcast_to

__all__ = [
    "abs", "absolute", "add", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctanh", "around", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "ceil", "clip", "cos", "cosh", "divide",
    "equal", "exp", "exp2", "expm1", "floor", "floor_divide", "greater",
    "greater_equal", "invert", "isfinite", "isinf", "isnan", "left_shift",
    "less", "less_equal", "log", "log10", "log1p", "log2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod",
    "multiply", "negative", "not_equal", "positive", "power", "reciprocal",
    "remainder", "right_shift", "rint", "round", "sign", "sin", "sinh",
    "sqrt", "square", "subtract", "tan", "tanh", "true_divide", "where",
]


def _binary(name, fn):
    def apply(x1, x2):
        return fn(_operand(x1), _operand(x2))
    apply.__name__ = apply.__qualname__ = name
    op = eager(apply)
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


@eager
def logical_and(x1, x2):
    return _kiln.logical_and(_truth(x1), _truth(x2))


@eager
def logical_or(x1, x2):
    return _kiln.logical_or(_truth(x1), _truth(x2))


@eager
def logical_xor(x1, x2):
    return _kiln.not_equal(_truth(x1), _truth(x2))


@eager
def logical_not(x):
    return _kiln.logical_not(_truth(x))


def _bits(name, fn):
    """A bitwise op on bool or integer operands (numpy's promotion)."""
    @eager
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


@eager
def invert(x):
    """~x: bitwise complement (logical not on bools)."""
    return _kiln.bitwise_not(as_tensor(x))


bitwise_not = invert


@eager
def true_divide(x1, x2):
    """Division; integer operands divide as float32 (as in JAX)."""
    x1, x2 = _operand(x1), _operand(x2)
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if not _is_float(t1) and not _is_float(t2):
        return _kiln.div(_float_of(t1), _float_of(t2))
    return _kiln.div(x1 if not isinstance(x1, Tensor) else t1,
                     x2 if not isinstance(x2, Tensor) else t2)


divide = true_divide


@eager
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


@eager
def remainder(x1, x2):
    """x1 - floor(x1 / x2) * x2: the sign follows x2, as in numpy; an
    integer remainder by 0 is 0 (numpy's value)."""
    x1, x2 = _operand(x1), _operand(x2)
    result = _kiln.sub(x1, _kiln.mul(floor_divide(x1, x2), x2))
    if _core.is_float_dtype(dtype_of(result)):
        return result
    return _kiln.where(_kiln.equal(x2, 0), 0, result)


mod = remainder


@eager
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
    op = eager(apply)
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


@eager
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


@eager
def rint(x):
    return _kiln.round(_float_of(x))


square = _unary("square", lambda x: multiply(x, x))
reciprocal = _unary("reciprocal", lambda x: _kiln.div(1.0, _float_of(x)))
exp2 = _unary("exp2", lambda x: _kiln.pow(2.0, _float_of(x)))
log2 = _unary("log2", lambda x: _kiln.div(_kiln.log(x),
                                          math.log(2.0)))


log10 = _unary("log10", lambda x: _kiln.div(_kiln.log(x),
                                            math.log(10.0)))


@eager
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


@eager
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


@eager
def isfinite(x):
    x = as_tensor(x)
    if not _is_float(x):
        return full(x.shape, True, bool_)
    return _kiln.less(_kiln.abs(x), math.inf)


@eager
def isinf(x):
    x = as_tensor(x)
    if not _is_float(x):
        return full(x.shape, False, bool_)
    return _kiln.equal(_kiln.abs(x), math.inf)


@eager
def clip(a, a_min=None, a_max=None):
    x = as_tensor(a)
    a_min, a_max = _operand(a_min), _operand(a_max)
    if a_min is not None:
        x = _kiln.maximum(x, a_min)
    if a_max is not None:
        x = _kiln.minimum(x, a_max)
    return x


@eager
def where(condition, x=None, y=None):
    if x is None or y is None:
        fail("kiln.numpy.where needs x and y: the one-argument form has a "
             "data-dependent shape", TypeError)
    return _kiln.where(astype(condition, bool_), _operand(x), _operand(y))
