"""kiln.numpy against numpy on random inputs.

Every function runs inside kiln.jit (traced, compiled, run) and its result
is compared with numpy's on the same inputs: values, dtype and shape. Where
kiln deliberately differs from numpy (the promotion rules of JAX, integer
true division giving float32), the tests check kiln's documented behaviour.
The eager path (kiln.numpy on numpy arrays outside a trace) has its own
tests at the end.

To keep the file fast, several checks share one jitted function where the
failure message still names the failing case.
"""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

F32, F64, I32, I64, BOOL = (np.dtype(np.float32), np.dtype(np.float64),
                            np.dtype(np.int32), np.dtype(np.int64),
                            np.dtype(np.bool_))
FLOATS = [F32, F64]
NUMBERS = [F32, F64, I32, I64]


def tol(dtype, loose=False):
    """rtol/atol for a result dtype (loose: transcendental functions)."""
    if dtype == F64:
        return dict(rtol=1e-12 if not loose else 1e-10, atol=1e-12)
    return dict(rtol=1e-5 if not loose else 1e-4, atol=1e-6 if not loose
                else 1e-5)


def make(rng, shape, dtype, low=-3.0, high=3.0, nonzero=False):
    """Random values of `dtype` and `shape` (integers in [low, high])."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        x = rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
        if nonzero:
            x = np.where(x == 0, 1, x).astype(dtype)
        return np.asarray(x, dtype)
    x = rng.uniform(low, high, size=shape).astype(dtype)
    if nonzero:
        x = np.where(np.abs(x) < 0.1, 0.5, x).astype(dtype)
    return np.asarray(x, dtype)


def check(got, want, dtype=None, what="", **tolerance):
    """got (kiln's) equals want (numpy's) in shape, dtype and values."""
    got, want = np.asarray(got), np.asarray(want)
    dtype = np.dtype(dtype) if dtype is not None else want.dtype
    assert got.shape == want.shape, \
        f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == dtype, f"{what}: dtype {got.dtype} != {dtype}"
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, want.astype(dtype), err_msg=what)
    else:
        np.testing.assert_allclose(got, want.astype(dtype), err_msg=what,
                                   **(tolerance or tol(dtype)))


def jit(fn):
    return kiln.jit(fn)


# Shape pairs that broadcast: trailing axis, both ways, scalar with array.
BROADCAST_SHAPES = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)),
                    ((2, 3), (2, 3))]


def broadcast_operands(rng, dtype, **kwargs):
    """One pair of operands per BROADCAST_SHAPES entry (the second operands
    nonzero when kwargs asks)."""
    first = [make(rng, a, dtype) for a, _ in BROADCAST_SHAPES]
    second = [make(rng, b, dtype, **kwargs) for _, b in BROADCAST_SHAPES]
    return first, second


def run_pairs(op, first, second):
    """op over every pair in one jitted function."""
    n = len(first)
    fn = jit(lambda *xs: tuple(op(xs[i], xs[n + i]) for i in range(n)))
    return fn(*first, *second)


# --- Arithmetic --------------------------------------------------------------

ARITHMETIC = {
    "add": (knp.add, np.add),
    "subtract": (knp.subtract, np.subtract),
    "multiply": (knp.multiply, np.multiply),
    "maximum": (knp.maximum, np.maximum),
    "minimum": (knp.minimum, np.minimum),
}


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
@pytest.mark.parametrize("name", ARITHMETIC)
def test_arithmetic(name, dtype, rng):
    """On two bools, add and maximum are logical or, multiply and minimum
    logical and (numpy's loops); subtract is an error."""
    if dtype == BOOL and name == "subtract":
        with pytest.raises(kiln.TraceError, match="bool"):
            jit(knp.subtract)(np.ones(2, bool), np.ones(2, bool))
        return
    kfn, nfn = ARITHMETIC[name]
    first, second = broadcast_operands(rng, dtype)
    for a, b, got in zip(first, second, run_pairs(kfn, first, second)):
        check(got, nfn(a, b), what=f"{name}{a.shape, b.shape}")


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
@pytest.mark.parametrize("name", ["divide", "true_divide"])
def test_true_divide(name, dtype, rng):
    """Integer operands divide as float32 (as in JAX), not float64."""
    first, second = broadcast_operands(rng, dtype, nonzero=True)
    results = run_pairs(getattr(knp, name), first, second)
    want_dtype = dtype if dtype.kind == "f" else F32
    for a, b, got in zip(first, second, results):
        check(got, np.true_divide(a, b), dtype=want_dtype,
              what=f"{a.shape, b.shape}")


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "mod"])
def test_floor_divide_remainder(name, dtype, rng):
    """Rounding toward -inf and the sign of the divisor, as numpy does, for
    every sign combination."""
    first, second = broadcast_operands(rng, dtype, nonzero=True,
                                       low=-7, high=7)
    first = [(a * 3).astype(dtype) for a in first]
    results = run_pairs(getattr(knp, name), first, second)
    for a, b, got in zip(first, second, results):
        check(got, getattr(np, name)(a, b), what=f"{a.shape, b.shape}",
              rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
def test_integer_division_edge_cases(dtype):
    """Division by 0 gives numpy's 0 (the machine's division would trap
    and end the process); MIN // -1 wraps as in numpy."""
    low = np.iinfo(dtype).min
    a = np.array([7, -7, 0, low, low, 5, -5], dtype)
    b = np.array([0, 0, 0, -1, 0, -1, 1], dtype)
    got = jit(lambda a, b: (a // b, a % b, knp.floor_divide(a, 0),
                            knp.remainder(a, 0), a // -1))(a, b)
    with np.errstate(all="ignore"):
        check(got[0], a // b)
        check(got[1], a % b)
        check(got[2], a // dtype.type(0))
        check(got[3], a % dtype.type(0))
        check(got[4], a // dtype.type(-1))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_power_float(dtype, rng):
    first = [make(rng, a, dtype, 0.1, 3.0) for a, _ in BROADCAST_SHAPES]
    second = [make(rng, b, dtype, -2.0, 2.0) for _, b in BROADCAST_SHAPES]
    for a, b, got in zip(first, second, run_pairs(knp.power, first, second)):
        check(got, np.power(a, b), what=f"{a.shape, b.shape}",
              **tol(dtype, loose=True))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 4, 5, 0.5, -1.0, 2.0])
def test_power_scalar_exponent(exponent, rng):
    x = make(rng, (3, 4), F32, 0.5, 2.0)
    got = jit(lambda x: (knp.power(x, exponent), x ** exponent))(x)
    for g in got:
        check(g, np.power(x, np.float32(exponent)), **tol(F32, loose=True))


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
def test_power_integer(dtype, rng):
    """Integer powers stay integers and exact, as in numpy."""
    x = make(rng, (3, 4), dtype, -5, 5)
    e = make(rng, (3, 4), dtype, 0, 6)
    got = jit(lambda x, e: (x ** 2, x ** 3, knp.power(x, e)))(x, e)
    check(got[0], x ** 2)
    check(got[1], x ** 3)
    check(got[2], np.power(x, e))


def test_integer_negative_power():
    """Documented: an integer to a negative integer power is the integer
    part of its reciprocal (numpy raises): 0 unless the base is 1 or -1."""
    x = np.array([1, -1, -1, 2, -3, 0], np.int32)
    e = np.array([-3, -3, -2, -1, -2, 3], np.int32)
    got = jit(lambda x, e: (x ** e, knp.power(x, -1), 2 ** e))(x, e)
    check(got[0], np.array([1, -1, 1, 0, 0, 0], np.int32))
    check(got[1][:3], np.array([1, -1, -1], np.int32))
    check(got[1][3:5], np.zeros(2, np.int32))
    check(got[2], np.array([0, 0, 0, 0, 0, 8], np.int32))


UNARY_EXACT = {
    "negative": (knp.negative, np.negative),
    "abs": (knp.abs, np.abs),
    "absolute": (knp.absolute, np.absolute),
    "sign": (knp.sign, np.sign),
    "square": (knp.square, np.square),
    "positive": (knp.positive, np.positive),
}


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
@pytest.mark.parametrize("name", UNARY_EXACT)
def test_unary_exact(name, dtype, rng):
    kfn, nfn = UNARY_EXACT[name]
    if dtype == BOOL and name in ("negative", "sign", "positive", "square"):
        pytest.skip("numpy has no bool loop (square's gives int8, which "
                    "kiln does not trace)")
    x = make(rng, (3, 4), dtype)
    x.flat[0] = 0
    s = make(rng, (), dtype)
    got = jit(lambda x, s: (kfn(x), kfn(s)))(x, s)
    check(got[0], nfn(x), what="(3, 4)")
    check(got[1], nfn(s), what="rank 0")


# name: (kiln, numpy, low, high) -- the input range keeps each in its domain.
TRANSCENDENTAL = {
    "exp": (knp.exp, np.exp, -3, 3),
    "log": (knp.log, np.log, 0.1, 5),
    "sqrt": (knp.sqrt, np.sqrt, 0.0, 5),
    "tanh": (knp.tanh, np.tanh, -4, 4),
    "sin": (knp.sin, np.sin, -4, 4),
    "cos": (knp.cos, np.cos, -4, 4),
    "tan": (knp.tan, np.tan, -1.2, 1.2),
    "arcsin": (knp.arcsin, np.arcsin, -0.95, 0.95),
    "arccos": (knp.arccos, np.arccos, -0.95, 0.95),
    "arctan": (knp.arctan, np.arctan, -4, 4),
    "sinh": (knp.sinh, np.sinh, -3, 3),
    "cosh": (knp.cosh, np.cosh, -3, 3),
    "arcsinh": (knp.arcsinh, np.arcsinh, -4, 4),
    "arccosh": (knp.arccosh, np.arccosh, 1.05, 5),
    "arctanh": (knp.arctanh, np.arctanh, -0.9, 0.9),
    "log1p": (knp.log1p, np.log1p, -0.9, 3),
    "expm1": (knp.expm1, np.expm1, -3, 3),
    "log2": (knp.log2, np.log2, 0.1, 5),
    "log10": (knp.log10, np.log10, 0.1, 5),
    "exp2": (knp.exp2, np.exp2, -3, 3),
    "reciprocal": (knp.reciprocal, np.reciprocal, 0.2, 3),
    "floor": (knp.floor, np.floor, -3, 3),
    "ceil": (knp.ceil, np.ceil, -3, 3),
    "round": (knp.round, np.round, -3, 3),
    "rint": (knp.rint, np.rint, -3, 3),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_unary_float(name, dtype, rng):
    kfn, nfn, low, high = TRANSCENDENTAL[name]
    x = make(rng, (3, 4), dtype, low, high)
    s = make(rng, (), dtype, low, high)
    got = jit(lambda x, s: (kfn(x), kfn(s)))(x, s)
    check(got[0], nfn(x), what="(3, 4)", **tol(dtype, loose=True))
    check(got[1], nfn(s), what="rank 0", **tol(dtype, loose=True))


def test_small_argument_accuracy():
    """log1p and expm1 exist for arguments near zero, where log(1 + x) and
    exp(x) - 1 lose every digit."""
    x = np.array([1e-7, -1e-7, 1e-10, 3e-5], np.float32)
    got = jit(lambda x: (knp.log1p(x), knp.expm1(x)))(x)
    check(got[0], np.log1p(x), rtol=1e-4, atol=0)
    check(got[1], np.expm1(x), rtol=1e-4, atol=0)


def test_log1p_expm1_special_values_and_gradients():
    """The values where the accurate formulas step aside (0, -1, overflow,
    underflow), and gradients there: finite, not nan."""
    x = np.array([0.0, 1e-10, 1e-3, 3.0, -0.5, -1.0, 100.0, np.inf],
                 np.float32)
    y = np.array([-200.0, 0.0, 1e-10, 1e-3, 3.0, 100.0, -np.inf, np.inf],
                 np.float32)
    got = jit(lambda x, y: (
        knp.log1p(x), knp.expm1(y),
        kiln.grad(lambda x: knp.sum(knp.log1p(x)))(x),
        kiln.grad(lambda y: knp.sum(knp.expm1(y)))(y)))(x, y)
    with np.errstate(divide="ignore", over="ignore"):
        check(got[0], np.log1p(x), rtol=1e-6, atol=0)
        check(got[1], np.expm1(y), rtol=1e-6, atol=0)
        check(got[2], 1 / (1 + x), rtol=1e-6, atol=0)
        check(got[3], np.exp(y), rtol=1e-6, atol=0)


def test_round_half_to_even_and_decimals(rng):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6], np.float32)
    check(jit(knp.round)(x), np.round(x))
    y = make(rng, (3, 4), F64, -100, 100)
    got = jit(lambda y: (knp.round(y, 2), knp.around(y, 1),
                         knp.round(y, -1)))(y)
    check(got[0], np.round(y, 2))
    check(got[1], np.around(y, 1))
    check(got[2], np.round(y, -1))
    i = np.array([15, 25, -35, 7, 123], np.int32)
    got = jit(lambda i: (knp.round(i), knp.round(i, -1), knp.around(i, -2),
                         knp.round(i.astype(np.int64), 1)))(i)
    check(got[0], np.round(i))
    check(got[1], np.round(i, -1))
    check(got[2], np.around(i, -2))
    check(got[3], np.round(i.astype(np.int64), 1))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "floor",
                                  "reciprocal", "log1p", "log2"])
def test_unary_float_of_integers(name):
    """Float functions of integer arrays are float32 (JAX's rule)."""
    kfn, nfn = TRANSCENDENTAL[name][:2]
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    check(jit(kfn)(x), nfn(x.astype(np.float32)), dtype=F32,
          **tol(F32, loose=True))


@pytest.mark.parametrize("dtype", FLOATS + [I32], ids=str)
def test_isnan_isfinite_isinf(dtype):
    if dtype.kind == "f":
        x = np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 3.0], dtype)
    else:
        x = np.array([0, -1, 7, 2**31 - 1], dtype)
    got = jit(lambda x: (knp.isnan(x), knp.isfinite(x), knp.isinf(x)))(x)
    check(got[0], np.isnan(x))
    check(got[1], np.isfinite(x))
    check(got[2], np.isinf(x))


# --- Comparisons and logic ---------------------------------------------------

COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater",
               "greater_equal"]


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison(name, dtype, rng):
    first, second = broadcast_operands(rng, dtype, low=-2, high=2)
    results = run_pairs(getattr(knp, name), first, second)
    for a, b, got in zip(first, second, results):
        check(got, getattr(np, name)(a, b), what=f"{a.shape, b.shape}")


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor",
                                  "bitwise_and", "bitwise_or",
                                  "bitwise_xor"])
def test_logical(name, rng):
    first, second = broadcast_operands(rng, BOOL)
    results = run_pairs(getattr(knp, name), first, second)
    for a, b, got in zip(first, second, results):
        check(got, getattr(np, name)(a, b), what=f"{a.shape, b.shape}")


def test_logical_not_invert(rng):
    x = make(rng, (3, 4), BOOL)
    got = jit(lambda x: (knp.logical_not(x), knp.invert(x), ~x))(x)
    for g in got:
        check(g, np.logical_not(x))


def test_logical_of_numbers(rng):
    """logical_* take numbers as their truth values, as numpy does."""
    a = make(rng, (3, 4), I32, -1, 1)
    b = make(rng, (3, 4), F32, -1, 1).round()
    got = jit(lambda a, b: (knp.logical_xor(a, b), knp.logical_not(a)))(a, b)
    check(got[0], np.logical_xor(a, b))
    check(got[1], np.logical_not(a))


@pytest.mark.parametrize("dtype", [I32, np.int64], ids=str)
def test_bitwise_of_integers(dtype, rng):
    a = make(rng, (3, 4), dtype, -1000, 1000)
    b = make(rng, (3, 4), dtype, 0, 9)
    got = jit(lambda a, b: (a & b, a | b, a ^ b, ~a, a << b, a >> b))(a, b)
    for g, want in zip(got, (a & b, a | b, a ^ b, ~a, a << b, a >> b)):
        check(g, want)


def test_bitwise_of_floats_is_an_error():
    with pytest.raises(kiln.TraceError,
                       match="bitwise_and needs bool or integer operands"):
        jit(lambda a, b: a & b)(np.ones(3, np.float32), np.ones(3, np.int32))
    with pytest.raises(kiln.TraceError, match="bitwise_not needs bool or"):
        jit(lambda a: ~a)(np.ones(3, np.float32))


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
def test_where(dtype, rng):
    c = make(rng, (2, 1, 3), BOOL)
    x = make(rng, (4, 1), dtype)
    y = make(rng, (3,), dtype)
    s = make(rng, (), dtype)
    got = jit(lambda c, x, y, s: (knp.where(c, x, y), knp.where(c, s, y),
                                  knp.where(c[0, 0, 0], x, s)))(c, x, y, s)
    check(got[0], np.where(c, x, y))
    check(got[1], np.where(c, s, y))
    check(got[2], np.where(c[0, 0, 0], x, s))


def test_where_numbers_and_condition_casts(rng):
    c = make(rng, (3, 4), I32, 0, 1)
    x = make(rng, (3, 4), F32)
    got = jit(lambda c, x: (knp.where(c, x, 0.0), knp.where(c > 0, 1, -1)))(
        c, x)
    check(got[0], np.where(c, x, np.float32(0)))
    check(got[1], np.where(c > 0, 1, -1).astype(np.int32))


def test_where_one_argument_is_an_error():
    with pytest.raises(TypeError, match="needs x and y"):
        jit(lambda c: knp.where(c))(np.ones(3, bool))


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
def test_clip(dtype, rng):
    x = make(rng, (3, 4), dtype, -5, 5)
    lo = make(rng, (4,), dtype, -3, 0)
    got = jit(lambda x, lo: (knp.clip(x, -2, 3), knp.clip(x, lo, 2),
                             knp.clip(x, None, 1), knp.clip(x, 0, None),
                             x.clip(-1, 1)))(x, lo)
    check(got[0], np.clip(x, -2, 3))
    check(got[1], np.clip(x, lo, 2))
    check(got[2], np.clip(x, None, 1))
    check(got[3], np.clip(x, 0, None))
    check(got[4], np.clip(x, -1, 1))


# --- Promotion (JAX's rules, documented in kiln.numpy) -----------------------

PROMOTIONS = [(I32, F32, F32), (I64, F32, F32), (F32, F64, F64),
              (I32, I64, I64), (BOOL, I32, I32), (I64, F64, F64),
              (BOOL, F32, F32)]


@pytest.mark.parametrize("a_dtype,b_dtype,want", PROMOTIONS,
                         ids=lambda d: str(d))
def test_promotion_of_arrays(a_dtype, b_dtype, want, rng):
    a = make(rng, (3, 4), a_dtype, -3, 3)
    b = make(rng, (4,), b_dtype, -3, 3)
    got = jit(lambda a, b: (knp.add(a, b), b * a, knp.maximum(a, b)))(a, b)
    check(got[0], a.astype(want) + b.astype(want), dtype=want)
    check(got[1], b.astype(want) * a.astype(want), dtype=want)
    check(got[2], np.maximum(a.astype(want), b.astype(want)), dtype=want)


def test_python_scalars_adopt_the_array_dtype(rng):
    """Python numbers are weakly typed: they never widen an array (but a
    float with an integer array gives float32)."""
    f32 = make(rng, (3,), F32)
    f64 = make(rng, (3,), F64)
    i32 = make(rng, (3,), I32)
    i64 = make(rng, (3,), I64)
    b = make(rng, (3,), BOOL)
    got = jit(lambda f32, f64, i32, i64, b: (
        f32 + 2.0, f32 * 3, f64 + 1, i32 * 2, i64 - 5, i32 * 0.5, i64 + 1.5,
        b + 1, f64 * 0.1))(f32, f64, i32, i64, b)
    check(got[0], f32 + np.float32(2.0), dtype=F32)
    check(got[1], f32 * np.float32(3), dtype=F32)
    check(got[2], f64 + 1, dtype=F64)
    check(got[3], i32 * 2, dtype=I32)
    check(got[4], i64 - 5, dtype=I64)
    check(got[5], i32.astype(F32) * np.float32(0.5), dtype=F32)
    check(got[6], i64.astype(F32) + np.float32(1.5), dtype=F32)
    check(got[7], b.astype(I32) + 1, dtype=I32)
    check(got[8], f64 * 0.1, dtype=F64)


def test_lists_are_typed_as_python_numbers(rng):
    """Lists of Python numbers are float32/int32 constants (as Python
    numbers are): they do not widen a float32 operand to float64."""
    x = make(rng, (2, 3), F32)
    got = jit(lambda x: (knp.add(x, [1.0, 2.0, 3.0]), x * [1, 2, 3],
                         x / [1, 2, 4], knp.clip(x, [0, 1, 2.5], 4.0),
                         knp.where(x > 0, [1, 2, 3], x), knp.exp([1.0]),
                         knp.power([2, 3, 4], 2), knp.sum([1.5, 2.5]),
                         knp.asarray([[1, 2], [3, 4]]),
                         knp.maximum([1, 5], 3)))(x)
    f = np.float32
    want = (x + f([1, 2, 3]), x * f([1, 2, 3]), x / f([1, 2, 4]),
            np.clip(x, f([0, 1, 2.5]), f(4)), np.where(x > 0, f([1, 2, 3]), x),
            np.exp(f([1.0])), np.int32([4, 9, 16]), f(4.0),
            np.int32([[1, 2], [3, 4]]), np.int32([3, 5]))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}", **tol(F32, loose=True))


def test_numpy_integer_axes(rng):
    x = make(rng, (2, 1, 3), F32)
    got = jit(lambda x: (knp.sum(x, axis=np.int64(0)),
                         knp.squeeze(x, np.int64(1)),
                         knp.mean(x, axis=(np.int32(0), 2)),
                         knp.flip(x, np.int64(-1)),
                         knp.argmax(x, axis=np.int32(2)),
                         knp.expand_dims(x, np.int64(0))))(x)
    want = (np.sum(x, axis=0), np.squeeze(x, 1), np.mean(x, axis=(0, 2)),
            np.flip(x, -1), np.argmax(x, axis=2), np.expand_dims(x, 0))
    for i, (g, w) in enumerate(zip(got, want)):
        if i == 4:
            np.testing.assert_array_equal(g, w)
        else:
            check(g, w, what=f"case {i}")


def test_python_integer_too_large_for_the_array():
    with pytest.raises(kiln.TraceError, match="does not fit|fit"):
        jit(lambda x: x + 2**40)(np.ones(3, np.int32))


# --- Operators on Tensor -----------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_operators(dtype, rng):
    x = make(rng, (3, 4), dtype, 1, 5)
    y = make(rng, (4,), dtype, 1, 5)
    got = jit(lambda x, y: (x + y, x - y, x * y, x // y, x % y, -x, +x,
                            abs(-x), x ** 2, x == y, x != y, x < y,
                            x <= y, x > y, x >= y))(x, y)
    want = (x + y, x - y, x * y, x // y, x % y, -x, +x, abs(-x), x ** 2,
            x == y, x != y, x < y, x <= y, x > y, x >= y)
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"operator {i}")


@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_reflected_operators(dtype, rng):
    x = make(rng, (3, 4), dtype, 1, 5)
    got = jit(lambda x: (2 + x, 2 - x, 3 * x, 7 // x, 7 % x, 2 ** x,
                         2.0 / x, 1 < x, 3 >= x))(x)
    py = lambda v: dtype.type(v)  # noqa: E731 (weak scalars: x's dtype)
    check(got[0], py(2) + x)
    check(got[1], py(2) - x)
    check(got[2], py(3) * x)
    check(got[3], py(7) // x)
    check(got[4], py(7) % x)
    check(got[5], py(2) ** x, **tol(F32, loose=True))
    check(got[6], np.float32(2.0) / x.astype(F32), dtype=F32)
    check(got[7], 1 < x)
    check(got[8], 3 >= x)


def test_true_divide_operator(rng):
    x = make(rng, (3, 4), F32, nonzero=True)
    i = make(rng, (3, 4), I32, 1, 5)
    got = jit(lambda x, i: (x / 2, 1 / x, i / 2, i / i, 3 / i, x / i))(x, i)
    check(got[0], x / np.float32(2))
    check(got[1], np.float32(1) / x)
    check(got[2], i / 2, dtype=F32)
    check(got[3], i / i, dtype=F32)
    check(got[4], 3 / i, dtype=F32)
    check(got[5], x / i.astype(F32))


def test_divmod(rng):
    x = make(rng, (3, 4), I32, -9, 9)
    y = make(rng, (4,), I32, -3, 3, nonzero=True)
    got = jit(lambda x, y: (divmod(x, y), divmod(7, y)))(x, y)
    check(got[0][0], x // y)
    check(got[0][1], x % y)
    check(got[1][0], 7 // y)
    check(got[1][1], 7 % y)


def test_matmul_operators(rng):
    a = make(rng, (3, 4), F32)
    b = make(rng, (4, 2), F32)
    got = jit(lambda a, b: (a @ b, a.T.__rmatmul__(b.T)))(a, b)
    check(got[0], a @ b)
    check(got[1], b.T @ a.T)


def test_operators_with_numpy_arrays(rng):
    """A numpy array on either side of an operator is a constant (on the
    left, numpy defers to Tensor's reflected operator); numpy scalars keep
    their dtype (they are not weakly typed like Python numbers)."""
    x = make(rng, (3, 4), F32)
    c = make(rng, (4,), F32)
    m = make(rng, (2, 3), F32)
    got = jit(lambda x: (x + c, x * c, x - c, c + x, c - x, c * x, c / x,
                         c < x, c == x, m @ x, np.float32(2) * x,
                         np.float64(2) - x, np.int32(3) + x))(x)
    want = (x + c, x * c, x - c, c + x, c - x, c * x, c / x, c < x, c == x,
            m @ x, np.float32(2) * x, np.float64(2) - x.astype(F64),
            np.float32(3) + x)
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_numpy_functions_on_traced_arrays_are_an_error():
    with pytest.raises(kiln.ConcretizationError, match="use kiln.numpy"):
        jit(lambda x: np.exp(x))(np.ones(3, np.float32))


def test_special_values():
    """nan propagates through max, min, maximum, minimum, argmax (the
    first nan), clip and sign, as in numpy; overflow gives inf."""
    x = np.array([1.0, np.nan, 3.0, -1.0], np.float32)
    y = np.array([np.nan, 2.0, 1.0, -np.inf], np.float32)
    got = jit(lambda x, y: (knp.max(x), knp.min(x), knp.maximum(x, y),
                            knp.minimum(x, y), knp.argmax(x), knp.argmin(x),
                            knp.clip(x, 0.0, 2.0), knp.sign(x),
                            knp.exp(x * 50), knp.where(x > y, x, y),
                            knp.isnan(x), knp.isinf(y)))(x, y)
    with np.errstate(over="ignore"):
        want = (np.max(x), np.min(x), np.maximum(x, y), np.minimum(x, y),
                np.argmax(x), np.argmin(x), np.clip(x, 0.0, 2.0), np.sign(x),
                np.exp(x * 50), np.where(x > y, x, y), np.isnan(x),
                np.isinf(y))
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"case {i}"
        np.testing.assert_array_equal(g, w, err_msg=f"case {i}")


def test_empty_arrays():
    z = np.zeros((0, 3), np.float32)
    got = jit(lambda z: (knp.sum(z, axis=0), z + 1, knp.mean(z, axis=1),
                         z @ np.ones((3, 2), np.float32),
                         knp.sum(z.T @ z)))(z)
    check(got[0], np.zeros(3, np.float32))
    check(got[1], z + 1)
    check(got[2], np.zeros(0, np.float32))
    check(got[3], np.zeros((0, 2), np.float32))
    check(got[4], np.float32(0))


def test_tensor_properties_and_conversions(rng):
    x = make(rng, (3, 4), F32)
    seen = {}

    def f(x):
        seen.update(shape=x.shape, ndim=x.ndim, size=x.size, dtype=x.dtype,
                    len=len(x), repr=repr(x))
        with pytest.raises(kiln.ConcretizationError, match="truth value"):
            bool(x[0, 0] > 0)
        with pytest.raises(kiln.ConcretizationError, match="float"):
            float(x[0, 0])
        with pytest.raises(kiln.ConcretizationError):
            np.asarray(x)
        return sum(row for row in x)     # iteration over axis 0

    check(jit(f)(x), x.sum(axis=0))
    assert seen == dict(shape=(3, 4), ndim=2, size=12, dtype=F32, len=3,
                        repr="kiln.Tensor(shape=(3, 4), dtype=float32)")


def test_tensor_methods(rng):
    x = make(rng, (2, 3, 4), F32)
    got = jit(lambda x: (x.T, x.reshape(6, 4), x.reshape((4, 6)),
                         x.reshape(-1), x.astype(np.int32),
                         x.transpose(), x.transpose(1, 0, 2),
                         x.transpose((2, 0, 1)), x.swapaxes(0, 2),
                         x.flatten(), x.ravel(), x.sum(), x.sum(axis=1),
                         x.mean(axis=-1), x.max(axis=0), x.min(),
                         x.argmax(axis=2), x.argmin(), x.var(axis=1),
                         x.std(), x.cumsum(axis=1), x[:1].squeeze(0),
                         (x > 0).any(axis=0), (x > 0).all(),
                         x[0].dot(x[1].T), x.round(1), round(x[0, 0]),
                         x.take([3, 0], axis=2)))(x)
    want = (x.T, x.reshape(6, 4), x.reshape((4, 6)), x.reshape(-1),
            x.astype(np.int32), x.transpose(), x.transpose(1, 0, 2),
            x.transpose((2, 0, 1)), x.swapaxes(0, 2), x.flatten(),
            x.ravel(), x.sum(), x.sum(axis=1), x.mean(axis=-1),
            x.max(axis=0), x.min(), x.argmax(axis=2).astype(np.int64),
            np.int64(x.argmin()), x.var(axis=1), x.std(), x.cumsum(axis=1),
            x[:1].squeeze(0), (x > 0).any(axis=0), (x > 0).all(),
            x[0].dot(x[1].T), x.round(1), np.round(x[0, 0]),
            x.take([3, 0], axis=2))
    for i, (g, w) in enumerate(zip(got, want)):
        if w.dtype.kind == "i":
            # argmax/argmin: an integer type (kiln's index type).
            assert np.asarray(g).dtype.kind == "i", f"method {i}"
            np.testing.assert_array_equal(g, w, err_msg=f"method {i}")
        else:
            check(g, w, what=f"method {i}", rtol=1e-5, atol=1e-5)


# --- Reductions --------------------------------------------------------------

# (axis, keepdims) variants, all run in one jitted function per case.
AXES = [(None, False), (0, False), (1, True), (-1, False), ((0, 2), False),
        ((-1, 0), True), (None, True)]

REDUCTIONS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
    "amax": np.amax, "amin": np.amin, "any": np.any, "all": np.all,
    "var": np.var, "std": np.std,
}


def reduction_cases():
    for name in REDUCTIONS:
        dtypes = [BOOL] if name in ("any", "all") else NUMBERS
        if name in ("max", "min", "sum"):
            dtypes = NUMBERS + [BOOL]
        for dtype in dtypes:
            yield name, dtype


@pytest.mark.parametrize("name,dtype", list(reduction_cases()),
                         ids=lambda v: str(v))
def test_reduction(name, dtype, rng):
    x = make(rng, (2, 3, 4), dtype, -9, 9)
    kfn, nfn = getattr(knp, name), REDUCTIONS[name]
    got = jit(lambda x: [kfn(x, axis=a, keepdims=k) for a, k in AXES])(x)
    for (axis, keepdims), g in zip(AXES, got):
        want = nfn(x, axis=axis, keepdims=keepdims)
        want_dtype = None
        if name in ("mean", "var", "std") and dtype.kind != "f":
            want_dtype = F32       # float functions of integers: float32
        if name == "sum" and dtype == BOOL:
            want_dtype = I32       # counts, in kiln's default integer
        if name == "sum" and dtype == I32:
            want_dtype = I32       # numpy would widen to int64
        check(g, want, dtype=want_dtype, what=f"axis={axis} "
              f"keepdims={keepdims}", rtol=1e-5, atol=1e-5)


def test_any_all_of_numbers(rng):
    x = make(rng, (3, 4), I32, 0, 1)
    got = jit(lambda x: (knp.any(x, axis=0), knp.all(x, axis=1),
                         knp.any(x), knp.all(x > -1)))(x)
    check(got[0], np.any(x, axis=0))
    check(got[1], np.all(x, axis=1))
    check(got[2], np.any(x))
    check(got[3], np.all(x > -1))


def test_accumulation_dtype(rng):
    x = make(rng, (3, 4), I32, -9, 9)
    b = make(rng, (3, 4), BOOL)
    got = jit(lambda x, b: (knp.sum(x, dtype=np.int64), knp.sum(
        b, axis=0, dtype=np.float32), knp.mean(x, axis=1, dtype=np.float64),
        knp.cumsum(x, axis=1, dtype=np.float32)))(x, b)
    check(got[0], np.sum(x, dtype=np.int64))
    check(got[1], np.sum(b, axis=0, dtype=np.float32))
    check(got[2], np.mean(x, axis=1, dtype=np.float64))
    check(got[3], np.cumsum(x, axis=1, dtype=np.float32))


def test_var_std_ddof(rng):
    x = make(rng, (3, 5), F32)
    got = jit(lambda x: (knp.var(x, ddof=1), knp.std(x, axis=0, ddof=1),
                         knp.var(x, axis=(0, 1), keepdims=True)))(x)
    check(got[0], np.var(x, ddof=1), rtol=1e-5, atol=1e-6)
    check(got[1], np.std(x, axis=0, ddof=1), rtol=1e-5, atol=1e-6)
    check(got[2], np.var(x, axis=(0, 1), keepdims=True), rtol=1e-5,
          atol=1e-6)


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction(name, dtype, rng):
    x = make(rng, (2, 3, 4), dtype, -3, 3)      # ties: the first wins
    variants = [(None, False), (0, False), (1, True), (-1, False),
                (None, True)]
    kfn = getattr(knp, name)
    got = jit(lambda x: [kfn(x, axis=a, keepdims=k) for a, k in variants])(x)
    for (axis, keepdims), g in zip(variants, got):
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        g = np.asarray(g)
        assert g.dtype.kind == "i"
        assert g.shape == np.shape(want), f"axis={axis} keepdims={keepdims}"
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
def test_cumsum(dtype, rng):
    x = make(rng, (2, 3, 4), dtype, -5, 5)
    got = jit(lambda x: (knp.cumsum(x), knp.cumsum(x, axis=0),
                         knp.cumsum(x, axis=1), knp.cumsum(x, axis=-1)))(x)
    want_dtype = I32 if dtype == BOOL else dtype
    for g, axis in zip(got, [None, 0, 1, -1]):
        check(g, np.cumsum(x, axis=axis).astype(want_dtype),
              dtype=want_dtype, what=f"axis={axis}", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "argmax",
                                  "cumsum", "var", "any"])
def test_reduction_bad_axis(name):
    kfn = getattr(knp, name)
    with pytest.raises((ValueError, kiln.TraceError),
                       match="axis|out of range|rank"):
        jit(lambda x: kfn(x, axis=3))(np.ones((2, 3), np.float32))


# --- Shapes ------------------------------------------------------------------

def test_reshape_and_friends(rng):
    x = make(rng, (2, 3, 4), F32)
    got = jit(lambda x: (knp.reshape(x, (6, 4)), knp.reshape(x, [4, -1]),
                         knp.reshape(x, 24), knp.ravel(x),
                         knp.transpose(x), knp.transpose(x, (1, 2, 0)),
                         knp.transpose(x, (-1, 0, 1)),
                         knp.swapaxes(x, 0, -1), knp.moveaxis(x, 0, -1),
                         knp.moveaxis(x, -1, 0),
                         knp.moveaxis(x, (0, 1), (2, 0)),
                         knp.expand_dims(x, 0), knp.expand_dims(x, -1),
                         knp.expand_dims(x, (0, 2)),
                         knp.expand_dims(x, (1, -1))))(x)
    want = (np.reshape(x, (6, 4)), np.reshape(x, [4, -1]), np.reshape(x, 24),
            np.ravel(x), np.transpose(x), np.transpose(x, (1, 2, 0)),
            np.transpose(x, (-1, 0, 1)), np.swapaxes(x, 0, -1),
            np.moveaxis(x, 0, -1), np.moveaxis(x, -1, 0),
            np.moveaxis(x, (0, 1), (2, 0)), np.expand_dims(x, 0),
            np.expand_dims(x, -1), np.expand_dims(x, (0, 2)),
            np.expand_dims(x, (1, -1)))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_squeeze(rng):
    x = make(rng, (1, 3, 1, 4, 1), I64)
    got = jit(lambda x: (knp.squeeze(x), knp.squeeze(x, 0),
                         knp.squeeze(x, -1), knp.squeeze(x, (0, 2)),
                         knp.squeeze(x[:, :1, :, :1, :])))(x)
    want = (np.squeeze(x), np.squeeze(x, 0), np.squeeze(x, -1),
            np.squeeze(x, (0, 2)), np.squeeze(x[:, :1, :, :1, :]))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_shape_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="size is not 1"):
        jit(lambda x: knp.squeeze(x, 0))(x)
    with pytest.raises(ValueError, match="out of range"):
        jit(lambda x: knp.swapaxes(x, 0, 2))(x)
    with pytest.raises(ValueError, match="out of range"):
        jit(lambda x: knp.transpose(x, (0, 5)))(x)
    with pytest.raises(ValueError, match="out of range"):
        jit(lambda x: knp.expand_dims(x, 4))(x)
    with pytest.raises(ValueError, match="out of range"):
        jit(lambda x: knp.moveaxis(x, 3, 0))(x)
    with pytest.raises((ValueError, kiln.TraceError), match="reshape|size|"
                       "element"):
        jit(lambda x: knp.reshape(x, (4, 2)))(x)
    with pytest.raises(ValueError, match="repeated axis"):
        jit(lambda x: knp.expand_dims(x, (0, 0)))(x)
    with pytest.raises(ValueError, match="repeated axis"):
        jit(lambda x: knp.squeeze(x[None, None], (1, -3)))(x)
    with pytest.raises(ValueError, match="repeated source axis"):
        jit(lambda x: knp.moveaxis(x, (0, -2), (0, 1)))(x)
    with pytest.raises(ValueError, match="source axes"):
        jit(lambda x: knp.moveaxis(x, (0, 1), 0))(x)


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
def test_concatenate_stack(dtype, rng):
    a = make(rng, (2, 3), dtype)
    b = make(rng, (2, 3), dtype)
    c = make(rng, (1, 3), dtype)
    got = jit(lambda a, b, c: (knp.concatenate([a, b, c]),
                               knp.concatenate((a, b), axis=1),
                               knp.concatenate([a, b], axis=-1),
                               knp.concatenate([a, c], axis=None),
                               knp.stack([a, b]), knp.stack([a, b], axis=1),
                               knp.stack((a, b, a), axis=-1)))(a, b, c)
    want = (np.concatenate([a, b, c]), np.concatenate((a, b), axis=1),
            np.concatenate([a, b], axis=-1),
            np.concatenate([a, c], axis=None), np.stack([a, b]),
            np.stack([a, b], axis=1), np.stack((a, b, a), axis=-1))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_concatenate_promotes(rng):
    a = make(rng, (2,), I32)
    b = make(rng, (3,), F32)
    check(jit(lambda a, b: knp.concatenate([a, b]))(a, b),
          np.concatenate([a.astype(F32), b]))


def test_broadcast_to_and_flip(rng):
    x = make(rng, (3, 1), F32)
    y = make(rng, (2, 3, 4), I32)
    got = jit(lambda x, y: (knp.broadcast_to(x, (2, 3, 5)),
                            knp.broadcast_to(x[0, 0], (4,)),
                            knp.flip(y), knp.flip(y, 0), knp.flip(y, -1),
                            knp.flip(y, (0, 2))))(x, y)
    want = (np.broadcast_to(x, (2, 3, 5)), np.broadcast_to(x[0, 0], (4,)),
            np.flip(y), np.flip(y, 0), np.flip(y, -1), np.flip(y, (0, 2)))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_broadcast_to_incompatible_is_an_error():
    with pytest.raises(kiln.TraceError):
        jit(lambda x: knp.broadcast_to(x, (3, 4)))(np.ones(3, np.float32))


def test_incompatible_broadcast_is_an_error():
    with pytest.raises(kiln.TraceError, match="broadcast"):
        jit(lambda x, y: x + y)(np.ones(3, np.float32),
                                np.ones(4, np.float32))


# --- Products ----------------------------------------------------------------

MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                 ((3, 4), (4, 2)), ((2, 3, 4), (2, 4, 5)),
                 ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                 ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 2)),
                 ((2, 1, 3, 4), (3, 4, 2)), ((2, 3, 3, 4), (4,)),
                 ((4,), (2, 2, 4, 3))]


@pytest.mark.parametrize("dtype", [F32, F64, I32], ids=str)
def test_matmul(dtype, rng):
    a = [make(rng, sa, dtype) for sa, _ in MATMUL_SHAPES]
    b = [make(rng, sb, dtype) for _, sb in MATMUL_SHAPES]
    n = len(a)
    got = jit(lambda *xs: [knp.matmul(xs[i], xs[n + i]) for i in range(n)])(
        *a, *b)
    for x, y, g in zip(a, b, got):
        check(g, np.matmul(x, y), what=f"{x.shape} @ {y.shape}",
              rtol=1e-5, atol=1e-5)


def test_matmul_errors():
    with pytest.raises(ValueError, match="at least one dimension"):
        jit(lambda x: knp.matmul(x, x[0]))(np.ones(3, np.float32))
    with pytest.raises(kiln.TraceError):
        jit(lambda x, y: x @ y)(np.ones((2, 3), np.float32),
                                np.ones((4, 2), np.float32))


def test_dot_outer_inner_vdot(rng):
    a = make(rng, (3, 4), F32)
    b = make(rng, (4, 2), F32)
    v = make(rng, (4,), F32)
    w = make(rng, (4,), F32)
    s = make(rng, (), F32)
    got = jit(lambda a, b, v, w, s: (
        knp.dot(a, b), knp.dot(v, w), knp.dot(a, v), knp.dot(s, a),
        knp.outer(v, w), knp.outer(a, v), knp.inner(v, w), knp.inner(a, v),
        knp.vdot(v, w), knp.vdot(a, a), knp.inner(a, a),
        knp.dot(a[None], b[None]), knp.dot(a.reshape(1, 3, 4), v),
        knp.dot(a, b.reshape(2, 4, 1))))(a, b, v, w, s)
    want = (np.dot(a, b), np.dot(v, w), np.dot(a, v), np.dot(s, a),
            np.outer(v, w), np.outer(a, v), np.inner(v, w), np.inner(a, v),
            np.vdot(v, w), np.vdot(a, a), np.inner(a, a),
            np.dot(a[None], b[None]), np.dot(a.reshape(1, 3, 4), v),
            np.dot(a, b.reshape(2, 4, 1)))
    for i, (g, w_) in enumerate(zip(got, want)):
        check(g, w_, what=f"case {i}", rtol=1e-5, atol=1e-5)


# --- Creation ----------------------------------------------------------------

def test_creation():
    got = jit(lambda x: (
        knp.zeros((2, 3)), knp.ones(4, np.int32), knp.zeros((2,), bool),
        knp.full((2, 2), 7), knp.full((3,), 2.5), knp.full((2,), True),
        knp.full((2,), 3, np.float64), knp.full((2, 3), x[0]),
        knp.arange(5), knp.arange(2, 8), knp.arange(1, 10, 3),
        knp.arange(0.0, 1.0, 0.25), knp.arange(5, dtype=np.float32),
        knp.arange(5, 0, -2), knp.eye(3), knp.eye(2, 3, dtype=np.int32),
        knp.eye(3, 4, k=1), knp.eye(3, k=-2, dtype=np.float64)))(
        np.float32([4.5, 0]))
    want = (np.zeros((2, 3), np.float32), np.ones(4, np.int32),
            np.zeros((2,), bool), np.full((2, 2), 7, np.int32),
            np.full((3,), 2.5, np.float32), np.full((2,), True),
            np.full((2,), 3, np.float64), np.full((2, 3), 4.5, np.float32),
            np.arange(5, dtype=np.int32), np.arange(2, 8, dtype=np.int32),
            np.arange(1, 10, 3, dtype=np.int32),
            np.arange(0.0, 1.0, 0.25, dtype=np.float32),
            np.arange(5, dtype=np.float32),
            np.arange(5, 0, -2, dtype=np.int32), np.eye(3, dtype=np.float32),
            np.eye(2, 3, dtype=np.int32), np.eye(3, 4, 1, dtype=np.float32),
            np.eye(3, k=-2))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_full_fill_values(rng):
    """numpy scalars and arrays as fill values keep their dtype; a Python
    integer too large for int32 fills int64; numpy integers as shapes."""
    x = make(rng, (2, 3), F32)
    got = jit(lambda x: (
        knp.full((2,), np.float32(1.5)), knp.full((2,), np.array(2.0)),
        knp.full_like(x, np.int64(3)), knp.full((2, 2), [1.0, 2.0]),
        knp.full((2,), 2**40), knp.full((2,), 1.5, np.int32),
        knp.zeros(np.int64(3)), knp.ones([np.int32(2), 1], np.int64),
        knp.full_like(x, x[0, 0], np.int32)))(x)
    want = (np.full((2,), np.float32(1.5)), np.full((2,), np.array(2.0)),
            np.full_like(x, np.int64(3)), np.full((2, 2), [1.0, 2.0],
                                                  np.float32),
            np.full((2,), 2**40), np.full((2,), 1.5, np.int32),
            np.zeros(3, np.float32), np.ones((2, 1), np.int64),
            np.full_like(x, x[0, 0], np.int32))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


@pytest.mark.parametrize("dtype", NUMBERS + [BOOL], ids=str)
def test_like(dtype, rng):
    x = make(rng, (2, 3), dtype)
    got = jit(lambda x: (knp.zeros_like(x), knp.ones_like(x),
                         knp.full_like(x, 1), knp.zeros_like(x, np.float32),
                         knp.full_like(x, 2, dtype=np.int64)))(x)
    want = (np.zeros_like(x), np.ones_like(x), np.full_like(x, 1),
            np.zeros_like(x, np.float32), np.full_like(x, 2, np.int64))
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, what=f"case {i}")


def test_asarray_astype(rng):
    x = make(rng, (2, 3), F32, -3, 3)
    got = jit(lambda x: (knp.asarray(x), knp.asarray(x, np.float64),
                         knp.astype(x, np.int32), knp.astype(x > 0, np.int64),
                         knp.astype(x, bool), knp.array([1.0, 2.0]),
                         knp.asarray([x[0, 0], 3.0])))(x)
    check(got[0], x)
    check(got[1], x.astype(np.float64))
    check(got[2], x.astype(np.int32))       # truncates toward zero
    check(got[3], (x > 0).astype(np.int64))
    check(got[4], x.astype(bool))
    check(got[5], np.array([1.0, 2.0], np.float32))
    check(got[6], np.array([x[0, 0], 3.0], np.float32))


def test_untraced_dtype_is_an_error():
    with pytest.raises(TypeError, match="does not trace"):
        jit(lambda x: knp.astype(x, np.int8))(np.ones(2, np.float32))


# --- take --------------------------------------------------------------------

def test_take(rng):
    x = make(rng, (3, 4), F32)
    i = np.array([2, 0, -1, 2], np.int32)
    got = jit(lambda x, i: (knp.take(x, [1, 0, 5]), knp.take(x, [2, 0], 0),
                            knp.take(x, np.array([[3], [1]]), axis=1),
                            knp.take(x, i, axis=1), knp.take(x, i[:3]),
                            knp.take(x, 2, axis=-1)))(x, i)
    check(got[0], np.take(x, [1, 0, 5]))
    check(got[1], np.take(x, [2, 0], 0))
    check(got[2], np.take(x, np.array([[3], [1]]), axis=1))
    check(got[3], np.take(x, i, axis=1))
    check(got[4], np.take(x, i[:3]))
    check(got[5], np.take(x, 2, axis=-1))


# --- The eager path ----------------------------------------------------------

def test_eager_functions_return_numpy_arrays(rng):
    """Outside a trace, kiln.numpy on numpy arrays compiles and runs."""
    x = make(rng, (3, 4), F32, 0.1, 3)
    y = make(rng, (4,), F32, 0.1, 3)
    assert not kiln.is_tracing()
    for name in ["exp", "log", "tanh", "sqrt", "negative", "abs", "square"]:
        got = getattr(knp, name)(x)
        assert isinstance(got, np.ndarray), name
        check(got, getattr(np, name)(x), what=name, **tol(F32, loose=True))
    check(knp.add(x, y), x + y)
    check(knp.add(x, 2.0), x + np.float32(2))
    check(knp.divide(x, y), x / y)
    check(knp.sum(x, axis=0), x.sum(axis=0), rtol=1e-5, atol=1e-5)
    check(knp.mean(x), np.mean(x), rtol=1e-5, atol=1e-6)
    check(knp.max(x, 1, True), x.max(1, keepdims=True))
    check(knp.where(x > 1, x, y), np.where(x > 1, x, y))
    check(knp.reshape(x, (2, 6)), x.reshape(2, 6))
    check(knp.transpose(x), x.T)
    check(knp.matmul(x, x.T), x @ x.T, rtol=1e-5, atol=1e-5)
    check(knp.clip(x, 0.5, 2.0), np.clip(x, 0.5, 2.0))
    check(knp.any(x > 2), np.any(x > 2))
    check(knp.argmax(x, axis=1), np.argmax(x, axis=1), dtype=np.int64
          if np.asarray(knp.argmax(x, axis=1)).dtype == I64 else I32)


def test_eager_caches_per_signature(rng):
    x = make(rng, (3,), F32)
    a = knp.exp(x)
    b = knp.exp(x * 2)
    check(a, np.exp(x), **tol(F32, loose=True))
    check(b, np.exp(x * 2), **tol(F32, loose=True))
    check(knp.exp(x.astype(np.float64)), np.exp(x.astype(np.float64)),
          **tol(F64, loose=True))


def test_eager_creation_and_sequences(rng):
    """Functions without array arguments, and those that take a list of
    arrays, also run outside a trace."""
    a = make(rng, (2, 3), F32)
    b = make(rng, (2, 3), F32)
    check(knp.zeros((2, 3)), np.zeros((2, 3), np.float32))
    check(knp.ones(3, np.int64), np.ones(3, np.int64))
    check(knp.full((2,), 1.5), np.full((2,), 1.5, np.float32))
    check(knp.arange(4), np.arange(4, dtype=np.int32))
    check(knp.eye(3, k=1), np.eye(3, k=1, dtype=np.float32))
    check(knp.zeros_like(a), np.zeros_like(a))
    check(knp.asarray(a), a)
    check(knp.asarray([1.0, 2.0]), np.array([1.0, 2.0], np.float32))
    check(knp.concatenate([a, b], axis=1), np.concatenate([a, b], axis=1))
    check(knp.stack((a, b, a)), np.stack((a, b, a)))
    check(knp.exp(1.0), np.exp(np.float32(1.0)), **tol(F32, loose=True))


def test_eager_keyword_arrays(rng):
    x = make(rng, (3, 4), F32)
    lo = make(rng, (4,), F32, -1, 0)
    check(knp.clip(x, a_min=lo, a_max=1.0), np.clip(x, lo, 1.0))
    check(knp.where(x > 0, x=x, y=lo), np.where(x > 0, x, lo))
    check(knp.clip(x, a_min=lo), np.clip(x, lo, None))


def test_eager_cache_keeps_scalar_types(rng):
    """2, 2.0 and np.int64(2) are equal as Python values but trace
    differently: the eager cache must not mix them up."""
    x = make(rng, (3,), I32)
    check(knp.add(x, 2), x + 2, dtype=I32)
    check(knp.add(x, 2.0), x + np.float32(2.0), dtype=F32)
    check(knp.add(x, np.int64(2)), x.astype(I64) + 2, dtype=I64)
    check(knp.add(x, True), x + 1, dtype=I32)


# --- Gradients (kiln.grad) against central differences -----------------------

GRADIENT_CASES = [name for name in TRANSCENDENTAL
                  if name not in ("floor", "ceil", "round", "rint")] + [
    "square", "abs", "negative", "sign"]


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_unary_gradient(name, rng):
    from conftest import finite_difference
    if name in TRANSCENDENTAL:
        kfn, nfn, low, high = TRANSCENDENTAL[name]
    else:
        kfn, nfn = UNARY_EXACT[name] if name in UNARY_EXACT else (
            getattr(knp, name), getattr(np, name))
        low, high = -3, 3
    x = make(rng, (6,), F64, low + 0.05 * (high - low),
             high - 0.05 * (high - low))
    got = jit(kiln.grad(lambda x: knp.sum(kfn(x))))(x)
    want = finite_difference(lambda x: np.sum(nfn(x)), [x])
    check(got, want, rtol=1e-6, atol=1e-7)


REDUCTION_GRADIENTS = {
    "sum axis 0": (lambda x: knp.sum(x, axis=0) * np.arange(4.0),
                   lambda x: np.sum(x, axis=0) * np.arange(4.0)),
    "mean": (knp.mean, np.mean),
    "var": (lambda x: knp.var(x, axis=1), lambda x: np.var(x, axis=1)),
    "std": (knp.std, np.std),
    "max": (lambda x: knp.max(x, axis=-1), lambda x: np.max(x, axis=-1)),
    "min": (knp.min, np.min),
    "cumsum": (lambda x: knp.cumsum(x, axis=1) ** 2,
               lambda x: np.cumsum(x, axis=1) ** 2),
    "matmul": (lambda x: x @ x.T, lambda x: x @ x.T),
    "power": (lambda x: knp.power(knp.abs(x) + 1, x),
              lambda x: np.power(np.abs(x) + 1, x)),
    "divide": (lambda x: x / (x ** 2 + 1), lambda x: x / (x ** 2 + 1)),
    "maximum": (lambda x: knp.maximum(x, 0.1), lambda x: np.maximum(x, 0.1)),
    "clip": (lambda x: knp.clip(x, -0.5, 0.5),
             lambda x: np.clip(x, -0.5, 0.5)),
    "where": (lambda x: knp.where(x > 0, x ** 2, -x),
              lambda x: np.where(x > 0, x ** 2, -x)),
    "indexing": (lambda x: x[::-1, np.array([0, 0, 3])] * x[1, 2],
                 lambda x: x[::-1, np.array([0, 0, 3])] * x[1, 2]),
    "at add": (lambda x: x.at[np.array([0, 0])].add(x[2]) ** 2,
               lambda x: _np_add_at(x, np.array([0, 0]), x[2]) ** 2),
    "reshape transpose": (lambda x: knp.transpose(knp.reshape(x, (2, 6))) @
                          knp.ones((2, 1), np.float64),
                          lambda x: x.reshape(2, 6).T @ np.ones((2, 1))),
}


def _np_add_at(x, index, values):
    out = x.copy()
    np.add.at(out, index, values)
    return out


@pytest.mark.parametrize("name", REDUCTION_GRADIENTS)
def test_composite_gradient(name, rng):
    from conftest import finite_difference
    kfn, nfn = REDUCTION_GRADIENTS[name]
    x = make(rng, (3, 4), F64)
    got = jit(kiln.grad(lambda x: knp.sum(kfn(x))))(x)
    want = finite_difference(lambda x: np.sum(nfn(x)), [x])
    check(got, want, rtol=1e-6, atol=1e-7)


# --- Building arrays from others ------------------------------------------------

BUILDERS = {
    "tile": (lambda m, a: m.tile(a, (2, 1, 3)), False),
    "tile_short_reps": (lambda m, a: m.tile(a, 2), False),
    "repeat": (lambda m, a: m.repeat(a, 3, axis=1), False),
    "repeat_counts": (lambda m, a: m.repeat(a, [2, 0, 1, 3], axis=-1), False),
    "repeat_flat": (lambda m, a: m.repeat(a, 2), False),
    "tril": (lambda m, a: m.tril(a), False),
    "tril_k": (lambda m, a: m.tril(a, -1), False),
    "triu_k": (lambda m, a: m.triu(a, 2), False),
    "diagonal": (lambda m, a: m.diagonal(a[0], 1), False),
    "diag_of_vector": (lambda m, a: m.diag(a[0, 0], -2), False),
    "trace": (lambda m, a: m.trace(a[1], -1), True),
    "pad": (lambda m, a: m.pad(a, ((1, 0), (0, 2), (3, 1)),
                               constant_values=7), False),
    "pad_scalar_width": (lambda m, a: m.pad(a, 1), False),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64], ids=str)
@pytest.mark.parametrize("name", BUILDERS)
def test_builders(name, dtype, rng):
    fn, reduces = BUILDERS[name]
    a = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
    got = kiln.jit(lambda a: fn(knp, a))(a)
    want = fn(np, a)
    assert got.dtype == want.dtype or reduces, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_split_and_linspace(rng):
    a = rng.standard_normal((6, 4)).astype(np.float32)
    for sections, axis in ((3, 0), ([1, 3], 1), ([2], -1)):
        got = kiln.jit(lambda a: knp.split(a, sections, axis=axis))(a)
        want = np.split(a, sections, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="equal parts"):
        kiln.jit(lambda a: knp.split(a, 4))(a)
    np.testing.assert_allclose(
        kiln.jit(lambda: knp.linspace(-1.0, 2.0, 7))(),
        np.linspace(-1.0, 2.0, 7, dtype=np.float32))
    np.testing.assert_allclose(
        kiln.jit(lambda: knp.linspace(0, 1, 4, endpoint=False))(),
        [0, 0.25, 0.5, 0.75])


def test_builders_are_differentiable(rng):
    a = rng.standard_normal((3, 4))
    w = rng.standard_normal((5, 8))
    g = kiln.grad(lambda a: knp.sum(knp.pad(knp.tile(a, (1, 2)),
                                            ((1, 1), (0, 0))) * w))(a)
    # d/da of sum(pad(tile(a)) * w): each element of a appears twice per
    # row, in the rows 1..3 of w.
    np.testing.assert_allclose(g, w[1:4, :4] + w[1:4, 4:], rtol=1e-12)
    g = kiln.grad(lambda a: knp.trace(knp.tril(a @ a.T)))(a)
    np.testing.assert_allclose(g, 2 * a, rtol=1e-12)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_prod(axis, keepdims, rng):
    a = rng.uniform(0.5, 1.5, size=(3, 5, 6)).astype(np.float32)
    got = kiln.jit(lambda a: knp.prod(a, axis=axis, keepdims=keepdims))(a)
    want = np.prod(a, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_cumprod(axis, rng):
    a = rng.uniform(0.5, 1.5, size=(7, 5)).astype(np.float32)
    np.testing.assert_allclose(
        kiln.jit(lambda a: knp.cumprod(a, axis=axis))(a),
        np.cumprod(a, axis=axis), rtol=1e-5)


def test_integer_and_empty_products(rng):
    i = rng.integers(-3, 4, size=(4, 7)).astype(np.int32)
    got = kiln.jit(lambda i: (knp.prod(i, axis=1), knp.cumprod(i, axis=1),
                              knp.prod(i[:, :0], axis=1)))(i)
    np.testing.assert_array_equal(got[0], np.prod(i, axis=1))
    np.testing.assert_array_equal(got[1], np.cumprod(i, axis=1))
    np.testing.assert_array_equal(got[2], np.ones(4))


def test_product_gradients(rng):
    x = rng.uniform(0.5, 2.0, size=(3, 4))
    g = kiln.grad(lambda x: knp.sum(knp.prod(x, axis=1)))(x)
    np.testing.assert_allclose(g, np.prod(x, axis=1, keepdims=True) / x,
                               rtol=1e-12)
    g = kiln.grad(lambda x: knp.sum(knp.cumprod(x[0])))(x)
    # d/dx_j sum_k prod_{i<=k} x_i = sum_{k>=j} prod_{i<=k} x_i / x_j
    running = np.cumprod(x[0])
    want = np.array([running[j:].sum() / x[0, j] for j in range(4)])
    np.testing.assert_allclose(g[0], want, rtol=1e-12)
    np.testing.assert_allclose(g[1:], 0)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,kj", [(3, 4), (5, 4)]),
    ("ab,b", [(3, 4), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,ikj->i", [(3, 4, 4), (3, 4, 4)]),
    ("abc,cd->", [(2, 3, 4), (4, 5)]),
    ("ab,cd->abcd", [(2, 3), (4, 1)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(equation, shapes, rng):
    operands = [rng.standard_normal(s) for s in shapes]
    got = kiln.jit(lambda *ops: knp.einsum(equation, *ops))(*operands)
    want = np.einsum(equation, *operands)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_einsum_gradient_and_errors(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    g = kiln.grad(lambda a: knp.sum(knp.einsum("ij,jk->ik", a, b) ** 2))(a)
    np.testing.assert_allclose(g, 2 * (a @ b) @ b.T, rtol=1e-10)
    with pytest.raises(ValueError, match="names 2 operands"):
        kiln.jit(lambda a: knp.einsum("ij,jk->ik", a))(a)
    with pytest.raises(ValueError, match="rank 2"):
        kiln.jit(lambda a: knp.einsum("ijk->i", a))(a)
    with pytest.raises(NotImplementedError, match=r"\.\.\."):
        kiln.jit(lambda a: knp.einsum("...j->...", a))(a)


def test_exports_are_its_public_names_and_no_module():
    import types
    public = {name for name, value in vars(knp).items()
              if not name.startswith("_")
              and not isinstance(value, types.ModuleType)}
    assert sorted(knp.__all__) == sorted(public)
    assert len(set(knp.__all__)) == len(knp.__all__)
    assert not {"builtins", "functools", "math"} & set(knp.__all__)

