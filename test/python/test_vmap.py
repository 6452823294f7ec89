"""kiln.vmap, kiln.jacfwd, kiln.jacrev and kiln.hessian: against the same
function run example by example (numpy loops over kiln.jit), against
finite differences and closed forms, and against jax.vmap / jax.jacfwd /
jax.jacrev / jax.hessian where jax is importable."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def per_example(fn, args, in_axes):
    """fn run on each example (numpy slices), stacked along dim 0."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes)
                if ax is not None)
    compiled = kiln.jit(fn)
    outs = []
    for b in range(size):
        lane = [a if ax is None else np.take(a, b, axis=ax)
                for a, ax in zip(args, in_axes)]
        outs.append(compiled(*lane))
    return outs


def test_batched_products_and_shared_weights(rng):
    w = rng.standard_normal((4, 3))
    xs = rng.standard_normal((6, 2, 4))
    fn = lambda w, x: knp.tanh(x @ w)  # noqa: E731
    got = kiln.vmap(fn, in_axes=(None, 0))(w, xs)
    want = np.stack(per_example(fn, [w, xs], [None, 0]))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # The batch at another axis, and out at another axis.
    got = kiln.vmap(fn, in_axes=(2, None), out_axes=1)(
        np.moveaxis(np.broadcast_to(w, (5, 4, 3)), 0, 2), xs[0])
    np.testing.assert_allclose(got.shape, (2, 5, 3))


def test_pytrees_and_mixed_outputs(rng):
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    xs = rng.standard_normal((5, 3))

    def fn(p, x):
        y = x @ p["w"] + p["b"]
        return {"y": y, "norm": knp.sum(p["w"] ** 2)}

    out = kiln.vmap(fn, in_axes=({"w": None, "b": None}, 0),
                    out_axes={"y": 0, "norm": None})(params, xs)
    np.testing.assert_allclose(out["y"], xs @ params["w"] + params["b"],
                               rtol=1e-12)
    np.testing.assert_allclose(out["norm"], np.sum(params["w"] ** 2),
                               rtol=1e-12)
    with pytest.raises(kiln.TraceError, match="out axis is None"):
        kiln.vmap(fn, in_axes=(None, 0), out_axes=None)(params, xs)


def test_cond_and_while_with_per_example_predicates(rng):
    xs = rng.uniform(-2, 2, (7, 3))

    def branchy(x):
        return kiln.cond(knp.sum(x) > 0, lambda a: knp.sin(a) * a,
                         lambda a: knp.exp(a), x)

    np.testing.assert_allclose(kiln.vmap(branchy)(xs),
                               np.stack(per_example(branchy, [xs], [0])),
                               rtol=1e-12)

    def halvings(x):
        # The trip count depends on the example.
        value, count = kiln.while_loop(
            lambda s: knp.max(knp.abs(s[0])) > 0.01,
            lambda s: (s[0] * 0.5, s[1] + 1), (x * 100.0, 0))
        return value, count

    got_value, got_count = kiln.vmap(halvings)(xs)
    want = per_example(halvings, [xs], [0])
    np.testing.assert_allclose(got_value, np.stack([v for v, _ in want]),
                               rtol=1e-12)
    np.testing.assert_array_equal(got_count, [c for _, c in want])
    assert len(set(int(c) for c in got_count)) > 1


def test_per_example_gradients(rng):
    w = {"a": rng.standard_normal((4, 6)) * 0.5,
         "c": rng.standard_normal((6, 2)) * 0.5}
    xs = rng.standard_normal((8, 1, 4))
    ys = rng.standard_normal((8, 1, 2))

    def loss(w, x, y):
        return knp.sum((knp.tanh(x @ w["a"]) @ w["c"] - y) ** 2)

    grads = kiln.vmap(kiln.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = per_example(kiln.grad(loss), [w, xs, ys], [None, 0, 0])
    for key in w:
        assert grads[key].shape == (8,) + w[key].shape
        np.testing.assert_allclose(grads[key],
                                   np.stack([g[key] for g in want]),
                                   rtol=1e-10)


def test_per_example_gradients_through_while_loops(rng):
    """vmap of a gradient through kiln.while_loop (whose derived gradient
    keeps the loop's values on stacks): an RNN over a sequence whose
    length is an argument shared by the batch, against each example's
    gradient; a trip count that depends on the example is refused."""
    w = {"u": rng.standard_normal((5, 5)) * 0.4,
         "v": rng.standard_normal((3, 5)) * 0.4}
    xs = rng.standard_normal((6, 7, 3))
    steps = np.int64(7)

    def loss(w, x, n):
        def body(carry):
            t, h = carry
            return t + 1, knp.tanh(h @ w["u"] + x[t] @ w["v"])
        _, h = kiln.while_loop(lambda c: c[0] < n, body,
                               (np.int64(0), knp.zeros((5,), np.float64)))
        return knp.sum(h * h)

    grads = kiln.jit(kiln.vmap(kiln.grad(loss), in_axes=(None, 0, None)))(
        w, xs, steps)
    want = per_example(kiln.grad(loss), [w, xs, steps], [None, 0, None])
    for key in w:
        assert grads[key].shape == (6,) + w[key].shape
        np.testing.assert_allclose(grads[key],
                                   np.stack([g[key] for g in want]),
                                   rtol=1e-12)

    def until(w, x):
        def body(h):
            return h * w + 0.1
        return knp.sum(kiln.while_loop(lambda h: knp.sum(h) < 10.0,
                                       body, x))
    with pytest.raises(kiln.TraceError, match="trip count differs between "
                                              "lanes and it carries a stack"):
        kiln.vmap(kiln.grad(until), in_axes=(None, 0))(
            np.full(3, 1.5), np.abs(rng.standard_normal((4, 3))) + 0.5)


def test_nested_vmap(rng):
    x = rng.standard_normal((3, 4, 5))
    got = kiln.vmap(kiln.vmap(lambda v: knp.sum(v * v)))(x)
    np.testing.assert_allclose(got, np.sum(x * x, axis=-1), rtol=1e-12)


def test_jacobians_and_hessian(rng):
    x = rng.standard_normal(4)
    f = lambda x: knp.sin(x) * knp.sum(x * x)  # noqa: E731
    want = np.diag(np.cos(x)) * np.sum(x * x) + np.outer(np.sin(x), 2 * x)
    np.testing.assert_allclose(kiln.jacfwd(f)(x), want, rtol=1e-12)
    np.testing.assert_allclose(kiln.jacrev(f)(x), want, rtol=1e-12)
    g = lambda x: knp.sum(x ** 3) + knp.sum(x) ** 2  # noqa: E731
    np.testing.assert_allclose(kiln.hessian(g)(x),
                               np.diag(6 * x) + 2 * np.ones((4, 4)),
                               rtol=1e-12)
    # Two argnums: a tuple of Jacobians.
    h = lambda a, b: a * knp.sum(b)  # noqa: E731
    ja, jb = kiln.jacrev(h, argnums=(0, 1))(x, x[:3])
    np.testing.assert_allclose(ja, np.eye(4) * np.sum(x[:3]), rtol=1e-12)
    np.testing.assert_allclose(jb, np.outer(x, np.ones(3)), rtol=1e-12)


def test_jacobians_of_pytrees(rng):
    """Blocks laid out as JAX does: the output's structure, each leaf
    replaced by the input's; forward and reverse agree with each other and
    with central differences."""
    p = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))

    def f(p):
        y = knp.tanh(x @ p["w"] + p["b"])
        return {"y": y, "s": knp.sum(y ** 2)}

    fwd, rev = kiln.jacfwd(f)(p), kiln.jacrev(f)(p)
    assert fwd["y"]["w"].shape == (4, 2, 3, 2)
    assert fwd["s"]["b"].shape == (2,)
    compiled = kiln.jit(f)
    h = 1e-6
    for key in ("w", "b"):
        for k in range(p[key].size):
            up = {n: v.copy() for n, v in p.items()}
            down = {n: v.copy() for n, v in p.items()}
            up[key].flat[k] += h
            down[key].flat[k] -= h
            dy = (compiled(up)["y"] - compiled(down)["y"]) / (2 * h)
            column = fwd["y"][key].reshape(4, 2, -1)[:, :, k]
            np.testing.assert_allclose(column, dy, rtol=1e-6, atol=1e-8)
        for out in ("y", "s"):
            np.testing.assert_allclose(fwd[out][key], rev[out][key],
                                       rtol=1e-12, atol=1e-14)


def test_jacobians_of_mixed_precision_pytrees(rng):
    """Leaves of different float dtypes each get a tangent (cotangent) of
    their own dtype."""
    w = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal(2)

    def f(p):
        y = knp.astype(p["w"], np.float64).sum(axis=0) * p["b"]
        return {"y": y, "y32": knp.astype(y, np.float32)}

    want = np.stack([np.diag(b)] * 3)           # dy/dw[i, :]
    for jac in (kiln.jacfwd, kiln.jacrev):
        got = jac(f)({"w": w, "b": b})
        np.testing.assert_allclose(got["y"]["w"],
                                   want.transpose(1, 0, 2), rtol=1e-6)
        np.testing.assert_allclose(got["y32"]["b"],
                                   np.diag(w.sum(axis=0)), rtol=1e-6)


def test_errors(rng):
    x = rng.standard_normal((3, 2))
    with pytest.raises(kiln.TraceError, match="batch sizes 3 and 4"):
        kiln.vmap(lambda a, b: a + b)(x, rng.standard_normal((4, 2)))
    with pytest.raises(kiln.TraceError, match="no argument is mapped"):
        kiln.vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(ValueError, match="in_axes has 1 entries"):
        kiln.vmap(lambda a, b: a, in_axes=(0,))(x, x)
    with pytest.raises(kiln.TraceError, match="in axis 2"):
        kiln.vmap(lambda a: a, in_axes=2)(x)


# --- Against JAX -----------------------------------------------------------

def jax_modules():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, jnp


def test_per_example_gradients_match_jax(rng):
    jax, jnp = jax_modules()
    params = {"w1": rng.standard_normal((5, 8)) * 0.4,
              "b1": rng.standard_normal(8) * 0.1,
              "w2": rng.standard_normal((8, 3)) * 0.4}
    xs = rng.standard_normal((6, 5))
    labels = np.eye(3)[rng.integers(0, 3, 6)]

    def loss(s, nn, p, x, y):
        h = s.tanh(x @ p["w1"] + p["b1"])
        logp = nn.log_softmax(h @ p["w2"])
        return -s.sum(logp * y)

    ours = kiln.vmap(kiln.grad(lambda p, x, y: loss(knp, kiln.nn, p, x, y)),
                     in_axes=(None, 0, 0))(params, xs, labels)
    theirs = jax.vmap(jax.grad(lambda p, x, y: loss(jnp, jax.nn, p, x, y)),
                      in_axes=(None, 0, 0))(params, xs, labels)
    for key in params:
        np.testing.assert_allclose(ours[key], np.asarray(theirs[key]),
                                   rtol=1e-10, atol=1e-13)


def test_pytree_jacobians_and_hessian_match_jax(rng):
    jax, jnp = jax_modules()
    p = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))

    def f(s, p):
        y = s.tanh(x @ p["w"] + p["b"])
        return {"y": y, "s": s.sum(y ** 2)}

    for ours, theirs in ((kiln.jacfwd, jax.jacfwd), (kiln.jacrev, jax.jacrev)):
        got = ours(lambda p: f(knp, p))(p)
        want = theirs(lambda p: f(jnp, p))(p)
        for out in ("y", "s"):
            for key in ("w", "b"):
                np.testing.assert_allclose(got[out][key],
                                           np.asarray(want[out][key]),
                                           rtol=1e-10, atol=1e-13)
    got = kiln.hessian(lambda p: f(knp, p)["s"])(p)
    want = jax.hessian(lambda p: f(jnp, p)["s"])(p)
    for a in ("w", "b"):
        for b in ("w", "b"):
            np.testing.assert_allclose(got[a][b], np.asarray(want[a][b]),
                                       rtol=1e-9, atol=1e-12)


def test_jacobians_match_jax(rng):
    jax, jnp = jax_modules()
    w = rng.standard_normal((3, 4))
    x = rng.standard_normal(3)

    def f(s, x):
        return s.tanh(x @ w) * s.sum(s.sin(x))

    for ours, theirs in ((kiln.jacfwd, jax.jacfwd), (kiln.jacrev, jax.jacrev)):
        np.testing.assert_allclose(ours(lambda x: f(knp, x))(x),
                                   np.asarray(theirs(lambda x: f(jnp, x))(x)),
                                   rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(
        kiln.hessian(lambda x: knp.sum(f(knp, x) ** 2))(x),
        np.asarray(jax.hessian(lambda x: jnp.sum(f(jnp, x) ** 2))(x)),
        rtol=1e-9, atol=1e-12)


def test_vmap_of_control_flow_matches_jax(rng):
    jax, jnp = jax_modules()
    xs = rng.uniform(0.5, 20.0, (5,))

    def newton(s, while_loop, c):
        def body(state):
            x, n = state
            return x - (x * x * x - c) / (3 * x * x), n + 1
        return while_loop(lambda st: s.abs(st[0] ** 3 - c) > 1e-12, body,
                          (c * 0 + 1.0, 0))

    value, trips = kiln.vmap(lambda c: newton(knp, kiln.while_loop, c))(xs)
    jax_value, jax_trips = jax.vmap(
        lambda c: newton(jnp, jax.lax.while_loop, c))(xs)
    np.testing.assert_allclose(value, np.asarray(jax_value), rtol=1e-12)
    np.testing.assert_array_equal(trips, np.asarray(jax_trips))
