"""Half precision from Python: float16 arrays (and ml_dtypes' bfloat16,
where installed) go into and come out of compiled functions, promote as in
JAX, differentiate, and draw JAX's random streams; and kiln.jit(...,
autocast="bf16") trains a CNN with half-precision convolutions and
products. numpy's float16 arithmetic (one rounding per op) is the reference
for single ops."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln.random as kr

F16 = np.float16


def half_data(rng, shape, dtype=F16, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def test_float16_in_and_out(rng):
    x, y = half_data(rng, (4, 5)), half_data(rng, (4, 5))
    y[np.abs(y) < 0.1] = 0.5
    out = kiln.jit(lambda x, y: (x + y, x - y, x * y, x / y, -x, knp.abs(x),
                                 knp.maximum(x, y), x > y))(x, y)
    for got, want in zip(out, (x + y, x - y, x * y, x / y, -x, np.abs(x),
                               np.maximum(x, y), x > y)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # Functions round once from their f32 value.
    e = kiln.jit(knp.exp)(x)
    assert e.dtype == F16
    np.testing.assert_array_equal(e, np.exp(x.astype(np.float32)).astype(F16))


def test_promotion_follows_jax(rng):
    h = half_data(rng, (3,))
    f = h.astype(np.float32)
    i = np.array([1, 2, 3], np.int32)
    out = kiln.jit(lambda h, f, i: (h + f, h * 2.0, h + i, h * 2, h.sum(),
                                    h.astype(np.float64)))(h, f, i)
    assert [o.dtype for o in out] == [np.float32, F16, F16, F16, F16,
                                      np.float64]
    np.testing.assert_array_equal(out[0], f + f)
    np.testing.assert_array_equal(out[2], (h.astype(np.float32) +
                                           i).astype(F16))


def test_float16_gradients_and_products(rng):
    x, w = half_data(rng, (8, 16)), half_data(rng, (16, 4), scale=0.25)

    def loss(w):
        return knp.sum(knp.tanh(x @ w) ** 2)

    g = kiln.jit(kiln.grad(loss))(w)
    assert g.dtype == F16
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    t = np.tanh(x32 @ w32)
    want = x32.T @ (2 * t * (1 - t * t))
    # Rounded to f16 along the way: a few f16 epsilons of the largest value.
    np.testing.assert_allclose(g.astype(np.float32), want, rtol=0,
                               atol=8e-3 * np.abs(want).max())


def test_float16_random_draws_and_cnn(rng):
    key = kr.PRNGKey(1)
    u = kr.uniform(key, (1000,), F16)
    assert u.dtype == F16 and u.min() >= 0 and u.max() < 1
    z = kr.normal(key, (20000,), F16)
    assert z.dtype == F16
    assert abs(z.astype(np.float32).mean()) < 0.04
    assert abs(z.astype(np.float32).std() - 1) < 0.03
    # A convolution and pooling on float16 images.
    images = half_data(rng, (2, 3, 8, 8))
    kernel = half_data(rng, (4, 3, 3, 3), scale=0.3)
    out = kiln.jit(lambda x, w: kiln.nn.max_pool(
        kiln.nn.relu(kiln.nn.conv(x, w)), (2, 2)))(images, kernel)
    assert out.dtype == F16 and out.shape == (2, 4, 4, 4)
    want = kiln.jit(lambda x, w: kiln.nn.max_pool(
        kiln.nn.relu(kiln.nn.conv(x, w)), (2, 2)))(
            images.astype(np.float32), kernel.astype(np.float32))
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=0,
                               atol=4e-3 * np.abs(want).max())


def cnn_loss(params, x, y):
    h = kiln.nn.conv(x, params["conv1"], padding="SAME")
    h, _ = kiln.nn.batch_norm(h, params["scale"], params["bias"],
                              knp.zeros(8), knp.ones(8), training=True)
    h = kiln.nn.max_pool(kiln.nn.relu(h), (2, 2), (2, 2))
    h = kiln.nn.relu(kiln.nn.conv(h, params["conv2"], padding="SAME"))
    h = knp.mean(h, axis=(2, 3))
    logits = h @ params["dense"]
    return -knp.mean(knp.sum(kiln.nn.log_softmax(logits) * y, axis=-1))


def test_autocast_bf16_trains_a_cnn(rng):
    params = {"conv1": rng.standard_normal((8, 3, 3, 3)) * 0.3,
              "scale": np.ones(8), "bias": np.zeros(8),
              "conv2": rng.standard_normal((16, 8, 3, 3)) * 0.15,
              "dense": rng.standard_normal((16, 5)) * 0.3}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.standard_normal((6, 3, 12, 12)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 6)]

    exact = kiln.jit(kiln.value_and_grad(cnn_loss))
    mixed = kiln.jit(kiln.value_and_grad(cnn_loss), autocast="bf16")
    loss32, g32 = exact(params, x, y)
    loss16, g16 = mixed(params, x, y)
    assert all(g.dtype == np.float32 for g in g16.values())
    # bf16 operands (8 bits of mantissa) show in the gradients, and stay
    # within a few of their epsilons.
    error = max(np.max(np.abs(g16[k] - g32[k])) / np.max(np.abs(g32[k]))
                for k in params)
    assert 1e-4 < error < 4e-2, error
    assert abs(loss16 - loss32) < 2e-2 * abs(loss32)

    def sgd(params, x, y):
        loss, g = kiln.value_and_grad(cnn_loss)(params, x, y)
        return loss, kiln.tree_map(lambda p, d: p - 0.1 * d, params, g)

    step = kiln.jit(sgd, autocast="bf16")
    first = None
    for _ in range(30):
        loss, params = step(params, x, y)
        first = loss if first is None else first
    assert loss < 0.5 * first


# --- bfloat16 (ml_dtypes) and against JAX ------------------------------------

def test_bfloat16_in_and_out_match_jax(rng):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    bf16 = jnp.bfloat16
    assert np.dtype(knp.bfloat16) == np.dtype(bf16)
    x = half_data(rng, (4, 6), bf16)
    y = half_data(rng, (4, 6), bf16)
    out = kiln.jit(lambda x, y: (x + y, x * y, x - y, x.astype(np.float32),
                                 x + y.astype(np.float32), x * 3.0))(x, y)
    want = (jnp.add(x, y), jnp.multiply(x, y), jnp.subtract(x, y),
            jnp.asarray(x, jnp.float32), x + jnp.asarray(y, jnp.float32),
            jnp.asarray(x) * 3.0)
    for got, w in zip(out, want):
        assert got.dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(got, np.asarray(w))
    # float16 with bfloat16 computes in float32, as in JAX.
    mixed = kiln.jit(lambda a, b: a + b)(x.astype(F16), y)
    assert mixed.dtype == np.float32


def test_half_random_streams_match_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    for seed in [0, 3]:
        key, jkey = kr.PRNGKey(seed), jax.random.PRNGKey(seed)
        for dtype in [jnp.float16, jnp.bfloat16]:
            # Uniform draws are the same bits; normal and gumbel apply
            # erf_inv and log, which XLA chains in f32 where kiln rounds
            # each op to the half type: a few of its epsilons apart.
            eps = 2.0 ** (-10 if dtype == jnp.float16 else -7)
            for name in ["uniform", "normal", "gumbel"]:
                got = getattr(kr, name)(key, (64,), dtype)
                want = np.asarray(getattr(jax.random, name)(jkey, (64,), dtype))
                assert got.dtype == want.dtype
                if name == "uniform":
                    np.testing.assert_array_equal(got, want)
                else:
                    np.testing.assert_allclose(got.astype(np.float32),
                                               want.astype(np.float32),
                                               rtol=4 * eps, atol=4 * eps)
            # Scaled draws: XLA computes u * 7 - 2 without rounding between
            # the product and the sum, kiln rounds each op.
            got = kr.uniform(key, (64,), dtype, -2.0, 5.0).astype(np.float32)
            want = np.asarray(jax.random.uniform(jkey, (64,), dtype, -2.0,
                                                 5.0)).astype(np.float32)
            np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
