"""kiln.jit(..., profile=True) and kiln.profiler; kiln_runtime.profiler for
modules loaded by the runtime alone (test_one_runtime.py: the two are
one)."""

import json

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln_runtime


def layer(x, w):
    return knp.tanh(x @ w)


@pytest.fixture
def inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((64, 48)).astype(np.float32),
            rng.standard_normal((48, 32)).astype(np.float32))


def test_profiled_regions_trace_and_summary(tmp_path, inputs):
    x, w = inputs
    step = kiln.jit(layer, profile=True)
    expected = np.tanh(x.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_allclose(step(x, w), expected, rtol=1e-5, atol=1e-6)
    trace = tmp_path / "trace.json"
    assert not kiln.profiler.enabled()
    with kiln.profiler.profile(trace):
        assert kiln.profiler.enabled()
        for _ in range(4):
            step(x, w)
    assert not kiln.profiler.enabled()
    regions = {r["name"]: r for r in kiln.profiler.regions()}
    assert "call @layer" in regions, regions
    gemm = [n for n in regions if n.startswith("dnnl_sgemm 64x32x48")]
    assert gemm, regions
    for region in regions.values():
        assert region["count"] == 4
        assert 0 <= region["self_ns"] <= region["total_ns"]
    call = regions["call @layer"]
    assert call["total_ns"] >= sum(r["self_ns"] for r in regions.values()) - 1
    events = json.loads(trace.read_text())["traceEvents"]
    timed = [e for e in events if e.get("ph") == "X"]
    assert sum(e["name"] == "call @layer" for e in timed) == 4
    assert {e["name"] for e in timed} == set(regions)
    summary = kiln.profiler.summary(top=1)
    assert summary.startswith("profile: ")
    assert "call @layer" in summary or gemm[0] in summary
    assert "other regions" in summary


def test_nothing_is_collected_off_or_unprofiled(inputs):
    x, w = inputs
    plain = kiln.jit(layer, name="plain")
    profiled = kiln.jit(layer, name="profiled", profile=True)
    kiln.profiler.clear()
    profiled(x, w)  # the profiler is off
    assert kiln.profiler.regions() == []
    with kiln.profiler.profile():
        plain(x, w)
    assert kiln.profiler.regions() == []


def test_runtime_profiler_sees_the_modules_it_loads(tmp_path, inputs):
    x, w = inputs
    path = tmp_path / "layer.kmod"
    kiln.jit(layer, profile=True).compile(x, w).save(path)
    module = kiln_runtime.load(path)
    assert module.profile_region_count > 0
    plain = tmp_path / "plain.kmod"
    kiln.jit(layer, name="plain").compile(x, w).save(plain)
    assert kiln_runtime.load(plain).profile_region_count == 0
    kiln.profiler.clear()
    with kiln_runtime.profiler.profile():
        module["layer"](x, w)
        module["layer"](x, w)
    names = {r["name"]: r["count"] for r in kiln_runtime.profiler.regions()}
    assert names.get("call @layer") == 2, names


def test_write_trace_errors_name_the_file(tmp_path):
    with pytest.raises(OSError, match="no_such_dir"):
        kiln.profiler.write_trace(tmp_path / "no_such_dir" / "t.json")
