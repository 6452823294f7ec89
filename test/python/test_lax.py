"""kiln.lax (conv_general_dilated, conv_transpose, reduce_window, the
dynamic slices) and the
CNN layers of kiln.nn (conv, pooling, batch norm, embedding, activations):
against direct numpy computations everywhere, and against jax.lax / jax.nn
(values, gradients and tangents) where jax is importable."""

import itertools

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def conv_reference(x, w, strides, pads, dilation, groups):
    """A direct NCHW/OIHW convolution in numpy, one output at a time."""
    x = np.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in pads])
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh = (h - eh) // strides[0] + 1
    ow = (wd - ew) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for b, k, i, j in itertools.product(range(n), range(o), range(oh),
                                        range(ow)):
        g = k // og
        patch = x[b, g * cg:(g + 1) * cg,
                  i * strides[0]:i * strides[0] + eh:dilation[0],
                  j * strides[1]:j * strides[1] + ew:dilation[1]]
        out[b, k, i, j] = np.sum(patch * w[k])
    return out


@pytest.mark.parametrize("strides,pads,dilation,groups", [
    ((1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 1), ((0, 2), (1, 0)), (1, 2), 1),
    ((2, 2), ((1, 1), (1, 1)), (2, 1), 2),
])
def test_conv_matches_numpy(rng, strides, pads, dilation, groups):
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 4 // groups, 3, 2))
    got = kiln.lax.conv_general_dilated(x, w, strides, pads,
                                        rhs_dilation=dilation,
                                        feature_group_count=groups)
    np.testing.assert_allclose(
        got, conv_reference(x, w, strides, pads, dilation, groups),
        rtol=1e-12, atol=1e-12)


def test_nhwc_and_same_padding(rng):
    x = rng.standard_normal((1, 9, 8, 3))
    w = rng.standard_normal((3, 3, 3, 5))
    got = kiln.nn.conv(x, w, strides=2, padding="SAME", layout="NHWC")
    # SAME with stride 2: out = ceil(in / 2), padding (total // 2, rest).
    want = conv_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1),
                          (2, 2), ((1, 1), (0, 1)), (1, 1), 1)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-12)


def test_pooling_matches_numpy(rng):
    x = rng.standard_normal((2, 3, 6, 5))
    got = kiln.nn.max_pool(x, 2, strides=2, padding="VALID")
    want = x[:, :, :6, :4].reshape(2, 3, 3, 2, 2, 2).max(axis=(3, 5))
    np.testing.assert_allclose(got, want)
    avg = kiln.nn.avg_pool(x, (3, 3), strides=1, padding=1,
                           count_include_pad=False)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ones = np.pad(np.ones_like(x), [(0, 0), (0, 0), (1, 1), (1, 1)])
    total = sum(padded[:, :, i:i + 6, j:j + 5]
                for i in range(3) for j in range(3))
    count = sum(ones[:, :, i:i + 6, j:j + 5]
                for i in range(3) for j in range(3))
    np.testing.assert_allclose(avg, total / count, rtol=1e-12)
    np.testing.assert_allclose(
        kiln.nn.avg_pool(x, (3, 3), strides=1, padding=1), total / 9,
        rtol=1e-12)
    # NHWC pools the same positions.
    xh = x.transpose(0, 2, 3, 1)
    for padding in ["SAME", "VALID", 1, [(1, 0), (0, 1)]]:
        np.testing.assert_array_equal(
            kiln.nn.max_pool(xh, 3, 2, padding, layout="NHWC"),
            kiln.nn.max_pool(x, 3, 2, padding).transpose(0, 2, 3, 1))
        np.testing.assert_allclose(
            kiln.nn.avg_pool(xh, 3, 2, padding, layout="NHWC",
                             count_include_pad=False),
            kiln.nn.avg_pool(x, 3, 2, padding,
                             count_include_pad=False).transpose(0, 2, 3, 1),
            rtol=1e-12)


def test_batch_norm_train_and_eval(rng):
    x = rng.standard_normal((4, 3, 2, 2)) * 2 + 1
    scale, bias = rng.standard_normal(3), rng.standard_normal(3)
    mean, var = np.zeros(3), np.ones(3)
    y, (new_mean, new_var) = kiln.nn.batch_norm(x, scale, bias, mean, var,
                                                training=True)
    m = x.mean(axis=(0, 2, 3))
    v = x.var(axis=(0, 2, 3))
    shape = (1, 3, 1, 1)
    np.testing.assert_allclose(
        y, (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-5)
        * scale.reshape(shape) + bias.reshape(shape), rtol=1e-10)
    np.testing.assert_allclose(new_mean, 0.1 * m, rtol=1e-12)
    np.testing.assert_allclose(new_var, 0.9 + 0.1 * v, rtol=1e-12)
    y, (same_mean, same_var) = kiln.nn.batch_norm(x, scale, bias, m, v,
                                                  training=False)
    np.testing.assert_allclose(same_mean, m)
    np.testing.assert_allclose(
        y, (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-5)
        * scale.reshape(shape) + bias.reshape(shape), rtol=1e-10)


def test_activations_and_embedding(rng):
    x = np.linspace(-8, 8, 33)
    np.testing.assert_allclose(kiln.nn.relu6(x), np.clip(x, 0, 6))
    np.testing.assert_allclose(kiln.nn.leaky_relu(x, 0.2),
                               np.where(x >= 0, x, 0.2 * x))
    np.testing.assert_allclose(kiln.nn.elu(x), np.where(x > 0, x,
                                                        np.expm1(x)),
                               rtol=1e-12)
    np.testing.assert_allclose(kiln.nn.log_sigmoid(x),
                               -np.log1p(np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(kiln.nn.hard_swish(x),
                               x * np.clip(x + 3, 0, 6) / 6, rtol=1e-12)
    table = rng.standard_normal((10, 4))
    ids = np.array([[3, 0], [9, 3]])
    np.testing.assert_allclose(kiln.nn.embedding(table, ids), table[ids])


def test_errors(rng):
    x = rng.standard_normal((1, 4, 5, 5))
    with pytest.raises(kiln.TraceError, match="groups = 3 must divide"):
        kiln.lax.conv_general_dilated(x, rng.standard_normal((3, 1, 3, 3)),
                                      (1, 1), "VALID", feature_group_count=3)
    with pytest.raises(kiln.TraceError, match="weight dim 1 must be"):
        kiln.lax.conv_general_dilated(x, rng.standard_normal((3, 2, 3, 3)),
                                      (1, 1), "VALID")
    with pytest.raises(ValueError, match="unknown padding 'FULL'"):
        kiln.lax.conv_general_dilated(x, rng.standard_normal((3, 4, 3, 3)),
                                      (1, 1), "FULL")
    with pytest.raises(ValueError, match="needs init_value 0"):
        kiln.lax.reduce_window(x, 1.0, kiln.lax.add, (1, 1, 2, 2),
                               (1, 1, 1, 1), "VALID")
    with pytest.raises(kiln.TraceError, match="the window spans 7"):
        kiln.nn.max_pool(x, 7)


def numpy_start(start, dim, size):
    start = start + dim if start < 0 else start
    return min(max(start, 0), dim - size)


@pytest.mark.parametrize("starts", [(1, 2, 0), (4, 5, 1), (-3, 0, 0)])
def test_dynamic_slices_match_numpy(rng, starts):
    x = rng.standard_normal((5, 6, 3))
    u = rng.standard_normal((2, 4, 3))
    lo = [numpy_start(s, d, n) for s, d, n in zip(starts, x.shape, u.shape)]
    window = tuple(slice(a, a + n) for a, n in zip(lo, u.shape))
    np.testing.assert_array_equal(
        kiln.lax.dynamic_slice(x, starts, u.shape), x[window])
    want = x.copy()
    want[window] = u
    np.testing.assert_array_equal(
        kiln.lax.dynamic_update_slice(x, u, starts), want)
    # Traced starts, and a gradient through the update.
    f = kiln.jit(lambda x, i: kiln.lax.dynamic_slice(x, (i, 2, 0), (2, 4, 3)))
    np.testing.assert_array_equal(f(x, np.int32(starts[0])),
                                  x[lo[0]:lo[0] + 2, 2:6])
    g = kiln.grad(lambda x, i: knp.sum(
        kiln.lax.dynamic_update_slice(x, u, (i, 1, 0)) ** 2))(
            x, np.int32(starts[0]))
    mask = np.ones_like(x)
    mask[lo[0]:lo[0] + 2, 1:5] = 0
    np.testing.assert_allclose(g, 2 * x * mask, rtol=1e-12)


# --- Against JAX -----------------------------------------------------------

def jax_modules():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, jnp


def close(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((2, 0), (1, 1))])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_values_gradients_and_tangents_match_jax(rng, padding, layout):
    jax, jnp = jax_modules()
    dims = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else \
        ("NHWC", "HWIO", "NHWC")
    x = rng.standard_normal((2, 4, 7, 6) if layout == "NCHW" else
                            (2, 7, 6, 4))
    w = rng.standard_normal((6, 2, 3, 2) if layout == "NCHW" else
                            (3, 2, 2, 6))

    def loss(s, x, w):
        lax = kiln.lax if s is knp else jax.lax
        y = lax.conv_general_dilated(x, w, (2, 1), padding,
                                     rhs_dilation=(1, 2),
                                     dimension_numbers=dims,
                                     feature_group_count=2)
        return s.sum(s.tanh(y) * y)

    close(kiln.jit(lambda x, w: loss(knp, x, w))(x, w),
          jax.jit(lambda x, w: loss(jnp, x, w))(x, w))
    for argnum in (0, 1):
        close(kiln.grad(lambda x, w: loss(knp, x, w), argnums=argnum)(x, w),
              jax.grad(lambda x, w: loss(jnp, x, w), argnums=argnum)(x, w))
    tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    close(kiln.jvp(lambda x, w: loss(knp, x, w), (x, w), (tx, tw))[1],
          jax.jvp(lambda x, w: loss(jnp, x, w), (x, w), (tx, tw))[1])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_matches_jax(rng, padding):
    jax, _ = jax_modules()
    x = rng.standard_normal((2, 3, 5, 4))
    w = rng.standard_normal((4, 3, 3, 2))
    dims = ("NCHW", "OIHW", "NCHW")
    for transpose_kernel in (False, True):
        kernel = w if not transpose_kernel else w.transpose(1, 0, 2, 3)
        close(kiln.lax.conv_transpose(x, kernel, (2, 3), padding,
                                      dimension_numbers=dims,
                                      transpose_kernel=transpose_kernel),
              jax.lax.conv_transpose(x, kernel, (2, 3), padding,
                                     dimension_numbers=dims,
                                     transpose_kernel=transpose_kernel))


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_reduce_window_matches_jax(rng, padding):
    jax, _ = jax_modules()
    x = rng.standard_normal((2, 3, 9, 7))
    for computation, init in ((kiln.lax.max, -np.inf),
                              (kiln.lax.add, 0.0)):
        theirs = jax.lax.max if computation is kiln.lax.max else jax.lax.add
        close(kiln.lax.reduce_window(x, init, computation, (1, 1, 3, 2),
                                     (1, 1, 2, 2), padding,
                                     window_dilation=(1, 1, 2, 1)),
              jax.lax.reduce_window(x, init, theirs, (1, 1, 3, 2),
                                    (1, 1, 2, 2), padding,
                                    window_dilation=(1, 1, 2, 1)))


def test_activations_match_jax():
    jax, _ = jax_modules()
    x = np.linspace(-7, 7, 57)
    for name in ("relu6", "elu", "leaky_relu", "log_sigmoid", "hard_swish",
                 "hard_sigmoid", "silu", "gelu", "softplus"):
        close(getattr(kiln.nn, name)(x), getattr(jax.nn, name)(x),
              rtol=1e-7 if name == "gelu" else 1e-12)


def test_small_cnn_loss_and_gradients_match_jax(rng):
    """conv - batch norm (training) - relu - max pool - conv - average pool
    - dense, its loss and every parameter's gradient."""
    jax, jnp = jax_modules()
    params = {
        "c1": rng.standard_normal((8, 3, 3, 3)) * 0.3,
        "g1": 1 + 0.1 * rng.standard_normal(8), "b1": rng.standard_normal(8),
        "c2": rng.standard_normal((8, 8, 3, 3)) * 0.2,
        "dense": rng.standard_normal((8, 5)) * 0.3,
    }
    x = rng.standard_normal((4, 3, 12, 12))
    labels = np.eye(5)[rng.integers(0, 5, 4)]

    def kiln_loss(p):
        h = kiln.nn.conv(x, p["c1"], padding="SAME")
        h, _ = kiln.nn.batch_norm(h, p["g1"], p["b1"], knp.zeros(8),
                                  knp.ones(8), training=True)
        h = kiln.nn.max_pool(kiln.nn.relu(h), 2)
        h = kiln.nn.conv(h, p["c2"], strides=2, padding="SAME")
        h = knp.mean(kiln.nn.avg_pool(h, 3, padding="VALID"), axis=(2, 3))
        logp = kiln.nn.log_softmax(h @ p["dense"])
        return -knp.mean(knp.sum(logp * labels, axis=-1))

    def jax_loss(p):
        conv = lambda h, w, s: jax.lax.conv_general_dilated(  # noqa: E731
            h, w, (s, s), "SAME")
        h = conv(x, p["c1"], 1)
        m = jnp.mean(h, axis=(0, 2, 3), keepdims=True)
        v = jnp.var(h, axis=(0, 2, 3), keepdims=True)
        h = (h - m) / jnp.sqrt(v + 1e-5) * p["g1"].reshape(1, 8, 1, 1) \
            + p["b1"].reshape(1, 8, 1, 1)
        h = jax.lax.reduce_window(jax.nn.relu(h), -jnp.inf, jax.lax.max,
                                  (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        h = conv(h, p["c2"], 2)
        h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 1, 3, 3),
                                  (1, 1, 3, 3), "VALID") / 9
        h = jnp.mean(h, axis=(2, 3))
        logp = jax.nn.log_softmax(h @ p["dense"])
        return -jnp.mean(jnp.sum(logp * labels, axis=-1))

    value, grads = kiln.value_and_grad(kiln_loss)(params)
    jax_value, jax_grads = jax.value_and_grad(jax_loss)(params)
    close(value, jax_value)
    for key in params:
        close(grads[key], jax_grads[key], rtol=1e-9, atol=1e-11)


def test_dynamic_slices_match_jax(rng):
    jax, _ = jax_modules()
    x = rng.standard_normal((5, 6, 3))
    u = rng.standard_normal((2, 4, 3))
    for starts in [(1, 2, 0), (4, 5, 1), (-3, 0, -1), (-9, 7, 0)]:
        close(kiln.lax.dynamic_slice(x, starts, (2, 4, 3)),
              jax.lax.dynamic_slice(x, starts, (2, 4, 3)))
        close(kiln.lax.dynamic_update_slice(x, u, starts),
              jax.lax.dynamic_update_slice(x, u, starts))
