"""kiln.jit: tracing per signature, caching, pytrees, static arguments,
lower/compile/save, and calls from numpy arrays and Python numbers."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def test_traces_once_per_signature(rng):
    traces = []

    @kiln.jit
    def f(x, y):
        traces.append(x.shape)
        return x * y + 1.0

    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(f(a, b), a * b + 1, rtol=1e-6)
    np.testing.assert_allclose(f(b, a), a * b + 1, rtol=1e-6)
    assert traces == [(3, 4)]
    c = rng.standard_normal((5,)).astype(np.float32)
    np.testing.assert_allclose(f(c, c), c * c + 1, rtol=1e-6)
    assert traces == [(3, 4), (5,)]
    # Another dtype is another signature.
    f(a.astype(np.float64), b.astype(np.float64))
    assert len(traces) == 3 and f.cache_size == 3


def test_outputs_are_numpy_arrays_of_the_traced_dtype():
    f = kiln.jit(lambda x: (x + 1, x > 0, knp.sum(x)))
    x = np.array([-1, 2, 3], np.int32)
    plus, positive, total = f(x)
    assert plus.dtype == np.int32 and positive.dtype == np.bool_
    assert total.shape == () and total.dtype == np.int32
    np.testing.assert_array_equal(plus, [0, 3, 4])
    np.testing.assert_array_equal(positive, [False, True, True])
    assert int(total) == 4


def test_python_numbers_are_rank0_inputs():
    f = kiln.jit(lambda x, s, n, flag: (x * s + n, knp.where(flag, 1, 0)))
    x = np.ones(3, np.float32)
    y, z = f(x, 2.5, 3, True)
    np.testing.assert_allclose(y, [5.5, 5.5, 5.5])
    assert int(z) == 1
    y, z = f(x, 0.5, 1, False)      # same signature: cached
    np.testing.assert_allclose(y, [1.5, 1.5, 1.5])
    assert int(z) == 0 and f.cache_size == 1


def test_pytrees_in_and_out(rng):
    @kiln.jit
    def f(params, batch):
        h = batch["x"] @ params["w"] + params["b"]
        return {"h": h, "stats": (knp.mean(h), knp.max(h))}

    params = {"w": rng.standard_normal((4, 2)).astype(np.float32),
              "b": np.zeros(2, np.float32)}
    batch = {"x": rng.standard_normal((3, 4)).astype(np.float32)}
    out = f(params, batch)
    want = batch["x"] @ params["w"]
    assert set(out) == {"h", "stats"}
    np.testing.assert_allclose(out["h"], want, rtol=1e-5)
    np.testing.assert_allclose(out["stats"][0], want.mean(), rtol=1e-5)
    np.testing.assert_allclose(out["stats"][1], want.max(), rtol=1e-6)


def test_keyword_arguments():
    f = kiln.jit(lambda x, scale: x * scale)
    np.testing.assert_allclose(f(np.ones(2, np.float32),
                                 scale=np.float32(3)), [3, 3])


def test_static_argnums():
    @kiln.jit
    def plain(x):
        return x

    def power(x, n):
        result = x
        for _ in range(n - 1):          # a Python loop: unrolled
            result = result * x
        return result

    f = kiln.jit(power, static_argnums=1)
    x = np.array([2.0, 3.0], np.float32)
    np.testing.assert_allclose(f(x, 3), x ** 3)
    np.testing.assert_allclose(f(x, 4), x ** 4)
    np.testing.assert_allclose(f(x, 3), x ** 3)
    assert f.cache_size == 2
    assert "kiln.mul" in f.lower(x, 3).as_text()


def test_non_contiguous_and_foreign_byte_order_inputs(rng):
    f = kiln.jit(lambda x: x * 2.0)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    np.testing.assert_allclose(f(a.T), a.T * 2)             # transposed view
    np.testing.assert_allclose(f(a[:, ::2].copy()), a[:, ::2] * 2)
    np.testing.assert_allclose(f(a[::2, :]), a[::2, :] * 2)  # strided rows
    swapped = a.astype(">f4")                                # big-endian
    np.testing.assert_allclose(f(swapped), a * 2)
    np.testing.assert_allclose(f(a.astype(">f4")[1:3]), a[1:3] * 2)
    # Unaligned but element-sized buffers are still read correctly.
    raw = np.zeros(4 * 48 + 1, np.uint8)[1:].view(np.float32).reshape(6, 8)
    assert not raw.flags.aligned
    raw[...] = a
    np.testing.assert_allclose(f(raw), a * 2)


def test_inputs_are_never_written():
    x = np.arange(6, dtype=np.float32)
    original = x.copy()
    loops = [
        kiln.jit(lambda x: kiln.fori_loop(0, 3, lambda i, c: c * 2.0 + 1, x)),
        kiln.jit(lambda x: kiln.while_loop(lambda s: s[1] < 3,
                                           lambda s: (s[0] * 2.0, s[1] + 1),
                                           (x, 0))[0]),
        kiln.jit(lambda x: kiln.scan(lambda c, v: (c + v, c), x,
                                     knp.ones((4, 6)))[0]),
        kiln.jit(lambda x: x.at[2].set(100.0)),
    ]
    for f in loops:
        f(x)
        np.testing.assert_array_equal(x, original)


def test_lower_shows_kiln_ir_with_python_locations():
    f = kiln.jit(lambda x: knp.tanh(x) * 2.0)
    lowered = f.lower(np.zeros((2, 3), np.float32))
    text = lowered.as_text()
    assert "func.func @lambda" in text
    assert "kiln.tanh" in text and "tensor<2x3xf32>" in text
    assert "test_jit.py" in lowered.as_text(with_locations=True)
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(np.ones((2, 3), np.float32)),
                               np.tanh(np.ones((2, 3))) * 2, rtol=1e-6)


def test_compile_save_and_run_with_the_runtime_alone(tmp_path, rng):
    import kiln_runtime

    def mlp(w, x):
        return kiln.nn.relu(x @ w), knp.sum(w)

    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    compiled = kiln.jit(mlp).compile(w, x)
    assert compiled.compile_seconds > 0
    path = tmp_path / "mlp.kmod"
    compiled.save(path)
    module = kiln_runtime.load(path)
    assert module.function_names == ["mlp"]
    function = module["mlp"]
    assert [(n, d, s) for n, d, s in function.inputs] == [
        ("arg0", np.dtype(np.float32), (4, 3)),
        ("arg1", np.dtype(np.float32), (2, 4))]
    y, total = function(w, x)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5)
    np.testing.assert_allclose(total, w.sum(), rtol=1e-5)
    y2, _ = compiled(w, x)
    np.testing.assert_array_equal(y, y2)


def test_nested_jit_inlines():
    inner = kiln.jit(lambda x: x + 1.0)
    outer = kiln.jit(lambda x: inner(x) * 2.0)
    np.testing.assert_allclose(outer(np.zeros(2, np.float32)), [2.0, 2.0])
    assert inner.cache_size == 0


def test_closure_over_numpy_constants(rng):
    w = rng.standard_normal((3, 3)).astype(np.float32)
    f = kiln.jit(lambda x: x @ w)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(f(x), x @ w, rtol=1e-5)


def test_methods_can_be_jitted():
    import functools

    class Model:
        scale = 3.0

        @functools.partial(kiln.jit, static_argnums=0)
        def apply(self, x):
            return x * self.scale

    np.testing.assert_allclose(Model().apply(np.ones(2, np.float32)), [3, 3])


def test_many_inputs_and_outputs():
    f = kiln.jit(lambda *xs: tuple(x + i for i, x in enumerate(xs)))
    xs = [np.full(2, i, np.float32) for i in range(11)]
    outs = f(*xs)
    assert len(outs) == 11
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out, [2 * i, 2 * i])
    outs = f(*xs)      # the fast path, with more than eight of each
    np.testing.assert_allclose(outs[10], [20, 20])


def test_cached_calls_with_pytrees_take_the_fast_path(rng):
    import collections
    Pair = collections.namedtuple("Pair", "a b")

    @kiln.jit
    def step(params, batch, extra):
        loss = knp.sum((batch.a @ params["w"] + params["b"]) ** 2)
        return {"loss": loss, "new": [params["w"] * 0.5, None],
                "pair": Pair(batch.b + 1, extra[0])}

    params = {"w": rng.standard_normal((3, 2)), "b": np.zeros(2)}
    batch = Pair(rng.standard_normal((4, 3)), np.arange(3))
    first = step(params, batch, (2.5, None))
    assert len(step._dispatch) == 1
    for scale in (1.0, 2.0, -3.0):
        p = {"w": params["w"] * scale, "b": params["b"] + scale}
        out = step(p, batch, (scale, None))
        assert set(out) == {"loss", "new", "pair"}
        want = np.sum((batch.a @ p["w"] + p["b"]) ** 2)
        np.testing.assert_allclose(out["loss"], want, rtol=1e-12)
        assert out["new"][1] is None and isinstance(out["pair"], Pair)
        np.testing.assert_allclose(out["new"][0], p["w"] * 0.5)
        np.testing.assert_array_equal(out["pair"].a, np.arange(3) + 1)
        assert float(out["pair"].b) == scale
    assert step.cache_size == 1
    # Another structure (an extra key, a list for the tuple) is another
    # signature.
    step({**params, "unused": np.ones(1)}, batch, (1.0, None))
    step(params, batch, [1.0, None])
    assert step.cache_size == 3 and len(step._dispatch) == 3
    np.testing.assert_allclose(first["loss"],
                               np.sum((batch.a @ params["w"]) ** 2),
                               rtol=1e-12)


def test_calls_release_the_gil(rng):
    """While one thread runs compiled code, another keeps running Python:
    the call holds no Python lock while the native code runs. (Holding
    it, the main thread would not run at all during the call.)"""
    import threading
    import time

    spin = kiln.jit(lambda x: kiln.fori_loop(
        0, 8000000, lambda i, c: knp.tanh(c) * 0.5 + 0.1, x))
    x = rng.standard_normal(64).astype(np.float32)
    want = spin(x)
    span, ticks, results = {}, [], []

    def worker():
        span["start"] = time.perf_counter()
        results.append(spin(x))
        span["end"] = time.perf_counter()

    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    np.testing.assert_array_equal(results[0], want)
    during = [t for t in ticks if span["start"] < t < span["end"]]
    call = span["end"] - span["start"]
    assert call > 0.02, "the loop is too short to tell"
    assert during and during[-1] - during[0] > call / 2, (len(during), call)


def test_a_cache_directory_serves_the_next_process(tmp_path):
    """With KILN_CACHE_DIR, a second process compiling the same function
    for the same signature reads the module the first one wrote."""
    import os
    import subprocess
    import sys
    script = (
        "import numpy as np, kiln, kiln.numpy as knp\n"
        "c = kiln.jit(lambda x: knp.tanh(x) * 2 + 1).lower("
        "np.arange(6, dtype=np.float32)).compile()\n"
        "y = c(np.arange(6, dtype=np.float32))\n"
        "print(c.from_cache, float(y[5]))\n")
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env,
                           capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.split() for r in runs)
    assert first[0] == "False" and second[0] == "True"
    assert float(first[1]) == float(second[1]) == np.float32(
        np.tanh(np.float32(5)) * 2 + 1)
    assert len(list((tmp_path / "cache").glob("*.kmod"))) == 1

