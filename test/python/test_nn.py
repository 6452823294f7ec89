"""kiln.nn against numpy references written here (no scipy): activations,
softmax and friends, one_hot and layer_norm, traced and eager."""

import math

import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.numpy as knp

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def tol(dtype):
    return (dict(rtol=1e-5, atol=1e-6) if dtype == F32 else
            dict(rtol=1e-11, atol=1e-12))


def check(got, want, dtype, **tolerance):
    got = np.asarray(got)
    assert got.shape == np.shape(want), \
        f"shape {got.shape} != {np.shape(want)}"
    assert got.dtype == dtype, f"dtype {got.dtype} != {dtype}"
    np.testing.assert_allclose(got, np.asarray(want, np.float64).astype(dtype),
                               **(tolerance or tol(dtype)))


# --- References, in float64 --------------------------------------------------

def ref_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def ref_softplus(x):
    return np.logaddexp(0.0, x)


def ref_gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                      (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def ref_logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


def ref_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x, axis=-1):
    return x - ref_logsumexp(x, axis=axis, keepdims=True)


def ref_layer_norm(x, gamma, beta, eps=1e-5, axis=-1):
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (nn.sigmoid, ref_sigmoid),
    "softplus": (nn.softplus, ref_softplus),
    "silu": (nn.silu, lambda x: x * ref_sigmoid(x)),
    "swish": (nn.swish, lambda x: x * ref_sigmoid(x)),
    "gelu tanh": (lambda x: nn.gelu(x), lambda x: ref_gelu(x, True)),
    "gelu tanh explicit": (lambda x: nn.gelu(x, approximate=True),
                           lambda x: ref_gelu(x, True)),
    "gelu erf": (lambda x: nn.gelu(x, approximate=False),
                 lambda x: ref_gelu(x, False)),
}


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation(name, dtype, rng):
    kfn, ref = ACTIVATIONS[name]
    x = (rng.standard_normal((3, 5)) * 4).astype(dtype)
    x[0, :3] = [0.0, -30.0, 30.0]       # saturation, and 0 for relu
    s = np.asarray(dtype.type(-0.7))
    got = kiln.jit(lambda x, s: (kfn(x), kfn(s)))(x, s)
    loose = dict(rtol=2e-5, atol=2e-6) if dtype == F32 else \
        dict(rtol=1e-9, atol=1e-12)
    check(got[0], ref(x.astype(np.float64)), dtype, **loose)
    check(got[1], ref(s.astype(np.float64)), dtype, **loose)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "softplus", "silu",
                                  "gelu erf"])
def test_activation_of_integers(name):
    """relu keeps integers; the others compute in float32 (JAX's rule for
    float functions of integers)."""
    kfn, ref = ACTIVATIONS[name]
    x = np.array([[-3, -1, 0], [1, 2, 5]], np.int32)
    got = kiln.jit(kfn)(x)
    dtype = np.dtype(np.int32) if name == "relu" else F32
    check(got, ref(x.astype(np.float64)), dtype, rtol=2e-5, atol=2e-6)


def test_softplus_large_arguments():
    """log(1 + exp(x)) would overflow for large x and lose everything for
    very negative x."""
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0, 1000.0], np.float32)
    # atol: softplus(-100) = 3.8e-44 is subnormal (it may flush to 0).
    check(kiln.jit(nn.softplus)(x), ref_softplus(x.astype(np.float64)), F32,
          rtol=1e-5, atol=1e-37)


# --- softmax, log_softmax, logsumexp -----------------------------------------

@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_softmax_log_softmax(dtype, rng):
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(dtype)
    axes = [-1, 0, 1, 2]
    got = kiln.jit(lambda x: ([nn.softmax(x, axis=a) for a in axes],
                              [nn.log_softmax(x, axis=a) for a in axes],
                              nn.softmax(x), nn.log_softmax(x)))(x)
    x64 = x.astype(np.float64)
    for a, g in zip(axes, got[0]):
        check(g, ref_softmax(x64, a), dtype)
    for a, g in zip(axes, got[1]):
        check(g, ref_log_softmax(x64, a), dtype, **(
            dict(rtol=1e-5, atol=1e-5) if dtype == F32 else {}))
    check(got[2], ref_softmax(x64), dtype)
    check(got[3], ref_log_softmax(x64), dtype, **(
        dict(rtol=1e-5, atol=1e-5) if dtype == F32 else {}))


def test_softmax_is_stable():
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]], np.float32)
    got = kiln.jit(lambda x: (nn.softmax(x), nn.log_softmax(x),
                              nn.logsumexp(x, axis=1)))(x)
    x64 = x.astype(np.float64)
    assert np.all(np.isfinite(got[0])) and np.all(np.isfinite(got[2]))
    check(got[0], ref_softmax(x64), F32)
    check(got[1], ref_log_softmax(x64), F32, rtol=1e-5, atol=1e-3)
    check(got[2], ref_logsumexp(x64, axis=1), F32)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_logsumexp(dtype, rng):
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(dtype)
    variants = [(None, False), (None, True), (0, False), (-1, True),
                ((0, 2), False), ((1, -1), True)]
    got = kiln.jit(lambda x: [nn.logsumexp(x, axis=a, keepdims=k)
                              for a, k in variants])(x)
    for (axis, keepdims), g in zip(variants, got):
        want = ref_logsumexp(x.astype(np.float64), axis, keepdims)
        check(g, want, dtype)


def test_logsumexp_infinities():
    x = np.array([[-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 1.0],
                  [np.inf, 0.0, 1.0]], np.float32)
    got = kiln.jit(lambda x: nn.logsumexp(x, axis=1))(x)
    want = np.array([-np.inf, np.logaddexp(0.0, 1.0), np.inf], np.float32)
    check(got, want, F32)


def test_logsumexp_of_integers():
    x = np.array([[1, 2, 3], [0, -1, 4]], np.int32)
    check(kiln.jit(lambda x: nn.logsumexp(x, axis=1))(x),
          ref_logsumexp(x.astype(np.float64), 1), F32)


UNIT_AXIS_SOFTMAX = """
import numpy as np, kiln, kiln.nn as nn
x = np.array([[0.5, -1.0, 2.0]], np.float32)
got = kiln.jit(lambda x: (nn.softmax(x, axis=0), nn.log_softmax(x, axis=0),
                          nn.softmax(x.T), nn.logsumexp(x, axis=0),
                          nn.layer_norm(x, 1.0, 0.0, axis=0)))(x)
np.testing.assert_allclose(got[0], np.ones((1, 3)), rtol=1e-6)
np.testing.assert_allclose(got[1], np.zeros((1, 3)), atol=1e-6)
np.testing.assert_allclose(got[2], np.ones((3, 1)), rtol=1e-6)
np.testing.assert_allclose(got[3], x[0], rtol=1e-6)
np.testing.assert_allclose(got[4], np.zeros((1, 3)), atol=1e-6)
"""


def test_normalizers_over_a_unit_axis():
    """Softmax over an axis of size 1 is 1, log_softmax 0, logsumexp the
    value, layer_norm 0. Run in a subprocess with a timeout: the
    compilation used to hang (kiln-fuse-linalg-groups re-expanded a
    reduction over the size-1 axis forever)."""
    import subprocess
    import sys
    try:
        subprocess.run([sys.executable, "-c", UNIT_AXIS_SOFTMAX], check=True,
                       timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("compiling softmax over a size-1 axis did not finish "
                    "within 10 s")


def test_softmax_bad_axis():
    with pytest.raises((ValueError, kiln.TraceError), match="axis"):
        kiln.jit(lambda x: nn.softmax(x, axis=2))(np.ones((2, 3), np.float32))


# --- one_hot and layer_norm --------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_one_hot(dtype, rng):
    x = rng.integers(0, 5, size=(2, 3)).astype(dtype)
    x[0, 0] = 7         # out of range: all zeros, as in JAX
    got = kiln.jit(lambda x: (nn.one_hot(x, 5), nn.one_hot(x[0], 6,
                                                           dtype=np.int32),
                              nn.one_hot(x[1, 1], 5, np.bool_)))(x)
    eye = np.eye(8, dtype=np.float32)
    want = eye[x][..., :5]
    check(got[0], want, F32)
    check(got[1], np.eye(8, dtype=np.int32)[x[0]][..., :6], np.int32)
    check(got[2], np.eye(5, dtype=bool)[x[1, 1]], np.bool_)


def test_one_hot_of_a_static_list():
    got = kiln.jit(lambda x: x + nn.one_hot([0, 2], 3))(
        np.zeros((2, 3), np.float32))
    check(got, np.eye(3, dtype=np.float32)[[0, 2]], F32)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_layer_norm(dtype, rng):
    x = rng.standard_normal((2, 3, 4)).astype(dtype) * 3 + 1
    gamma = rng.standard_normal(4).astype(dtype)
    beta = rng.standard_normal(4).astype(dtype)
    g0 = rng.standard_normal((2, 1, 1)).astype(dtype)
    got = kiln.jit(lambda x, g, b, g0: (
        nn.layer_norm(x, g, b), nn.layer_norm(x, g, b, eps=1e-2),
        nn.layer_norm(x, g0, 0.5, axis=(1, 2)),
        nn.layer_norm(x, 1.0, 0.0, axis=0)))(x, gamma, beta, g0)
    x64 = x.astype(np.float64)
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == F32 else {}
    check(got[0], ref_layer_norm(x64, gamma, beta), dtype, **loose)
    check(got[1], ref_layer_norm(x64, gamma, beta, eps=1e-2), dtype, **loose)
    check(got[2], ref_layer_norm(x64, g0, 0.5, axis=(1, 2)), dtype, **loose)
    check(got[3], ref_layer_norm(x64, 1.0, 0.0, axis=0), dtype, **loose)


# --- Gradients of the activations (through kiln.grad) ------------------------

@pytest.mark.parametrize("name", ["sigmoid", "softplus", "silu", "gelu tanh",
                                  "gelu erf"])
def test_activation_gradient(name, rng):
    from conftest import finite_difference
    kfn, ref = ACTIVATIONS[name]
    x = rng.standard_normal(5).astype(np.float64)
    got = kiln.jit(kiln.grad(lambda x: knp.sum(kfn(x))))(x)
    want = finite_difference(lambda x: np.sum(ref(x)), [x])
    check(got, want, F64, rtol=1e-6, atol=1e-8)


# --- The eager path ----------------------------------------------------------

def test_eager_nn(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x64 = x.astype(np.float64)
    out = nn.softmax(x)
    assert isinstance(out, np.ndarray)
    check(out, ref_softmax(x64), F32)
    check(nn.relu(x), np.maximum(x, 0), F32)
    check(nn.gelu(x, approximate=False), ref_gelu(x64, False), F32,
          rtol=2e-5, atol=2e-6)
    check(nn.logsumexp(x, axis=0), ref_logsumexp(x64, 0), F32)
    check(nn.one_hot(np.array([1, 0, 3]), 4), np.eye(4)[[1, 0, 3]], F32)
    g, b = np.ones(4, np.float32), np.zeros(4, np.float32)
    check(nn.layer_norm(x, g, b), ref_layer_norm(x64, g, b), F32,
          rtol=1e-4, atol=1e-5)


NORMALIZER_GRADIENTS = {
    "softmax": (lambda x: nn.softmax(x) * np.arange(4.0),
                lambda x: ref_softmax(x) * np.arange(4.0)),
    "log_softmax axis 0": (lambda x: nn.log_softmax(x, axis=0) ** 2,
                           lambda x: ref_log_softmax(x, 0) ** 2),
    "logsumexp": (lambda x: nn.logsumexp(x, axis=1) * np.array([1.0, -2, 3]),
                  lambda x: ref_logsumexp(x, 1) * np.array([1.0, -2, 3])),
    "layer_norm": (lambda x: nn.layer_norm(x, np.arange(4.0), 0.5) ** 3,
                   lambda x: ref_layer_norm(x, np.arange(4.0), 0.5) ** 3),
}


@pytest.mark.parametrize("name", NORMALIZER_GRADIENTS)
def test_normalizer_gradient(name, rng):
    from conftest import finite_difference
    kfn, ref = NORMALIZER_GRADIENTS[name]
    x = rng.standard_normal((3, 4))
    got = kiln.jit(kiln.grad(lambda x: knp.sum(kfn(x))))(x)
    want = finite_difference(lambda x: np.sum(ref(x)), [x])
    check(got, want, F64, rtol=1e-6, atol=1e-7)
