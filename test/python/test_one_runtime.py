"""kiln and kiln_runtime in one process share one runtime
(libkiln_runtime.so): kiln.jit's functions and the modules kiln_runtime
loads count in the same memory statistics and time in the same profiler."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln_runtime


def two_halves(p, x):
    """A cond that yields a 1 MiB buffer of its own, which one reduction
    reads and which is freed after it."""
    y = kiln.cond(p, lambda v: knp.exp(v), lambda v: knp.tanh(v), x)
    return knp.sum(y)


def test_memory_stats_count_jit_functions():
    x = np.linspace(0, 1, 262144, dtype=np.float32)
    function = kiln.jit(two_halves)
    function(np.array(True), x)  # compiled before the count
    held = kiln_runtime.memory_stats()["held_bytes"]
    kiln_runtime.reset_memory_peak()
    got = function(np.array(False), x)
    stats = kiln_runtime.memory_stats()
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64)).sum(),
                               rtol=1e-4)
    assert stats["held_bytes"] == held, stats
    assert stats["allocations"] >= 1, stats
    assert stats["peak_bytes"] - held >= 1 << 20, stats


def layer(x, w):
    return knp.tanh(x @ w)


def test_one_profiler_sees_jit_functions_and_loaded_modules(tmp_path):
    assert kiln.profiler.regions is kiln_runtime.profiler.regions
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    path = tmp_path / "loaded.kmod"
    kiln.jit(layer, name="loaded", profile=True).compile(x, w).save(path)
    loaded = kiln_runtime.load(path)["loaded"]
    jitted = kiln.jit(layer, name="jitted", profile=True)
    jitted(x, w)
    with kiln.profiler.profile():
        for _ in range(3):
            loaded(x, w)
            jitted(x, w)
    names = {r["name"]: r["count"] for r in kiln_runtime.profiler.regions()}
    assert names.get("call @loaded") == 3, names
    assert names.get("call @jitted") == 3, names


def test_both_extensions_load_one_runtime_library():
    """In a fresh process, importing both packages maps one
    libkiln_runtime.so, which both extensions need."""
    script = ("import kiln, kiln_runtime\n"
              "maps = open('/proc/self/maps').read().split('\\n')\n"
              "print(sorted({l.split()[-1] for l in maps "
              "if l.endswith('libkiln_runtime.so')}))\n")
    out = subprocess.run([sys.executable, "-c", script], check=True,
                         capture_output=True, text=True,
                         env=dict(os.environ)).stdout
    paths = eval(out)
    assert len(paths) == 1, out
    assert os.path.dirname(paths[0]) == os.path.join(
        os.path.dirname(kiln_runtime.__file__), "_libs")


def test_cuda_functions_call_the_module_the_compile_loaded(monkeypatch):
    """kiln.jit's CUDA functions are called through kiln_runtime, on the
    module the compile loaded: a second load would compile its code for
    the device and copy its constants there again. Shown on a CPU module,
    which takes the same path; the shared module outlives the jit function
    that loaded it."""
    import gc
    from kiln import _device

    def second_load(*args, **kwargs):
        raise AssertionError("the module was loaded a second time")

    monkeypatch.setattr(kiln_runtime, "load_bytes", second_load)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    jitted = kiln.jit(layer, name="shared")
    shared = _device.CudaFunction(jitted.compile(x, w)._entry.compiled)
    del jitted
    gc.collect()
    np.testing.assert_allclose(shared.function(x, w), np.tanh(x @ w),
                               rtol=1e-5, atol=1e-6)
    assert shared.output_count == 1


def test_share_refuses_other_capsules():
    with pytest.raises(TypeError, match="capsule of a loaded module"):
        kiln_runtime.Module._share(np.ones(3).__dlpack__())
