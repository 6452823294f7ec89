"""kiln_runtime, the runtime-only package: modules written by kiln-compile
and by kiln.jit(...).compile(...).save(), signatures, calls on numpy
arrays, and errors for calls that do not match a signature."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln_runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("KILN_BIN_DIR", os.path.join(ROOT, "build", "bin"))


@pytest.fixture(scope="module")
def newton(tmp_path_factory):
    """examples/models/newton_sqrt.mlir compiled by kiln-compile."""
    path = tmp_path_factory.mktemp("kmod") / "newton.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"),
                    os.path.join(ROOT, "examples/models/newton_sqrt.mlir"),
                    "-o", str(path)], check=True)
    return kiln_runtime.load(path)


def test_lists_functions_and_signatures(newton):
    assert newton.device == "cpu"
    assert "x86_64" in newton.target
    assert newton.function_names == ["newton_sqrt"]
    function = newton["newton_sqrt"]
    assert function.name == "newton_sqrt"
    assert function.inputs == [("x", np.dtype(np.float32), (4,))]
    assert function.outputs == [("root", np.dtype(np.float32), (4,)),
                                ("iterations", np.dtype(np.int64), ())]


def test_calls_on_numpy_arrays(newton):
    x = np.load(os.path.join(ROOT, "examples/models/newton_sqrt_input.npy"))
    root, iterations = newton["newton_sqrt"](x)
    assert root.dtype == np.float32 and root.shape == (4,)
    np.testing.assert_allclose(root, np.sqrt(x), rtol=2e-6)
    assert iterations.shape == () and 1 < int(iterations) < 100
    # The outputs own their memory: they outlive the module and other calls.
    again, _ = newton["newton_sqrt"](x * 4)
    np.testing.assert_allclose(root, np.sqrt(x), rtol=2e-6)
    np.testing.assert_allclose(again, 2 * np.sqrt(x), rtol=2e-6)


def test_inputs_may_be_lists_and_views(newton):
    function = newton["newton_sqrt"]
    root, _ = function([4.0, 9.0, 16.0, 25.0])
    np.testing.assert_allclose(root, [2, 3, 4, 5], rtol=1e-6)
    wide = np.array([[4.0, 0], [9.0, 0], [16.0, 0], [25.0, 0]], np.float32)
    root, _ = function(wide[:, 0])                    # strided view
    np.testing.assert_allclose(root, [2, 3, 4, 5], rtol=1e-6)


def test_call_errors_name_the_input(newton):
    function = newton["newton_sqrt"]
    with pytest.raises(ValueError, match=r"function 'newton_sqrt': input 0 "
                       r"\('x'\) has shape \[5\] but the signature expects "
                       r"\[4\]"):
        function(np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"input 0 \('x'\) has dtype float64 "
                       r"but f32 \(float32\) is expected"):
        function(np.ones(4))
    with pytest.raises(TypeError, match="takes 1 input but 2 were given"):
        function(np.ones(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(KeyError, match="no function 'sqrt'"):
        newton["sqrt"]


def test_load_errors(tmp_path):
    with pytest.raises(RuntimeError, match="missing.kmod"):
        kiln_runtime.load(tmp_path / "missing.kmod")
    bad = tmp_path / "bad.kmod"
    bad.write_bytes(b"not a module at all" * 10)
    with pytest.raises((ValueError, RuntimeError)):
        kiln_runtime.load(bad)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        kiln_runtime.load(bad, device="tpu")


def test_loads_from_bytes(newton, tmp_path):
    path = tmp_path / "copy.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"),
                    os.path.join(ROOT, "examples/models/newton_sqrt.mlir"),
                    "-o", str(path)], check=True)
    module = kiln_runtime.load_bytes(path.read_bytes())
    root, _ = module["newton_sqrt"](np.full(4, 49.0, np.float32))
    np.testing.assert_allclose(root, 7.0, rtol=1e-6)


def test_the_runtime_package_needs_no_compiler():
    """kiln_runtime loads without the kiln package and links no LLVM."""
    code = ("import sys, kiln_runtime; "
            "assert 'kiln' not in sys.modules and 'kiln._kiln' not in "
            "sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env=dict(os.environ))
    import kiln_runtime._runtime as extension
    libraries = subprocess.run(["ldd", extension.__file__], check=True,
                               capture_output=True, text=True).stdout
    assert "libLLVM" not in libraries and "MLIR" not in libraries


def test_calls_leave_their_inputs_unchanged(tmp_path):
    """An update computed from an argument (dynamic_update_slice and
    scatter_add of it, a loop that carries it: in place on the argument's
    buffer before kiln-read-only-arguments) must not write into the
    caller's array, which the runtime passes without a copy."""
    source = tmp_path / "updates.mlir"
    source.write_text("""
func.func @updates(%x: tensor<6xf32>, %i: tensor<i64>, %u: tensor<2xf32>,
                   %t: tensor<5x2xf64>, %ids: tensor<3xi32>,
                   %rows: tensor<3x2xf64>)
    -> (tensor<6xf32>, tensor<5x2xf64>, tensor<2xf32>) {
  %s = kiln.dynamic_update_slice %x[%i], %u : tensor<6xf32>, tensor<2xf32>
  %a = kiln.scatter_add %t, %ids, %rows : tensor<5x2xf64>, tensor<3xi32>, tensor<3x2xf64>
  %h = kiln.for 3 iterations (%u) : (tensor<2xf32>) {
  ^bb0(%k: tensor<i64>, %c: tensor<2xf32>):
    %n = kiln.tanh %c : tensor<2xf32>
    kiln.yield %n : tensor<2xf32>
  }
  return %s, %a, %h : tensor<6xf32>, tensor<5x2xf64>, tensor<2xf32>
}
""")
    path = tmp_path / "updates.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"), str(source), "-o",
                    str(path)], check=True)
    function = kiln_runtime.load(path)["updates"]
    x = np.arange(6, dtype=np.float32)
    t = np.arange(10, dtype=np.float64).reshape(5, 2)
    ids = np.array([4, 0, 4], np.int32)
    rows = np.ones((3, 2))
    u = np.array([0.5, -0.25], np.float32)
    x0, t0, u0 = x.copy(), t.copy(), u.copy()
    s, a, h = function(x, np.array(1, np.int64), u, t, ids, rows)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_array_equal(u, u0)
    np.testing.assert_allclose(h, np.tanh(np.tanh(np.tanh(u0))), rtol=1e-6)
    np.testing.assert_array_equal(s, [0, 0.5, -0.25, 3, 4, 5])
    want = t0.copy()
    np.add.at(want, ids, rows)
    np.testing.assert_array_equal(a, want)


def test_memory_stats_count_the_code_buffers(tmp_path):
    """kiln_runtime.memory_stats() counts the buffers compiled code
    allocates: two kiln.conds (on different predicates, so that they stay
    two, and the second reads the first's sum, so that they run in turn)
    each yield a 1 MiB tensor that one reduction reads; each is freed after
    that reader (kiln-free-after-last-use), so the call's peak holds one of
    them, not both, and nothing is left allocated after the call."""
    source = tmp_path / "conds.mlir"
    source.write_text("""
func.func @conds(%p: tensor<i1>, %q: tensor<i1>, %x: tensor<262144xf32>) -> tensor<f32> {
  %a = kiln.cond %p, (%x) : tensor<i1>, (tensor<262144xf32>) -> (tensor<262144xf32>) {
  ^bb0(%v: tensor<262144xf32>):
    %e = kiln.exp %v : tensor<262144xf32>
    kiln.yield %e : tensor<262144xf32>
  } else {
  ^bb0(%v: tensor<262144xf32>):
    %t = kiln.tanh %v : tensor<262144xf32>
    kiln.yield %t : tensor<262144xf32>
  }
  %s = kiln.reduce_sum %a, dims = [0] : tensor<262144xf32>
  %b = kiln.cond %q, (%x, %s) : tensor<i1>, (tensor<262144xf32>, tensor<f32>) -> (tensor<262144xf32>) {
  ^bb0(%v: tensor<262144xf32>, %c: tensor<f32>):
    %e = kiln.sin %v : tensor<262144xf32>
    kiln.yield %e : tensor<262144xf32>
  } else {
  ^bb0(%v: tensor<262144xf32>, %c: tensor<f32>):
    %t = kiln.cos %v : tensor<262144xf32>
    %cb = kiln.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<262144xf32>
    %u = kiln.add %t, %cb : tensor<262144xf32>
    kiln.yield %u : tensor<262144xf32>
  }
  %t = kiln.reduce_sum %b, dims = [0] : tensor<262144xf32>
  %r = kiln.add %s, %t : tensor<f32>
  return %r : tensor<f32>
}
""")
    path = tmp_path / "conds.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"), str(source), "-o",
                    str(path)], check=True)
    function = kiln_runtime.load(path)["conds"]
    x = np.linspace(-1, 1, 262144, dtype=np.float32)
    held = kiln_runtime.memory_stats()["held_bytes"]
    kiln_runtime.reset_memory_peak()
    got = function(np.array(True), np.array(False), x)
    stats = kiln_runtime.memory_stats()
    first = np.exp(x.astype(np.float64)).sum()
    np.testing.assert_allclose(
        got, first + np.cos(x.astype(np.float64)).sum() + x.size * first,
        rtol=1e-4)
    mib = 1 << 20
    assert stats["held_bytes"] == held
    assert stats["allocations"] >= 2
    assert mib <= stats["peak_bytes"] - held < 2 * mib, stats
