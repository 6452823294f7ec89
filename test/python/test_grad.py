"""kiln.grad, kiln.value_and_grad, kiln.vjp and kiln.jvp against float64
central finite differences: plain functions, pytrees, argnums, has_aux,
through each control-flow form (the while loop's trip count depends on the
data), composed with jit and with each other."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
from conftest import finite_difference


def check_grad(fn, args, argnum=0, rtol=1e-5, atol=1e-7):
    """kiln.grad(fn) in float64 against finite differences of the same
    function run by kiln (compiled, float64)."""
    args = [np.asarray(a, np.float64) for a in args]
    got = kiln.jit(kiln.grad(fn, argnums=argnum))(*args)
    value = kiln.jit(fn)
    want = finite_difference(lambda *a: value(*a), args, argnum)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_elementwise_and_reductions(rng):
    x = rng.uniform(0.5, 2.0, size=(3, 4))
    check_grad(lambda x: knp.sum(knp.exp(knp.sin(x)) * knp.log(x)), [x])
    check_grad(lambda x: knp.mean(knp.tanh(x) ** 3 / (1 + x * x)), [x])
    check_grad(lambda x: knp.max(x * knp.sqrt(x)), [x])
    check_grad(lambda x: knp.sum(kiln.nn.softmax(x, axis=1)[:, 0]), [x])
    check_grad(lambda x: kiln.nn.logsumexp(x), [x])


def test_matmul_and_shapes(rng):
    w = rng.standard_normal((4, 3))
    x = rng.standard_normal((5, 4))
    loss = lambda w, x: knp.sum(knp.tanh(x @ w) ** 2)
    check_grad(loss, [w, x], argnum=0)
    check_grad(loss, [w, x], argnum=1)
    check_grad(lambda w: knp.sum(knp.transpose(w)[1:, ::2] *
                                 knp.reshape(w, (2, 6))[:, :2]), [w])
    check_grad(lambda w: knp.sum(knp.concatenate([w, w * 2], axis=1) ** 2),
               [w])


def test_gather_and_at_updates(rng):
    table = rng.standard_normal((6, 3))
    index = np.array([4, 0, 4, 2])
    check_grad(lambda t: knp.sum(knp.sin(t[index])), [table])
    check_grad(lambda t: knp.sum(t.at[1].set(0.0) ** 2), [table])


def test_argnums_pytrees_and_value(rng):
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))

    def loss(params, x):
        return knp.sum((x @ params["w"] + params["b"]) ** 2)

    value, grads = kiln.jit(kiln.value_and_grad(loss))(params, x)
    w, b = params["w"], params["b"]
    np.testing.assert_allclose(value, np.sum((x @ w + b) ** 2), rtol=1e-12)
    residual = 2 * (x @ w + b)
    np.testing.assert_allclose(grads["w"], x.T @ residual, rtol=1e-10)
    np.testing.assert_allclose(grads["b"], residual.sum(0), rtol=1e-10)
    dparams, dx = kiln.jit(kiln.grad(loss, argnums=(0, 1)))(params, x)
    np.testing.assert_allclose(dx, residual @ w.T, rtol=1e-10)
    np.testing.assert_allclose(dparams["b"], residual.sum(0), rtol=1e-10)


def test_has_aux(rng):
    x = rng.standard_normal(5)

    def loss(x):
        y = knp.tanh(x)
        return knp.sum(y * y), {"mean": knp.mean(y), "count": knp.sum(x > 0)}

    (value, aux), grad = kiln.jit(kiln.value_and_grad(loss, has_aux=True))(x)
    y = np.tanh(x)
    np.testing.assert_allclose(value, np.sum(y * y), rtol=1e-12)
    np.testing.assert_allclose(aux["mean"], y.mean(), rtol=1e-12)
    assert int(aux["count"]) == int((x > 0).sum())
    np.testing.assert_allclose(grad, 2 * y * (1 - y * y), rtol=1e-10)
    grad2, aux2 = kiln.jit(kiln.grad(loss, has_aux=True))(x)
    np.testing.assert_allclose(grad2, grad, rtol=1e-12)


def test_vjp(rng):
    x = rng.standard_normal((2, 3))

    def f(x):
        return knp.sin(x) * 2.0, knp.sum(x)

    @kiln.jit
    def pullback(x, ct):
        out, back = kiln.vjp(f, x)
        return out, back(ct)

    ct = (rng.standard_normal((2, 3)), np.float64(0.5))
    (y, s), (dx,) = pullback(x, ct)
    np.testing.assert_allclose(y, 2 * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(dx, ct[0] * 2 * np.cos(x) + 0.5, rtol=1e-10)
    out, back = kiln.vjp(f, x)          # outside a trace
    np.testing.assert_allclose(back(ct)[0], dx, rtol=1e-12)


def test_through_cond(rng):
    x = rng.standard_normal(4)

    def f(x):
        return knp.sum(kiln.cond(knp.sum(x) > 0, lambda a: knp.sin(a) * a,
                                 lambda a: knp.exp(a), x))
    check_grad(f, [np.abs(x)])
    check_grad(f, [-np.abs(x)])


def test_through_fori_loop_and_scan(rng):
    x = rng.standard_normal(3) * 0.5
    w = rng.standard_normal((3, 3)) * 0.5

    def fori(w, x):
        return knp.sum(kiln.fori_loop(0, 4, lambda i, h: knp.tanh(h @ w), x))
    check_grad(fori, [w, x], argnum=0)
    check_grad(fori, [w, x], argnum=1)

    xs = rng.standard_normal((5, 3))

    def rnn(w, xs):
        final, hs = kiln.scan(lambda h, x: (knp.tanh(h @ w + x),) * 2,
                              knp.zeros(3, np.float64), xs)
        return knp.sum(hs ** 2) + knp.sum(final)
    check_grad(rnn, [w, xs], argnum=0)
    check_grad(rnn, [w, xs], argnum=1)


def test_through_a_while_loop_with_a_data_dependent_trip_count(rng):
    """x is doubled until its norm passes 10: the number of doublings
    depends on x; the gradient is 2^k (piecewise constant k)."""
    def f(x, w):
        y = kiln.while_loop(lambda v: knp.sum(v * v) < 100.0,
                            lambda v: v * 2.0 + w * 0.01, x)
        return knp.sum(knp.sin(y))
    for scale in (0.1, 1.0, 4.0):
        x = rng.standard_normal(3) * scale
        w = rng.standard_normal(3)
        check_grad(f, [x, w], argnum=0, rtol=1e-4)
        check_grad(f, [x, w], argnum=1, rtol=1e-4)


def test_second_order():
    x = np.array([0.3, -1.2, 2.0])
    f = lambda x: knp.sum(x ** 3 + knp.sin(x))
    hess_diag = kiln.jit(kiln.grad(lambda x: knp.sum(kiln.grad(f)(x))))(x)
    np.testing.assert_allclose(hess_diag, 6 * x - np.sin(x), rtol=1e-10)


def test_grad_outside_jit_and_jit_inside_grad(rng):
    x = rng.standard_normal(4)
    inner = kiln.jit(lambda x: knp.sum(knp.tanh(x)))
    g = kiln.grad(lambda x: inner(x) * 2.0)
    np.testing.assert_allclose(g(x), 2 * (1 - np.tanh(x) ** 2), rtol=1e-12)


def test_float32_gradients_match_float64_ones(rng):
    x = rng.standard_normal((8, 8))
    f = lambda x: knp.sum(knp.tanh(x @ x) * x)
    g64 = kiln.grad(f)(x)
    g32 = kiln.grad(f)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="only float arrays"):
        kiln.grad(lambda n: knp.sum(n * 2.0))(np.arange(3))
    with pytest.raises(kiln.TraceError, match="rank-0|scalar"):
        kiln.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        kiln.grad(lambda x, y: knp.sum(x * y), argnums=2)(np.ones(2),
                                                           np.ones(2))
    with pytest.raises(TypeError, match="pair"):
        kiln.grad(lambda x: knp.sum(x), has_aux=True)(np.ones(2))


def test_closures_over_the_enclosing_trace(rng):
    """The differentiated function may use traced values it does not take
    as arguments (as in JAX); they are not differentiated."""
    w = rng.standard_normal(3)
    x = rng.standard_normal(3)

    @kiln.jit
    def f(w, x):
        direct = kiln.grad(lambda w: knp.sum(knp.sin(w) * x))(w)
        (value, aux), g = kiln.value_and_grad(
            lambda w: (knp.sum(w * x), x * 2.0), has_aux=True)(w)
        looped = kiln.fori_loop(0, 2, lambda i, c: c + kiln.grad(
            lambda w: knp.sum(w * x))(w), knp.zeros(3, np.float64))
        return direct, value, aux, g, looped

    direct, value, aux, g, looped = f(w, x)
    np.testing.assert_allclose(direct, np.cos(w) * x, rtol=1e-12)
    np.testing.assert_allclose(value, np.sum(w * x), rtol=1e-12)
    np.testing.assert_allclose(aux, 2 * x, rtol=1e-12)
    np.testing.assert_allclose(g, x, rtol=1e-12)
    np.testing.assert_allclose(looped, 2 * x, rtol=1e-12)


def test_nested_closures_are_differentiated():
    """d/dx grad_y(x * y)(1) = 1: the inner gradient depends on the
    captured x, and the outer gradient flows through it."""
    g = kiln.grad(lambda x: kiln.grad(lambda y: x * y)(1.0))
    assert float(g(np.float64(2.0))) == 1.0
    h = kiln.grad(lambda x: knp.sum(kiln.grad(
        lambda y: knp.sum(x * y * y))(x)))
    x = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(h(x), 4 * x, rtol=1e-12)


def check_jvp(fn, args, rng, rtol=1e-6, atol=1e-8):
    """kiln.jvp(fn) in float64 against the central difference of fn along
    a random tangent, and against kiln.vjp: <J t, w> = <t, J^T w>."""
    args = tuple(np.asarray(a, np.float64) for a in args)
    tangents = tuple(rng.standard_normal(a.shape) for a in args)
    value, tangent = kiln.jvp(fn, args, tangents)
    compiled = kiln.jit(fn)
    h = 1e-6
    plus = compiled(*[a + h * t for a, t in zip(args, tangents)])
    minus = compiled(*[a - h * t for a, t in zip(args, tangents)])
    np.testing.assert_allclose(value, compiled(*args), rtol=1e-12)
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * h), rtol=rtol,
                               atol=atol)
    w = rng.standard_normal(np.shape(value))
    _, back = kiln.vjp(fn, *args)
    pulled = back(w)
    forward = float(np.sum(np.asarray(tangent) * w))
    reverse = sum(float(np.sum(t * p)) for t, p in zip(tangents, pulled))
    assert abs(forward - reverse) <= 1e-9 * max(1.0, abs(reverse))


def test_jvp_of_ops_and_control_flow(rng):
    x = rng.uniform(0.5, 2.0, size=(3, 4))
    w = rng.standard_normal((4, 2))
    check_jvp(lambda x: knp.exp(knp.sin(x)) * knp.log(x), [x], rng)
    check_jvp(lambda x, w: knp.tanh(x @ w), [x, w], rng)
    check_jvp(lambda x: kiln.nn.softmax(x, axis=1), [x], rng)
    check_jvp(lambda x: knp.max(x * knp.sqrt(x), axis=0), [x], rng)
    check_jvp(lambda x: kiln.cond(knp.sum(x) > 0, lambda a: knp.sin(a) * a,
                                  lambda a: knp.exp(a), x), [x], rng)
    check_jvp(lambda x: kiln.fori_loop(0, 3, lambda i, c: knp.tanh(c * x),
                                       x), [x], rng)
    # The trip count depends on x: the loop carries the tangent.
    check_jvp(lambda x: kiln.while_loop(lambda c: knp.sum(c) < 40.0,
                                        lambda c: c * 1.5 + x, x), [x], rng)


def test_jvp_pytrees_and_integer_outputs(rng):
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))
    tangents = ({"w": rng.standard_normal((3, 2)), "b": np.zeros(2)},
                np.zeros((4, 3)))

    def f(params, x):
        y = x @ params["w"] + params["b"]
        return {"y": y, "positive": knp.sum(y > 0)}

    out, t_out = kiln.jvp(f, (params, x), tangents)
    np.testing.assert_allclose(t_out["y"], x @ tangents[0]["w"], rtol=1e-12)
    assert int(out["positive"]) == int(((x @ params["w"] + params["b"])
                                        > 0).sum())
    assert t_out["positive"].dtype == np.asarray(out["positive"]).dtype
    assert int(t_out["positive"]) == 0


def test_hessian_vector_product(rng):
    w = rng.standard_normal(5)
    v = rng.standard_normal(5)
    loss = lambda w: knp.sum(knp.tanh(w) ** 3)
    hv = kiln.jit(lambda w, v: kiln.jvp(kiln.grad(loss), (w,), (v,))[1])(w, v)
    t = np.tanh(w)
    d = 1 - t * t
    np.testing.assert_allclose(hv, (6 * t * d * d - 6 * t ** 3 * d) * v,
                               rtol=1e-10)
    # Reverse over reverse gives the same product.
    rr = kiln.jit(kiln.grad(lambda w: knp.sum(kiln.grad(loss)(w) * v)))(w)
    np.testing.assert_allclose(hv, rr, rtol=1e-10)


def test_jvp_errors(rng):
    x = rng.standard_normal(3)
    with pytest.raises(TypeError, match="must be tuples"):
        kiln.jvp(knp.sin, x, x)
    with pytest.raises(ValueError, match="1 primal"):
        kiln.jvp(knp.sin, (x,), (x, x))
    with pytest.raises(TypeError, match="structure"):
        kiln.jvp(lambda a: a["k"], ({"k": x},), ([x],))
    with pytest.raises(kiln.TraceError, match="tangent of input 0"):
        kiln.jvp(knp.sin, (x,), (np.ones(4),))


def test_checkpoint_recomputes_in_the_backward_pass(rng):
    w = rng.standard_normal((4, 4))
    x = rng.standard_normal((3, 4))

    def block(x, w):
        h = knp.tanh(x @ w)
        return knp.sin(h) * h

    def loss(w, x, wrap):
        f = wrap(block)
        return knp.sum(f(f(x, w), w))

    plain = kiln.jit(kiln.grad(lambda w, x: loss(w, x, lambda f: f)))
    remat = kiln.jit(kiln.grad(lambda w, x: loss(w, x, kiln.checkpoint)))
    np.testing.assert_allclose(remat(w, x), plain(w, x), rtol=1e-12)
    check_grad(lambda w, x: loss(w, x, kiln.checkpoint), [w, x])
    # The backward pass runs each block's forward computation again.
    text = remat.lower(w, x).as_text()
    assert text.count("kiln.tanh") == 2 * plain.lower(w, x).as_text().count(
        "kiln.tanh")
    assert "kiln.recompute" in text
    # Without a gradient it is the function itself, pytrees included.
    out = kiln.checkpoint(lambda p: {"y": block(p["x"], p["w"])})(
        {"x": x, "w": w})
    np.testing.assert_allclose(out["y"], np.sin(np.tanh(x @ w)) *
                               np.tanh(x @ w), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="policy"):
        kiln.checkpoint(block, policy=object())
