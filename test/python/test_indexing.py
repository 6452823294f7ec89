"""numpy indexing (x[...]) and JAX's functional updates (x.at[...]) on
traced arrays, against numpy on the same arrays.

Static indices (numbers, slices, None, Ellipsis, lists, numpy integer
arrays and bool masks) must give exactly numpy's result. Traced integer
indices (jit arguments) follow JAX: out-of-range entries are clamped into
range. Updates compare with numpy's in-place assignment on a copy
(`set`: the last write to a repeated position wins) and with np.add.at,
np.multiply.at, np.minimum.at and np.maximum.at (repeated positions
accumulate).
"""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

SHAPE = (4, 5, 6)


def data(rng, dtype=np.float32, shape=SHAPE):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def check(got, want, exact=True):
    """Equal shapes, dtypes and values (exact=False: values to float32
    rounding, for sums whose order may differ from numpy's)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# --- Reading with static indices ---------------------------------------------

STATIC_INDICES = {
    "int": 2,
    "negative int": -1,
    "ints": (1, 2, 3),
    "negative ints": (-4, -1, -6),
    "int pair": (0, -2),
    "slice": slice(1, 3),
    "open slice": slice(None, 2),
    "slice step": slice(None, None, 2),
    "slice step 3": (slice(None), slice(1, None, 3)),
    "negative step": slice(None, None, -1),
    "negative step 2": (slice(None), slice(None), slice(5, 0, -2)),
    "negative step bounds": (slice(-1, -4, -1), slice(3, None, -2)),
    "negative slice bounds": (slice(-3, -1), slice(-10, 10)),
    "empty slice": slice(3, 1),
    "empty negative slice": (slice(None), slice(1, 3, -1)),
    "slice and int": (slice(1, 3), 2),
    "int and slice": (1, slice(None, None, -2), 4),
    "None": None,
    "None middle": (slice(None), None, 1),
    "None twice": (None, 0, None, slice(1, 3), None),
    "ellipsis": Ellipsis,
    "ellipsis int": (Ellipsis, 1),
    "int ellipsis": (2, Ellipsis),
    "ellipsis middle": (0, Ellipsis, -1),
    "ellipsis none": (Ellipsis, None),
    "int array": np.array([3, 0, 3, 1]),
    "int list": [2, 0, 1],
    "negative int array": np.array([-1, -4, 2]),
    "2-D int array": np.array([[0, 1], [3, 2], [1, 1]]),
    "int32 array": np.array([1, 2], np.int32),
    "arrays adjacent": (np.array([0, 3]), np.array([4, 1])),
    "arrays adjacent broadcast": (np.array([[0], [3]]), np.array([4, 1, 0])),
    "arrays adjacent after slice": (slice(None), np.array([0, -1]),
                                    np.array([[5], [2]])),
    "arrays separated": (np.array([0, 3]), slice(None), np.array([4, 1])),
    "arrays separated by int": (np.array([1, 2, 0]), 3, np.array([1])),
    "int and array separated": (1, slice(None), np.array([0, 2, -1])),
    "array and int adjacent": (slice(1, 3), 2, np.array([0, 5, 1])),
    "three arrays": (np.array([3, 0]), np.array([-1, 1]), np.array([5, 0])),
    "array and slice step": (np.array([2, 1]), slice(None, None, -2)),
    "array and None": (None, np.array([2, 1]), Ellipsis),
    "array after ellipsis": (Ellipsis, np.array([0, 5, -6])),
    "empty ellipsis separates arrays": (slice(1, 3), np.array([2, 0]),
                                        Ellipsis, 1),
    "None separates arrays": (np.array([0, 1]), None, np.array([1, 2])),
    "None separates int and array": (slice(None), 1, None,
                                     np.array([[2], [0]])),
    "empty array": np.array([], np.int64),
    "bool mask axis 0": np.array([True, False, True, True]),
    "bool mask 2-D": (np.arange(20).reshape(4, 5) % 3 == 0),
    "bool mask full": (np.arange(120).reshape(SHAPE) % 7 == 1),
    "bool mask after slice": (slice(None), np.array([0, 1, 1, 0, 1], bool)),
    "bool mask and array": (np.array([True, False, True, False]),
                            slice(None), np.array([0, 5])),
    "bool list": [False, True, True, False],
    "all false mask": np.zeros(4, bool),
}


@pytest.mark.parametrize("name", STATIC_INDICES)
def test_static_index(name, rng):
    index = STATIC_INDICES[name]
    x = data(rng)
    check(kiln.jit(lambda x: x[index])(x), x[index])


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_static_index_dtypes(dtype, rng):
    x = data(rng, dtype) if dtype != np.bool_ else data(rng) > 0
    got = kiln.jit(lambda x: (x[1], x[:, ::-2], x[np.array([2, 0]), -1],
                              x[..., None, 3]))(x)
    check(got[0], x[1])
    check(got[1], x[:, ::-2])
    check(got[2], x[np.array([2, 0]), -1])
    check(got[3], x[..., None, 3])


def test_index_rank_0_and_1(rng):
    s = np.float32(rng.standard_normal())
    v = data(rng, shape=(7,))
    got = kiln.jit(lambda s, v: (s[None], s[...], s[()], v[-7], v[5:1:-2],
                                 v[::-1][2], v[np.array([[6], [0]])]))(
        np.asarray(s), v)
    s = np.asarray(s)
    check(got[0], s[None])
    check(got[1], s[...])
    check(got[2], s[()])
    check(got[3], v[-7])
    check(got[4], v[5:1:-2])
    check(got[5], v[::-1][2])
    check(got[6], v[np.array([[6], [0]])])


def test_chained_indexing_and_iteration(rng):
    x = data(rng)
    got = kiln.jit(lambda x: (x[1][2][3], x[:, 1][::-1][0],
                              [row[0, 0] for row in x]))(x)
    check(got[0], x[1][2][3])
    check(got[1], x[:, 1][::-1][0])
    for g, row in zip(got[2], x):
        check(g, row[0, 0])


# --- Reading with traced indices ---------------------------------------------

def test_traced_int_index(rng):
    x = data(rng)
    f = kiln.jit(lambda x, i: (x[i], x[:, i], x[i, 1:3], x[..., i],
                               x[i, -1, i]))
    for i in [0, 3, -1, -4, np.int32(2), np.int64(-2)]:
        got = f(x, i)        # a Python int is traced as an int32 scalar
        check(got[0], x[i])
        check(got[1], x[:, i])
        check(got[2], x[i, 1:3])
        check(got[3], x[..., i])
        check(got[4], x[i, -1, i])


@pytest.mark.parametrize("dtype", [np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_traced_index_array(dtype, rng):
    x = data(rng)
    i = np.array([3, -1, 0, 2], dtype)
    j = np.array([[1], [3]], dtype)
    got = kiln.jit(lambda x, i, j: (x[i], x[:, j], x[i, j], x[j, :, i],
                                    x[i, 2], x[1, j, i], x[None, i],
                                    x[1:3, i[:2], ..., 0]))(x, i, j)
    check(got[0], x[i])
    check(got[1], x[:, j])
    check(got[2], x[i, j])
    check(got[3], x[j, :, i])
    check(got[4], x[i, 2])
    check(got[5], x[1, j, i])
    check(got[6], x[None, i])
    check(got[7], x[1:3, i[:2], ..., 0])


def test_traced_index_mixed_with_static_array(rng):
    x = data(rng)
    i = np.array([0, 3], np.int32)
    got = kiln.jit(lambda x, i: (x[i, np.array([1, 4])],
                                 x[np.array([2]), :, i]))(x, i)
    check(got[0], x[i, np.array([1, 4])])
    check(got[1], x[np.array([2]), :, i])


def test_traced_index_with_an_empty_result(rng):
    x = data(rng)
    i = np.array([1, 2], np.int32)
    got = kiln.jit(lambda x, i: (x[2:1, i], x[i, :, 3:3], x.at[2:1, i].set(
        0.0), x.at[i, 5:].add(1.0)))(x, i)
    check(got[0], x[2:1, i])
    check(got[1], x[i, :, 3:3])
    check(got[2], x)
    check(got[3], x)


def test_update_order_follows_numpy_placement(rng):
    """An Ellipsis (even one for no axes) or None between advanced indices
    puts their dimensions first: the values must line up the same way."""
    x = data(rng)
    for index in [(slice(1, 3), np.array([2, 0]), Ellipsis, 1),
                  (np.array([0, 1]), None, np.array([1, 2]))]:
        v = rng.standard_normal(x[index].shape).astype(np.float32)
        got = kiln.jit(lambda x, v: (x.at[index].set(v), x[index]))(x, v)
        check(got[0], numpy_update(x, index, v, "set"))
        check(got[1], x[index])


def test_traced_index_clamps(rng):
    """Out-of-range traced indices are clamped into range (as in JAX);
    negative ones count from the end first."""
    x = data(rng)
    f = kiln.jit(lambda x, i, a: (x[i], x[:, a]))
    got = f(x, np.int32(9), np.array([-9, 7, -1, 5], np.int32))
    check(got[0], x[3])
    check(got[1], x[:, np.array([0, 4, 4, 4])])
    got = f(x, np.int32(-20), np.array([100, -5], np.int32))
    check(got[0], x[0])
    check(got[1], x[:, np.array([4, 0])])


def test_traced_index_computed_in_the_function(rng):
    x = data(rng)
    v = data(rng, shape=(6,))
    got = kiln.jit(lambda x, v: (x[knp.argmax(v) % 4],
                                 x[:, :, knp.argmin(v)]))(x, v)
    check(got[0], x[np.argmax(v) % 4])
    check(got[1], x[:, :, np.argmin(v)])


# --- Indexing errors ---------------------------------------------------------

def test_too_many_indices():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(IndexError, match="too many indices"):
        kiln.jit(lambda x: x[0, 1, 2])(x)
    with pytest.raises(IndexError, match="too many indices"):
        kiln.jit(lambda x: x[0, ..., 1, 0])(x)


@pytest.mark.parametrize("index", [2, -3, (0, 3), (slice(None), -4),
                                   np.array([0, 2]), [5],
                                   (np.array([1]), np.array([-4]))],
                         ids=str)
def test_static_index_out_of_range(index):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(IndexError, match="out of bounds|out of range"):
        kiln.jit(lambda x: x[index])(x)


def test_bad_index_kinds():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(IndexError, match="one ellipsis"):
        kiln.jit(lambda x: x[..., 0, ...])(x)
    with pytest.raises(IndexError, match="integers or bools"):
        kiln.jit(lambda x: x[np.array([0.5])])(x)
    with pytest.raises(IndexError, match="integers"):
        kiln.jit(lambda x: x[x[0]])(x)
    with pytest.raises(IndexError, match="bool scalar"):
        kiln.jit(lambda x: x[True])(x)
    with pytest.raises(IndexError, match="boolean index did not match"):
        kiln.jit(lambda x: x[np.array([True, False, True])])(x)
    with pytest.raises(IndexError, match="boolean index did not match"):
        kiln.jit(lambda x: x[np.array([True])])(x)
    with pytest.raises(IndexError, match="boolean index did not match"):
        kiln.jit(lambda x: x[np.ones((2, 1), bool)])(x)


def test_traced_bool_mask_is_a_trace_error():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(kiln.TraceError, match="boolean masks that are "
                       "traced"):
        kiln.jit(lambda x: x[x > 0])(x)
    with pytest.raises(IndexError, match="kiln.numpy.where"):
        kiln.jit(lambda x: x[0, x[0] > 0])(x)
    with pytest.raises(kiln.TraceError, match="boolean masks"):
        kiln.jit(lambda x: x.at[x > 0].set(0.0))(x)


# --- Updates with static indices ---------------------------------------------

UFUNC_AT = {"add": np.add.at, "multiply": np.multiply.at,
            "min": np.minimum.at, "max": np.maximum.at}


def numpy_update(x, index, values, how):
    """numpy's result of x.at[index].<how>(values)."""
    out = x.copy()
    if how == "set":
        out[index] = values
    else:
        UFUNC_AT[how](out, index, values)
    return out


UPDATE_INDICES = {
    "int": (1,),
    "ints": (1, -2, 3),
    "slice": (slice(1, 3),),
    "slice step": (slice(None), slice(None, None, -2)),
    "ellipsis": (Ellipsis, 2),
    "none": (None, 0),
    "array": (np.array([3, 0]),),
    "repeated": (np.array([1, 1, 0, 1]),),
    "repeated negative": (np.array([-1, 3, 2, -1]), 2),
    "arrays": (np.array([0, 0, 2]), slice(None), np.array([1, 1, 1])),
    "mask": (np.array([True, False, True, True]),),
}


@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("name", UPDATE_INDICES)
def test_static_update(name, how, rng):
    index = UPDATE_INDICES[name]
    x = data(rng)
    shape = x[index].shape
    values = rng.standard_normal(shape).astype(np.float32)
    got = kiln.jit(lambda x, v: getattr(x.at[index], how)(v))(x, values)
    check(got, numpy_update(x, index, values, how))


def test_static_update_broadcast_values(rng):
    x = data(rng, np.int32)
    got = kiln.jit(lambda x: (x.at[1].set(7), x.at[:, 2].add(np.arange(6)),
                              x.at[np.array([0, 0])].add(1),
                              x.at[..., -1].multiply(-1),
                              x.at[2, 3].max(100), x.at[2].min(0)))(x)
    check(got[0], numpy_update(x, 1, 7, "set"))
    check(got[1], numpy_update(x, (slice(None), 2), np.arange(6), "add"))
    check(got[2], numpy_update(x, np.array([0, 0]), 1, "add"))
    check(got[3], numpy_update(x, (Ellipsis, -1), -1, "multiply"))
    check(got[4], numpy_update(x, (2, 3), 100, "max"))
    check(got[5], numpy_update(x, 2, 0, "min"))


def test_set_last_write_wins(rng):
    x = data(rng, shape=(5,))
    values = np.array([1, 2, 3, 4], np.float32)
    index = np.array([2, 0, 2, 2])
    got = kiln.jit(lambda x, v: x.at[index].set(v))(x, values)
    want = x.copy()
    want[index] = values
    assert want[2] == 4
    check(got, want)


def test_update_dtypes_and_value_casts(rng):
    """Values take the updated array's dtype."""
    x = data(rng, np.int64)
    b = data(rng) > 0
    got = kiln.jit(lambda x, b: (x.at[0, 0].set(2.7), x.at[1].add(
        np.float32(1.5)), b.at[0].set(True), b.at[:, 1].set(False)))(x, b)
    check(got[0], numpy_update(x, (0, 0), 2, "set"))
    check(got[1], numpy_update(x, 1, 1, "add"))
    check(got[2], numpy_update(b, 0, True, "set"))
    check(got[3], numpy_update(b, (slice(None), 1), False, "set"))


@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_bool_updates(how, rng):
    """Bools combine as numpy's ufuncs do (add and max: or; multiply and
    min: and), with static, traced scalar and traced array indices."""
    b = data(rng) > 0
    v = data(rng, shape=(2, 6)) > 0
    i = np.int32(2)
    a = np.array([1, 3, 1], np.int32)
    traced_array = how != "multiply"
    got = kiln.jit(lambda b, v, i, a: (
        getattr(b.at[np.array([0, 0]), 1], how)(v),
        getattr(b.at[i, 2], how)(v[0]),
        getattr(b.at[a, 0, 0], how)(True) if traced_array else b))(b, v, i, a)
    check(got[0], numpy_update(b, (np.array([0, 0]), 1), v, how))
    check(got[1], numpy_update(b, (2, 2), v[0], how))
    if traced_array:
        check(got[2], numpy_update(b, (a, 0, 0), True, how))


def test_update_with_traced_values(rng):
    x = data(rng)
    v = data(rng, shape=(6,))
    got = kiln.jit(lambda x, v: (x.at[1, 2].set(v), x.at[:, 0].add(v * 2),
                                 x.at[0].set(x[3])))(x, v)
    check(got[0], numpy_update(x, (1, 2), v, "set"))
    check(got[1], numpy_update(x, (slice(None), 0), v * 2, "add"))
    check(got[2], numpy_update(x, 0, x[3], "set"))


def test_at_get(rng):
    x = data(rng)
    i = np.int32(2)
    got = kiln.jit(lambda x, i: (x.at[1, ::2].get(), x.at[i].get(),
                                 x.at[np.array([0, 0])].get()))(x, i)
    check(got[0], x[1, ::2])
    check(got[1], x[2])
    check(got[2], x[np.array([0, 0])])


def test_empty_update_is_identity(rng):
    x = data(rng)
    got = kiln.jit(lambda x: (x.at[2:1].set(5.0),
                              x.at[np.array([], np.int64)].add(1.0)))(x)
    check(got[0], x)
    check(got[1], x)


def test_update_out_of_range_static_index():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(IndexError):
        kiln.jit(lambda x: x.at[2].set(1.0))(x)
    with pytest.raises(IndexError):
        kiln.jit(lambda x: x.at[np.array([0, 3])].add(1.0))(x)


# --- Updates with traced indices ---------------------------------------------

@pytest.mark.parametrize("how", ["set", "add", "multiply", "min", "max"])
def test_traced_int_update(how, rng):
    x = data(rng)
    v = data(rng, shape=(5, 6))
    f = kiln.jit(lambda x, i, j, v: (getattr(x.at[i], how)(v),
                                     getattr(x.at[i, :, j], how)(v[0, 0]),
                                     getattr(x.at[:, i], how)(2.0),
                                     getattr(x.at[1, i], how)(v[0])))
    for i, j in [(0, 5), (-1, -2), (2, 0)]:
        got = f(x, np.int32(i), np.int32(j), v)
        check(got[0], numpy_update(x, i, v, how))
        check(got[1], numpy_update(x, (i, slice(None), j), v[0, 0], how))
        check(got[2], numpy_update(x, (slice(None), i), 2.0, how))
        check(got[3], numpy_update(x, (1, i), v[0], how))


def test_traced_int_update_clamps(rng):
    x = data(rng)
    f = kiln.jit(lambda x, i: x.at[i].set(0.0))
    check(f(x, np.int32(17)), numpy_update(x, 3, 0.0, "set"))
    check(f(x, np.int32(-17)), numpy_update(x, 0, 0.0, "set"))


@pytest.mark.parametrize("how", ["set", "add", "min", "max"])
def test_traced_array_update(how, rng):
    """Traced index arrays, with a repeated position (4 and -1)."""
    x = data(rng, shape=(5, 3))
    i = np.array([4, 0, -1, 2], np.int32)
    v = data(rng, shape=(4, 3))
    got = kiln.jit(lambda x, i, v: (getattr(x.at[i], how)(v),
                                    getattr(x.at[i, 1], how)(v[:, 0]),
                                    getattr(x.at[1:3, i[:2]], how)(1.0)))(
        x, i, v)
    check(got[0], numpy_update(x, i, v, how), exact=how != "add")
    check(got[1], numpy_update(x, (i, 1), v[:, 0], how), exact=how != "add")
    # Traced indices clamp: 4 -> 2 (the last of 3 columns), 0 stays.
    i_clamped = np.clip(np.where(i[:2] < 0, i[:2] + 3, i[:2]), 0, 2)
    idx = (slice(1, 3), i_clamped)
    check(got[2], numpy_update(x, idx, 1.0, how))


def test_traced_array_add_accumulates_repeats(rng):
    x = data(rng, shape=(6,))
    i = np.array([1, 1, 4, 1], np.int32)
    v = np.array([1, 2, 3, 4], np.float32)
    got = kiln.jit(lambda x, i, v: x.at[i].add(v))(x, i, v)
    check(got, numpy_update(x, i, v, "add"), exact=False)


def test_traced_array_add_is_a_scatter_with_gradients(rng):
    """.at[i].add(v) with traced i is one kiln.scatter_add: integers wrap,
    and its gradient is the cotangent for x and the cotangent's rows at i
    for v (checked against numpy's np.add.at)."""
    x = data(rng, np.int32, shape=(5, 3))
    i = np.array([[4, 0], [4, 2]], np.int64)
    v = np.full((2, 2, 3), 2**31 - 1, np.int32)
    got = kiln.jit(lambda x, i, v: x.at[i].add(v))(x, i, v)
    want = x.astype(np.int64)
    np.add.at(want, i, v.astype(np.int64))
    np.testing.assert_array_equal(got, want.astype(np.int32))

    xf = rng.standard_normal((5, 3))
    vf = rng.standard_normal((2, 2, 3))

    def loss(x, v, i):
        return knp.sum(knp.sin(x.at[i].add(v)))

    dx, dv = kiln.jit(kiln.grad(loss, argnums=(0, 1)))(xf, vf, i)
    y = xf.copy()
    np.add.at(y, i, vf)
    np.testing.assert_allclose(dx, np.cos(y), rtol=1e-12)
    np.testing.assert_allclose(dv, np.cos(y)[i], rtol=1e-12)


@pytest.mark.parametrize("how", ["set", "min", "max"])
def test_traced_array_update_integers(how, rng):
    x = data(rng, np.int32, shape=(3, 4))
    i = np.array([2, 0, 2], np.int64)
    v = data(rng, np.int32, shape=(3, 4))
    got = kiln.jit(lambda x, i, v: getattr(x.at[i], how)(v))(x, i, v)
    check(got, numpy_update(x, i, v, how))


def test_traced_array_update_unsupported():
    x = np.zeros((4, 3), np.float32)
    i = np.array([0, 1], np.int32)
    with pytest.raises(NotImplementedError, match="set, add, min and max"):
        kiln.jit(lambda x, i: x.at[i].multiply(2.0))(x, i)


@pytest.mark.parametrize("how", ["set", "add", "min", "max"])
def test_traced_int_with_partial_slice_update(how, rng):
    """A traced integer beside a partial slice or a static array (the
    compared form, not the slab mask)."""
    x = data(rng)
    v = data(rng, shape=(2, 6))
    f = kiln.jit(lambda x, i, v: (getattr(x.at[i, 1:3], how)(v),
                                  getattr(x.at[i, np.array([0, 4])], how)(v),
                                  getattr(x.at[np.int64(1), i, ::2], how)(
                                      v[0, :3])))
    for i in [1, -1]:
        got = f(x, np.int64(i), v)
        check(got[0], numpy_update(x, (i, slice(1, 3)), v, how),
              exact=how != "add")
        check(got[1], numpy_update(x, (i, np.array([0, 4])), v, how),
              exact=how != "add")
        check(got[2], numpy_update(x, (1, i, slice(None, None, 2)), v[0, :3],
                                   how), exact=how != "add")


def test_numpy_integer_scalars_index(rng):
    x = data(rng)
    got = kiln.jit(lambda x: (x[np.int64(2)], x[np.int32(-1), np.uint8(3)],
                              x[np.array(1)]))(x)
    check(got[0], x[np.int64(2)])
    check(got[1], x[np.int32(-1), np.uint8(3)])
    check(got[2], x[np.array(1)])


# --- Random indices ----------------------------------------------------------

def random_entry(rng, size, allow_array=True):
    kind = rng.integers(0, 4 if allow_array else 3)
    if kind == 0:
        return int(rng.integers(-size, size))
    if kind in (1, 2):
        def bound():
            return None if rng.random() < 0.3 else int(
                rng.integers(-size - 2, size + 2))
        step = int(rng.choice([-3, -2, -1, 1, 1, 2, 3]))
        return slice(bound(), bound(), None if step == 1 and
                     rng.random() < 0.5 else step)
    return rng.integers(-size, size, size=int(rng.integers(1, 4)))


def random_index(rng, shape):
    """A random mix of ints, slices (any bounds and steps), None, one
    Ellipsis and integer arrays (broadcastable: all 1-D of one length)."""
    entries, length = [], None
    dims = list(shape)
    use_ellipsis = rng.random() < 0.3
    cut = int(rng.integers(0, len(dims) + 1))
    for i, size in enumerate(dims[:cut] if use_ellipsis else dims):
        if rng.random() < 0.2:
            entries.append(None)
        entry = random_entry(rng, size)
        if isinstance(entry, np.ndarray):
            if length is None:
                length = entry.size
            entry = np.resize(entry, length)
        entries.append(entry)
    if use_ellipsis:
        entries.append(Ellipsis)
        entries += [random_entry(rng, s, allow_array=False)
                    for s in dims[cut:][len(dims) - cut - 1:]
                    if rng.random() < 0.5]
    return tuple(entries)


def test_random_static_indices(rng):
    x = data(rng)
    indices = [random_index(rng, SHAPE) for _ in range(60)]
    got = kiln.jit(lambda x: [x[index] for index in indices])(x)
    for index, g in zip(indices, got):
        want = x[index]
        assert np.shape(g) == want.shape, f"x[{index!r}]"
        np.testing.assert_array_equal(g, want, err_msg=f"x[{index!r}]")


def test_random_static_updates(rng):
    x = data(rng)
    indices = [random_index(rng, SHAPE) for _ in range(30)]
    values = [rng.standard_normal(x[index].shape).astype(np.float32)
              for index in indices]
    got = kiln.jit(lambda x, vs: [x.at[index].add(v) for index, v in
                                  zip(indices, vs)])(x, values)
    for index, v, g in zip(indices, values, got):
        check(g, numpy_update(x, index, v, "add"), exact=False)


def test_random_traced_indices(rng):
    """Random indices whose integer arrays (and some integers) are jit
    arguments: reading, .at[].add and .at[].set (in range, so clamping
    does not apply)."""
    x = data(rng)
    indices = [random_index(rng, SHAPE) for _ in range(12)]
    templates, arguments = [], []
    for index in indices:
        template = []
        for entry in index:
            if isinstance(entry, np.ndarray) or (
                    isinstance(entry, int) and rng.random() < 0.5):
                template.append(len(arguments))
                arguments.append(np.asarray(entry, np.int32))
            else:
                template.append(("static", entry))
        templates.append(template)

    def f(x, args):
        out = []
        for template in templates:
            index = tuple(args[t] if isinstance(t, int) else t[1]
                          for t in template)
            out.append((x[index], x.at[index].add(1.0),
                        x.at[index].set(-7.0)))
        return out

    got = kiln.jit(f)(x, arguments)
    for index, (read, added, assigned) in zip(indices, got):
        check(read, x[index])
        check(added, numpy_update(x, index, np.float32(1), "add"),
              exact=False)
        check(assigned, numpy_update(x, index, np.float32(-7), "set"))


def test_gradients_through_traced_indices(rng):
    """kiln.grad through reads and updates at traced indices, with a
    repeated position (1): a read sums its cotangents, `set` passes the
    gradient to the last write only."""
    x = data(rng, np.float64, shape=(4, 3))
    v = data(rng, np.float64, shape=(3, 3))
    w = data(rng, np.float64, shape=(4, 3))
    i = np.array([1, 3, 1], np.int32)
    # (traced values reach the differentiated functions as arguments:
    # kiln.grad does not take tensors of the enclosing trace by closure)
    got = kiln.jit(lambda x, v, i: (
        kiln.grad(lambda v, x, i: knp.sum(x.at[i].set(v) * w))(v, x, i),
        kiln.grad(lambda x, i: knp.sum(x[i] * w[:3]))(x, i),
        kiln.grad(lambda x, v, i: knp.sum(x.at[i].add(v) ** 2))(x, v, i),
        kiln.grad(lambda x, i: knp.sum(x.at[i[0]].set(0.0) * w))(x, i)))(
        x, v, i)
    check(got[0], np.stack([np.zeros(3), w[3], w[1]]))
    want = np.zeros_like(x)
    np.add.at(want, i, w[:3])
    check(got[1], want)
    check(got[2], 2 * numpy_update(x, i, v, "add"), exact=False)
    want = w.copy()
    want[1] = 0
    check(got[3], want)
