"""kiln.cond, kiln.while_loop, kiln.fori_loop and kiln.scan: each form on
its own, nested in the others, over pytrees, with closures over traced and
numpy values, and outside a trace; checked against plain Python/numpy."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def test_cond_picks_a_branch(rng):
    f = kiln.jit(lambda p, x, y: kiln.cond(p, lambda a, b: a + b,
                                           lambda a, b: a * b, x, y))
    x = rng.standard_normal(4).astype(np.float32)
    y = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(f(True, x, y), x + y, rtol=1e-6)
    np.testing.assert_allclose(f(False, x, y), x * y, rtol=1e-6)
    assert f.cache_size == 1


def test_cond_on_a_traced_predicate_with_pytree_operands(rng):
    @kiln.jit
    def f(state):
        return kiln.cond(knp.sum(state["x"]) > 0,
                         lambda s: {"x": s["x"] * 2.0, "n": s["n"] + 1},
                         lambda s: {"x": -s["x"], "n": s["n"]},
                         state)

    x = rng.standard_normal(5).astype(np.float32)
    for sign in (1, -1):
        xs = np.abs(x) * sign
        out = f({"x": xs, "n": np.int32(7)})
        want = xs * 2 if sign > 0 else -xs
        np.testing.assert_allclose(out["x"], want, rtol=1e-6)
        assert int(out["n"]) == (8 if sign > 0 else 7)


def test_cond_branches_must_agree():
    f = kiln.jit(lambda p, x: kiln.cond(p, lambda a: (a, a), lambda a: a, x))
    with pytest.raises(kiln.TraceError):
        f(True, np.zeros(2, np.float32))


def test_while_loop_with_a_data_dependent_trip_count():
    """Collatz steps: the trip count depends on the value."""
    @kiln.jit
    def steps(n):
        def body(state):
            n, count = state
            n = knp.where(n % 2 == 0, n // 2, 3 * n + 1)
            return n, count + 1
        return kiln.while_loop(lambda s: s[0] != 1, body, (n, 0))[1]

    def reference(n):
        count = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            count += 1
        return count

    for n in (1, 6, 7, 27, 97):
        assert int(steps(np.int32(n))) == reference(n)
    assert steps.cache_size == 1


def test_fori_loop_static_and_traced_bounds(rng):
    x = rng.standard_normal(3).astype(np.float32)
    static = kiln.jit(lambda x: kiln.fori_loop(
        0, 5, lambda i, c: c + knp.astype(i, np.float32) * x, x))
    np.testing.assert_allclose(static(x), x + 10 * x, rtol=1e-6)
    traced = kiln.jit(lambda x, n: kiln.fori_loop(
        0, n, lambda i, c: c + knp.astype(i, np.float32) * x, x))
    for n in (0, 1, 5):
        np.testing.assert_allclose(traced(x, n), x + n * (n - 1) / 2 * x,
                                   rtol=1e-5)


def test_scan_carry_and_stacked_outputs(rng):
    xs = rng.standard_normal((6, 3)).astype(np.float32)

    @kiln.jit
    def cumulative(xs):
        def step(carry, x):
            total = carry + x
            return total, (total, knp.sum(x))
        return kiln.scan(step, knp.zeros(3), xs)

    final, (totals, sums) = cumulative(xs)
    np.testing.assert_allclose(totals, np.cumsum(xs, axis=0), rtol=1e-5)
    np.testing.assert_allclose(sums, xs.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(final, xs.sum(axis=0), rtol=1e-5)


def test_scan_over_a_pytree_and_with_length_only():
    xs = {"a": np.arange(4, dtype=np.float32),
          "b": np.ones((4, 2), np.float32)}
    f = kiln.jit(lambda xs: kiln.scan(
        lambda c, x: (c + x["a"] * x["b"], c), knp.zeros(2), xs))
    final, history = f(xs)
    np.testing.assert_allclose(final, [6, 6])
    np.testing.assert_allclose(history[:, 0], [0, 0, 1, 3])
    counter = kiln.jit(lambda: kiln.scan(lambda c, _: (c + 1, c * 2), 0,
                                         None, length=5))
    count, doubled = counter()
    assert int(count) == 5
    np.testing.assert_array_equal(doubled, [0, 2, 4, 6, 8])


def test_nested_control_flow(rng):
    """A while loop in a scan in a fori loop, with a cond inside."""
    x0 = rng.uniform(1, 3, size=4).astype(np.float32)

    @kiln.jit
    def f(x):
        def halve_until_below_one(v):
            return kiln.while_loop(lambda s: knp.max(s) >= 1.0,
                                   lambda s: s * 0.5, v)

        def scan_step(carry, t):
            v = halve_until_below_one(carry + t)
            v = kiln.cond(knp.sum(v) > 1.0, lambda a: a - 0.25,
                          lambda a: a + 0.25, v)
            return v, knp.sum(v)

        def outer(i, state):
            v, log = state
            v, sums = kiln.scan(scan_step, v, knp.arange(3.0) + 1.0)
            return v, log + sums
        return kiln.fori_loop(0, 2, outer, (x, knp.zeros(3)))

    def reference(x):
        x = x.astype(np.float64)
        log = np.zeros(3)
        for _ in range(2):
            sums = []
            for t in (1.0, 2.0, 3.0):
                v = x + t
                while v.max() >= 1.0:
                    v = v * 0.5
                v = v - 0.25 if v.sum() > 1.0 else v + 0.25
                x = v
                sums.append(v.sum())
            log = log + np.array(sums)
        return x, log

    got_v, got_log = f(x0)
    want_v, want_log = reference(x0)
    np.testing.assert_allclose(got_v, want_v, rtol=1e-5)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-5)


def test_closures_over_outer_traced_and_numpy_values(rng):
    scale = rng.standard_normal(3).astype(np.float32)

    @kiln.jit
    def f(x, y):
        shift = knp.sum(y)                 # traced, from the enclosing trace

        def body(i, c):
            return c * scale + shift       # numpy constant and traced value
        inner = kiln.fori_loop(0, 2, body, x)
        return kiln.cond(shift > 0, lambda a: a + shift, lambda a: a - y, inner)

    x = rng.standard_normal(3).astype(np.float32)
    for y in (np.abs(rng.standard_normal(3)), -np.abs(rng.standard_normal(3))):
        y = y.astype(np.float32)
        s = y.sum()
        want = (x * scale + s) * scale + s
        want = want + s if s > 0 else want - y
        np.testing.assert_allclose(f(x, y), want, rtol=1e-5)


def test_carried_state_keeps_its_structure():
    f = kiln.jit(lambda x: kiln.fori_loop(0, 2, lambda i, c: (c, c), x))
    with pytest.raises(TypeError, match="structure"):
        f(np.zeros(2, np.float32))


def test_control_flow_outside_a_trace_runs_compiled():
    out = kiln.while_loop(lambda s: s < 100, lambda s: s * 3,
                          np.array(1, np.int32))
    assert isinstance(out, np.ndarray) and int(out) == 243
    total = kiln.fori_loop(0, 4, lambda i, c: c + i, np.array(0, np.int32))
    assert int(total) == 6
    picked = kiln.cond(np.array(False), lambda a: a + 1.0, lambda a: a - 1.0,
                       np.zeros(2, np.float32))
    np.testing.assert_allclose(picked, [-1, -1])
