"""kiln_runtime's arrays that stay on the device, and DLPack: other
libraries' arrays as inputs without a copy (host memory here, GPU memory
where there is one), DeviceArrays in chains of calls, DeviceArrays read by
PyTorch and JAX through DLPack, and the errors of each.

The GPU tests need a CUDA device and skip without one (they fail instead
under KILN_REQUIRE_CUDA=1); the PyTorch and JAX ones also need those
packages with CUDA in this interpreter."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln_runtime
from conftest import Exported

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("KILN_BIN_DIR", os.path.join(ROOT, "build", "bin"))

PROGRAM = """
func.func @step(%w: tensor<3x4xf32>, %x: tensor<4x2xf32>) -> (tensor<3x4xf32>, tensor<3x2xf32>) {
  %y = kiln.matmul %w, %x : tensor<3x4xf32>, tensor<4x2xf32>
  %h = kiln.constant dense<0.5> : tensor<3x4xf32>
  %w2 = kiln.mul %w, %h : tensor<3x4xf32>
  return %w2, %y : tensor<3x4xf32>, tensor<3x2xf32>
}
func.func @flags(%b: tensor<5xi1>, %n: tensor<5xi32>) -> tensor<5xi32> {
  %z = kiln.constant dense<0> : tensor<5xi32>
  %r = kiln.select %b, %n, %z : tensor<5xi1>, tensor<5xi32>
  return %r : tensor<5xi32>
}
"""


def compile_module(tmp_path, target):
    source = tmp_path / "step.mlir"
    source.write_text(PROGRAM)
    out = tmp_path / f"step.{target}.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"), str(source),
                    f"--target={target}", "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def cpu_module(tmp_path_factory):
    return kiln_runtime.load(compile_module(tmp_path_factory.mktemp("cpu"), "cpu"))


@pytest.fixture(scope="module")
def cuda_module(tmp_path_factory):
    path = compile_module(tmp_path_factory.mktemp("cuda"), "cuda")
    try:
        return kiln_runtime.load(path, "cuda")
    except RuntimeError as exc:
        if os.environ.get("KILN_REQUIRE_CUDA") == "1":
            raise
        pytest.skip(f"no CUDA device: {exc}")


def step_reference(w, x):
    return w * 0.5, w.astype(np.float64) @ x.astype(np.float64)


def test_host_dlpack_arrays_are_inputs(cpu_module):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    x = rng.standard_normal((4, 2)).astype(np.float32)
    held = sys.getrefcount(w)
    w2, y = cpu_module["step"](Exported(w), Exported(x))
    # The producer got its array back: the DLPack capsule's reference to it
    # was dropped after the call.
    assert sys.getrefcount(w) == held
    want_w2, want_y = step_reference(w, x)
    np.testing.assert_array_equal(w2, want_w2)
    np.testing.assert_allclose(y, want_y, rtol=1e-5)
    # A bool array as producers older than DLPack's bool type export it:
    # one-byte unsigned integers.
    mask = np.array([1, 0, 1, 1, 0], bool).view(np.uint8)
    flags = cpu_module["flags"](Exported(mask),
                                Exported(np.arange(5, dtype=np.int32)))
    np.testing.assert_array_equal(flags, [0, 0, 2, 3, 0])


def test_dlpack_inputs_of_another_dtype_or_layout_are_refused(cpu_module):
    step = cpu_module["step"]
    x = np.ones((4, 2), np.float32)
    with pytest.raises(ValueError, match=r"function 'step': input 0 .*has "
                       r"DLPack dtype float64 but f32 is expected"):
        step(Exported(np.ones((3, 4))), x)
    strided = np.ones((4, 3), np.float32).T
    with pytest.raises(ValueError, match="is a strided view"):
        step(Exported(strided), x)
    with pytest.raises(ValueError, match="has shape"):
        step(Exported(np.ones((4, 3), np.float32)), x)


def test_device_arrays_need_a_cuda_module(cpu_module):
    with pytest.raises(ValueError, match="compiled for cpu"):
        cpu_module.to_device(np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="was compiled for the CPU"):
        cpu_module["step"].call_on_device(np.ones((3, 4), np.float32),
                                          np.ones((4, 2), np.float32))


def test_device_arrays_stay_on_the_device(cuda_module):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    x = rng.standard_normal((4, 2)).astype(np.float32)
    step = cuda_module["step"]
    dw = cuda_module.to_device(w)
    assert isinstance(dw, kiln_runtime.DeviceArray)
    assert dw.shape == (3, 4) and dw.dtype == np.float32
    assert dw.device.startswith("cuda:")
    interface = dw.__cuda_array_interface__
    assert interface["shape"] == (3, 4) and interface["typestr"] == "<f4"
    assert interface["strides"] is None and interface["data"][0] != 0
    np.testing.assert_array_equal(dw.numpy(), w)
    # A chain of calls: each step's w is the next one's input.
    want = w
    for _ in range(3):
        dw, dy = step.call_on_device(dw, x)
        assert isinstance(dw, kiln_runtime.DeviceArray)
        want_y = want.astype(np.float64) @ x.astype(np.float64)
        want = want * 0.5
        np.testing.assert_allclose(dy.numpy(), want_y, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(dw), want)
    # A device array as an input of a plain call: host outputs.
    w2, y = step(dw, x)
    assert isinstance(w2, np.ndarray)
    np.testing.assert_array_equal(w2, want * 0.5)
    with pytest.raises(ValueError, match="has shape"):
        step(cuda_module.to_device(np.ones((4, 3), np.float32)), x)


def test_torch_exchanges_arrays_without_copies(cuda_module):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    step = cuda_module["step"]
    w = torch.randn(3, 4, device="cuda")
    x = torch.randn(4, 2, device="cuda")
    # PyTorch's GPU tensors are inputs in place; the outputs come to torch
    # through DLPack at the same device address.
    dw, dy = step.call_on_device(w, x)
    tw = torch.from_dlpack(dw)
    assert tw.device.type == "cuda"
    assert tw.data_ptr() == dw.__cuda_array_interface__["data"][0]
    torch.testing.assert_close(tw, w * 0.5)
    torch.testing.assert_close(torch.from_dlpack(dy), w @ x, rtol=1e-5, atol=1e-5)
    # Work queued by PyTorch just before the call is seen by it.
    big = torch.zeros(3, 4, device="cuda")
    for _ in range(50):
        big.add_(1.0)
    w2, _ = step(big, x)
    np.testing.assert_array_equal(w2, np.full((3, 4), 25.0, np.float32))
    # Strided GPU views are refused, naming the input.
    with pytest.raises(ValueError, match="strided view"):
        step(torch.randn(4, 3, device="cuda").t(), x)
    with pytest.raises(ValueError, match="DLPack dtype float64"):
        step(w.double(), x)


def test_jax_reads_device_arrays(cuda_module):
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX without a GPU")
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    dw, _ = cuda_module["step"].call_on_device(cuda_module.to_device(w),
                                               np.ones((4, 2), np.float32))
    got = jax.dlpack.from_dlpack(dw)
    np.testing.assert_array_equal(np.asarray(got), w * 0.5)
