"""kiln.jit(..., autocast=...): an f32 training step whose matrix products,
forward and backward, run with bf16 or f16 operands and f32 accumulation.
The reference is numpy in float64 that rounds every product's operands the
way the autocast program does (f32 values narrowed to nearest even), so a
product computed wrong, a cast missed or a cast too many shows as a
mismatch far above the f32 accumulation error, while plain float64 is
farther away by the half-precision rounding itself."""

import warnings

import numpy as np
import pytest

import kiln
import kiln.numpy as knp


def to_bf16(values):
    """float32 `values` rounded to the nearest bfloat16 (ties to even),
    returned as float64."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def to_f16(values):
    return np.asarray(values, np.float32).astype(np.float16).astype(np.float64)


def loss(params, x, y):
    h = knp.tanh(x @ params["w1"] + params["b1"])
    z = h @ params["w2"] + params["b2"]
    return knp.mean((z - y) ** 2)


def reference(params, x, y, narrow):
    """The loss and its gradients in float64 with `narrow` applied to the
    operands of every product (None: plain float64). Values that the
    compiled program holds in f32 are rounded to f32 before narrowing, as
    its casts see them."""
    f32 = lambda v: np.asarray(v, np.float32)
    if narrow is None:
        mm = lambda a, b: a @ b
    else:
        mm = lambda a, b: narrow(f32(a)) @ narrow(f32(b))
    w1, b1, w2, b2 = (np.float64(params[k]) for k in ("w1", "b1", "w2", "b2"))
    x, y = np.float64(x), np.float64(y)
    a = mm(x, w1) + b1
    h = np.tanh(a)
    z = mm(h, w2) + b2
    value = np.mean((z - y) ** 2)
    dz = 2 * (z - y) / z.size
    dh = mm(dz, w2.T)
    da = dh * (1 - h * h)
    grads = {"w1": mm(x.T, da), "b1": da.sum(0), "w2": mm(h.T, dz),
             "b2": dz.sum(0)}
    return value, grads


def problem(rng):
    params = {"w1": rng.standard_normal((48, 64)) / 7,
              "b1": rng.standard_normal(64) / 10,
              "w2": rng.standard_normal((64, 24)) / 8,
              "b2": rng.standard_normal(24) / 10}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.standard_normal((32, 48)).astype(np.float32)
    y = rng.standard_normal((32, 24)).astype(np.float32)
    return params, x, y


def largest_error(got, want):
    """max |got - want| / max |want| over the gradients."""
    return max(np.max(np.abs(np.float64(got[k]) - want[k])) /
               np.max(np.abs(want[k])) for k in want)


@pytest.mark.parametrize("dtype, narrow", [("bf16", to_bf16), ("f16", to_f16)])
def test_training_step_matches_rounded_reference(rng, dtype, narrow):
    params, x, y = problem(rng)
    value, grads = kiln.jit(kiln.value_and_grad(loss), autocast=dtype)(
        params, x, y)
    assert all(np.asarray(g).dtype == np.float32 for g in grads.values())
    want_value, want = reference(params, x, y, narrow)
    exact_value, exact = reference(params, x, y, None)
    # Against the rounded reference: f32 accumulation error only.
    np.testing.assert_allclose(value, want_value, rtol=2e-5)
    assert largest_error(grads, want) < 2e-5
    # Against plain float64: the half-precision rounding shows (so the
    # casts are there), and stays small.
    assert 1e-4 < largest_error(grads, exact) < 3e-2


def test_f32_step_without_autocast_is_exact_to_f32(rng):
    params, x, y = problem(rng)
    _, grads = kiln.jit(kiln.value_and_grad(loss))(params, x, y)
    _, exact = reference(params, x, y, None)
    assert largest_error(grads, exact) < 2e-5


def test_float64_products_are_left_alone(rng):
    params, x, y = problem(rng)
    params = {k: np.float64(v) for k, v in params.items()}
    _, grads = kiln.jit(kiln.value_and_grad(loss), autocast="bf16")(
        params, np.float64(x), np.float64(y))
    _, exact = reference(params, x, y, None)
    assert largest_error(grads, exact) < 1e-12


def test_unknown_dtype_is_refused():
    with pytest.raises(ValueError, match="autocast is 'bf16' or 'f16'"):
        kiln.jit(lambda x: x, autocast="fp8")


def host_has_bf16_dot_products():
    """AVX512-BF16 or AMX-BF16, read from /proc/cpuinfo (the compiler asks
    LLVM instead)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        pytest.skip("no /proc/cpuinfo")
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def test_bf16_warns_where_the_cpu_has_no_bf16_dot_products(rng, monkeypatch):
    """bf16 autocast on a CPU without bf16 dot products runs emulated,
    slower than f32: the compiler's warning reaches Python as a
    RuntimeWarning (and does not where the CPU has them)."""
    monkeypatch.delenv("KILN_CACHE_DIR", raising=False)
    params, x, y = problem(rng)
    step = kiln.jit(kiln.value_and_grad(loss), autocast="bf16")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(params, x, y)
    messages = [str(w.message) for w in caught
                if issubclass(w.category, RuntimeWarning)]
    slow = [m for m in messages if "no bf16 dot-product instructions" in m]
    compiled = kiln.jit(kiln.value_and_grad(loss), autocast="bf16").compile(
        params, x, y)
    if host_has_bf16_dot_products():
        assert slow == []
        assert compiled.warnings == []
    else:
        assert len(slow) == 1, messages
        assert "oneDNN emulates them" in slow[0]
        assert len(compiled.warnings) == 1
        assert slow[0].endswith(compiled.warnings[0])
