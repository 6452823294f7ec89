"""kiln.jit(donate_argnums=...): arguments whose buffers the caller gives
up are written with the outputs of their dtype and shape, in place, and
the results equal those of the same function without donation."""

import warnings

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln_runtime


def sgd_step(params, x, y):
    def loss(p):
        h = knp.tanh(x @ p["w"] + p["b"])
        return knp.mean((h @ p["v"] - y) ** 2)

    value, grads = kiln.value_and_grad(loss)(params)
    new = {k: params[k] - 0.1 * grads[k] for k in params}
    return value, new


def make_params(rng):
    return {"w": rng.standard_normal((5, 8)).astype(np.float32),
            "b": rng.standard_normal(8).astype(np.float32),
            "v": rng.standard_normal((8, 1)).astype(np.float32)}


def test_donated_parameters_are_updated_in_place(rng):
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    plain = kiln.jit(sgd_step)
    donating = kiln.jit(sgd_step, donate_argnums=0)
    expected = make_params(rng)
    params = {k: v.copy() for k, v in expected.items()}
    # Four steps: the first traces, the later ones take the fast path.
    for step in range(4):
        want_loss, expected = plain(expected, x, y)
        buffers = dict(params)
        loss, params = donating(params, x, y)
        np.testing.assert_array_equal(loss, want_loss)
        for k in params:
            np.testing.assert_array_equal(params[k], expected[k])
            assert np.shares_memory(params[k], buffers[k]), (step, k)
            # The donated array holds the new value.
            np.testing.assert_array_equal(buffers[k], expected[k])
    assert donating.cache_size == 1


def test_donated_table_takes_a_scatter_add_in_place(rng):
    def update(table, ids, rows):
        return table.sum(), table.at[ids].add(rows)

    table = rng.standard_normal((50, 4)).astype(np.float32)
    ids = rng.integers(0, 50, 30).astype(np.int32)
    rows = rng.standard_normal((30, 4)).astype(np.float32)
    want = table.copy()
    np.add.at(want, ids, rows)
    old_sum = table.sum(dtype=np.float64)
    total, new = kiln.jit(update, donate_argnums=0)(table, ids, rows)
    np.testing.assert_allclose(total, old_sum, rtol=1e-5)
    np.testing.assert_allclose(new, want, rtol=1e-6)
    assert np.shares_memory(new, table)
    np.testing.assert_allclose(table, want, rtol=1e-6)


def test_a_donation_no_output_matches_is_left_alone_with_a_warning():
    f = kiln.jit(lambda x, n: (x * 2.0, knp.sum(n)), donate_argnums=(0, 1))
    x = np.arange(4, dtype=np.float32)
    n = np.arange(3, dtype=np.int64)
    with pytest.warns(UserWarning, match=r"donated argument leaves \[1\]"):
        out, m = f(x, n)
    np.testing.assert_array_equal(out, np.arange(4) * 2.0)
    assert m == 3
    np.testing.assert_array_equal(n, [0, 1, 2])
    assert np.shares_memory(out, x)


def test_a_donated_array_passed_twice_is_refused():
    f = kiln.jit(lambda a, b: a + b, donate_argnums=0)
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"input 0 \('arg0'\) is donated .* "
                       r"shares memory with input 1 \('arg1'\)"):
        f(x, x)
    with pytest.raises(ValueError, match="shares memory"):
        f(x, x)  # the fast path refuses it too
    np.testing.assert_array_equal(x, np.ones(4))
    np.testing.assert_array_equal(f(x, x.copy()), 2 * np.ones(4))


def test_read_only_and_strided_donations_are_copied_not_written(rng):
    f = kiln.jit(lambda a: a * 3.0, donate_argnums=0)
    frozen = rng.standard_normal(6).astype(np.float32)
    frozen.setflags(write=False)
    original = frozen.copy()
    np.testing.assert_array_equal(f(frozen), original * 3.0)
    np.testing.assert_array_equal(frozen, original)
    strided = rng.standard_normal(12).astype(np.float32)[::2]
    original = strided.copy()
    np.testing.assert_array_equal(f(strided), original * 3.0)
    np.testing.assert_array_equal(strided, original)
    # A Python number is converted; its output is an array of its own.
    np.testing.assert_array_equal(f(2.0), np.float32(6.0))


def test_static_arguments_cannot_be_donated():
    with pytest.raises(TypeError, match="static argument"):
        kiln.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)
    with pytest.raises(TypeError, match="donate_argnums holds argument"):
        kiln.jit(lambda x: x, donate_argnums="0")
    with pytest.raises(TypeError, match="donate_argnums names argument 3"):
        kiln.jit(lambda x: x, donate_argnums=3)(np.ones(2, np.float32))


def test_saved_module_keeps_the_donation(tmp_path, rng):
    compiled = kiln.jit(lambda w, g: (knp.sum(g), w - g),
                        donate_argnums=0).compile(
        np.zeros(3, np.float32), np.zeros(3, np.float32))
    path = tmp_path / "step.kmod"
    compiled.save(path)
    function = kiln_runtime.load(path)[compiled.name]
    w = rng.standard_normal(3).astype(np.float32)
    g = rng.standard_normal(3).astype(np.float32)
    want = w - g
    total, new = function(w, g)
    np.testing.assert_allclose(total, g.sum(), rtol=1e-6)
    np.testing.assert_array_equal(new, want)
    assert np.shares_memory(new, w)
