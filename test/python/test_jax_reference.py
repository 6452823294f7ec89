"""kiln against JAX on the same programs: values and gradients of
functions written once over a numpy-like module (kiln.numpy or jax.numpy),
with each system's own control flow. JAX cannot reverse-differentiate a
while_loop; there kiln's reverse mode is checked against JAX's forward mode
(jax.jacfwd). Forward mode (kiln.jvp) is checked against jax.jvp on the
same programs, the while loop included, and Hessian-vector products
(jvp of grad) against JAX's. Skipped where jax is not importable."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import kiln  # noqa: E402
import kiln.numpy as knp  # noqa: E402


class Kiln:
    np = knp
    nn = kiln.nn
    grad, jit = staticmethod(kiln.grad), staticmethod(kiln.jit)
    jvp = staticmethod(kiln.jvp)
    cond = staticmethod(kiln.cond)
    fori_loop = staticmethod(kiln.fori_loop)
    scan = staticmethod(kiln.scan)
    while_loop = staticmethod(kiln.while_loop)


class Jax:
    np = jnp
    nn = jax.nn
    grad, jit = staticmethod(jax.grad), staticmethod(jax.jit)
    jvp = staticmethod(jax.jvp)
    cond = staticmethod(jax.lax.cond)
    fori_loop = staticmethod(jax.lax.fori_loop)
    scan = staticmethod(jax.lax.scan)
    while_loop = staticmethod(jax.lax.while_loop)


def mlp_loss(s, params, x, labels):
    h = s.np.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    logp = s.nn.log_softmax(logits, axis=-1)
    return -s.np.mean(s.np.sum(logp * labels, axis=-1))


def attention(s, q, k, v):
    scores = q @ s.np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    return s.np.sum(s.nn.softmax(scores, axis=-1) @ v * v[:, :1])


def rnn(s, w, xs):
    def step(h, x):
        h = s.np.tanh(h @ w + x)
        return h, s.np.sum(h * h)
    final, ys = s.scan(step, s.np.zeros(w.shape[0], w.dtype), xs)
    return s.np.sum(ys) + s.np.sum(final)


def branchy(s, x):
    y = s.cond(s.np.sum(x) > 0, lambda a: s.np.sin(a) * a,
               lambda a: s.np.exp(a) - a, x)
    return s.np.sum(s.fori_loop(0, 3, lambda i, c: s.np.tanh(c * y), y))


def indexed(s, table):
    picked = table[np.array([3, 0, 3, 1])]
    updated = table.at[2].add(picked[0] * 2.0)
    return s.np.sum(updated[::-1, 1:] ** 2) + s.np.max(picked)


CASES = {
    "mlp": (mlp_loss, lambda r: ({"w1": r.standard_normal((6, 5)),
                                  "b1": r.standard_normal(5),
                                  "w2": r.standard_normal((5, 3))},
                                 r.standard_normal((4, 6)),
                                 np.eye(3)[r.integers(0, 3, 4)])),
    "attention": (attention, lambda r: (r.standard_normal((2, 4, 8)),
                                        r.standard_normal((2, 4, 8)),
                                        r.standard_normal((2, 4, 8)))),
    "rnn": (rnn, lambda r: (r.standard_normal((3, 3)) * 0.5,
                            r.standard_normal((6, 3)))),
    "branchy_positive": (branchy, lambda r: (np.abs(r.standard_normal(4)),)),
    "branchy_negative": (branchy, lambda r: (-np.abs(r.standard_normal(4)),)),
    "indexed": (indexed, lambda r: (r.standard_normal((5, 3)),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_jax(name, rng):
    fn, make = CASES[name]
    args = make(rng)
    ours = kiln.jit(lambda *a: fn(Kiln, *a))(*args)
    theirs = jax.jit(lambda *a: fn(Jax, *a))(*args)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10)
    grad_ours = kiln.grad(lambda *a: fn(Kiln, *a))(*args)
    grad_theirs = jax.grad(lambda *a: fn(Jax, *a))(*args)
    for got, want in zip(jax.tree_util.tree_leaves(grad_ours),
                         jax.tree_util.tree_leaves(grad_theirs)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9,
                                   atol=1e-12)


def newton_cbrt(s, c):
    """x^3 = c by Newton's method, until the residual is small: the trip
    count depends on c."""
    def body(state):
        x, n = state
        return x - (x * x * x - c) / (3 * x * x), n + 1
    x, n = s.while_loop(lambda st: s.np.max(s.np.abs(st[0] ** 3 - c)) > 1e-12,
                        body, (c * 0 + 1.0, 0))
    return s.np.sum(x * s.np.sin(c)), n


def test_reverse_mode_through_while_loop_matches_jax_forward_mode(rng):
    c = rng.uniform(0.5, 20.0, size=3)
    value, trips = kiln.jit(lambda c: newton_cbrt(Kiln, c))(c)
    jax_value, jax_trips = jax.jit(lambda c: newton_cbrt(Jax, c))(c)
    np.testing.assert_allclose(value, float(jax_value), rtol=1e-12)
    assert int(trips) == int(jax_trips) > 3
    with pytest.raises(ValueError, match="while_loop"):
        jax.grad(lambda c: newton_cbrt(Jax, c)[0])(c)
    ours = kiln.grad(lambda c: newton_cbrt(Kiln, c)[0])(c)
    theirs = jax.jacfwd(lambda c: newton_cbrt(Jax, c)[0])(c)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-8)


def _random_like(rng, tree):
    """A random float64 tree of `tree`'s structure and shapes."""
    return jax.tree_util.tree_map(
        lambda a: rng.standard_normal(np.shape(a)), tree)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_jax(name, rng):
    fn, make = CASES[name]
    args = make(rng)
    tangents = _random_like(rng, args)
    (value, tangent) = kiln.jvp(lambda *a: fn(Kiln, *a), args, tangents)
    (jax_value, jax_tangent) = jax.jvp(lambda *a: fn(Jax, *a), args,
                                       tangents)
    np.testing.assert_allclose(value, np.asarray(jax_value), rtol=1e-10)
    np.testing.assert_allclose(tangent, np.asarray(jax_tangent), rtol=1e-9,
                               atol=1e-12)


def test_jvp_through_while_loop_matches_jax(rng):
    c = rng.uniform(0.5, 20.0, size=3)
    t = rng.standard_normal(3)
    (value, trips), (tangent, _) = kiln.jit(
        lambda c, t: kiln.jvp(lambda c: newton_cbrt(Kiln, c), (c,), (t,)))(
            c, t)
    (jax_value, _), (jax_tangent, _) = jax.jvp(
        lambda c: newton_cbrt(Jax, c), (c,), (t,))
    np.testing.assert_allclose(value, float(jax_value), rtol=1e-12)
    np.testing.assert_allclose(tangent, float(jax_tangent), rtol=1e-8)


@pytest.mark.parametrize("name", ["mlp", "attention", "rnn", "branchy_positive"])
def test_hessian_vector_products_match_jax(name, rng):
    """Forward over reverse, H v = jvp(grad(f), (x,), (v,))[1], with
    respect to the first argument."""
    fn, make = CASES[name]
    args = make(rng)
    v = _random_like(rng, args[0])

    def hvp(s, x, v):
        return s.jvp(lambda x: s.grad(lambda x: fn(s, x, *args[1:]))(x),
                     (x,), (v,))[1]
    ours = kiln.jit(lambda x, v: hvp(Kiln, x, v))(args[0], v)
    theirs = jax.jit(lambda x, v: hvp(Jax, x, v))(args[0], v)
    for got, want in zip(jax.tree_util.tree_leaves(ours),
                         jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-8,
                                   atol=1e-11)
