"""kiln.jit(f, device="cuda"): compiled for the GPU, called through
kiln_runtime, with results that stay on the device.

Without a GPU: the module's target and architecture, saving it, the
signatures read from other libraries' arrays (host DLPack arrays here),
the option errors, the CUDA options (3xTF32 attention, deterministic
sums) reaching the kernels' PTX and the module cache's key, and the
error of a call. With one (skipped without,
failing instead under KILN_REQUIRE_CUDA=1): results against numpy and
the CPU's jit, chains of calls on DeviceArrays, a training loop, and
PyTorch's GPU tensors in and out."""

import os
import warnings

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln_runtime
from conftest import Exported


def layer(x, w):
    y = knp.tanh(x @ w)
    return y, knp.sum(y * y)


def layer_reference(x, w):
    y = np.tanh(x.astype(np.float64) @ w.astype(np.float64))
    return y, np.sum(y * y)


def device_capability():
    try:
        return kiln_runtime.cuda_compute_capability()
    except RuntimeError:
        return None


@pytest.fixture
def gpu():
    """Skips without a CUDA device (fails under KILN_REQUIRE_CUDA=1)."""
    try:
        kiln_runtime.cuda_compute_capability()
    except RuntimeError as exc:
        if os.environ.get("KILN_REQUIRE_CUDA") == "1":
            raise
        pytest.skip(f"no CUDA device: {exc}")


def test_compiles_and_saves_a_cuda_module_without_a_device(tmp_path, rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    w = rng.standard_normal((7, 3)).astype(np.float32)
    f = kiln.jit(layer, device="cuda", cuda_arch="sm_90")
    compiled = f.compile(x, w)
    compiled.save(tmp_path / "layer.kmod")
    module = kiln_runtime.load(tmp_path / "layer.kmod")
    assert module.device == "cuda"
    assert module.target == "cuda-sm_90"
    assert [shape for _, _, shape in module["layer"].inputs] == [(5, 7), (7, 3)]
    assert [shape for _, _, shape in module["layer"].outputs] == [(5, 3), ()]
    assert f.cache_size == 1


def test_the_default_architecture_is_the_devices(tmp_path, rng):
    x = rng.standard_normal((2, 2)).astype(np.float32)
    kiln.jit(layer, device="cuda").compile(x, x).save(tmp_path / "f.kmod")
    target = kiln_runtime.load(tmp_path / "f.kmod").target
    capability = device_capability()
    if capability is None:
        assert target == "cuda-sm_80"
        return
    number = capability[0] * 10 + capability[1]
    newest = max(a for a in (70, 75, 80, 86, 89, 90) if a <= number)
    assert target == f"cuda-sm_{newest}"


def test_signatures_come_from_dlpack_arrays(rng):
    x = rng.standard_normal((5, 7))
    w = rng.integers(-3, 3, (7,), dtype=np.int32)
    f = kiln.jit(lambda x, w: x * w, device="cuda", cuda_arch="sm_80")
    text = f.lower(Exported(x), Exported(w)).as_text()
    assert "tensor<5x7xf64>" in text and "tensor<7xi32>" in text
    # The same signature from numpy arrays: one compilation for both.
    f.compile(x, w)
    f.compile(Exported(x), Exported(w))
    assert f.cache_size == 1


def test_a_cpu_function_refuses_dlpack_arrays_by_name(rng):
    x = rng.standard_normal((3,)).astype(np.float32)
    with pytest.raises(TypeError, match=r"argument leaf 0 is a "
                       r"conftest\.Exported, an array of another library or "
                       r"on a GPU; .*"
                       r"device='cuda' takes this one"):
        kiln.jit(lambda x: x + 1)(Exported(x))


def test_a_torch_tensor_is_refused_as_a_torch_tensor():
    """Not as a "Tensor", which would read as kiln.Tensor."""
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"argument leaf 0 is a torch\.Tensor, "
                       r"an array of another library"):
        kiln.jit(lambda x: x + 1)(torch.ones(3))


def test_a_builtin_is_refused_by_its_plain_name():
    with pytest.raises(TypeError, match=r"argument leaf 0 is a str, not an "
                       r"array or a number"):
        kiln.jit(lambda x: x + 1)("x")


def test_options_cuda_does_not_take_are_refused():
    with pytest.raises(ValueError, match="device is 'cpu' or 'cuda', not 'tpu'"):
        kiln.jit(layer, device="tpu")
    with pytest.raises(TypeError, match="cuda_arch chooses the GPU"):
        kiln.jit(layer, cuda_arch="sm_90")
    with pytest.raises(ValueError, match="an architecture such as 'sm_90'"):
        kiln.jit(layer, device="cuda", cuda_arch="90")
    with pytest.raises(TypeError, match="runs in one process"):
        kiln.jit(layer, device="cuda",
                 comm=kiln.distributed.single())
    with pytest.raises(TypeError, match="not supported with device='cuda'"):
        kiln.jit(layer, device="cuda", profile=True)
    x = np.ones((2, 2), np.float32)
    with pytest.raises(kiln.JitError,
                       match="unsupported CUDA architecture 'sm_60'"):
        kiln.jit(layer, device="cuda", cuda_arch="sm_60").compile(x, x)


def test_donations_on_a_gpu_are_left_with_a_warning():
    x = np.ones((4,), np.float32)
    f = kiln.jit(lambda a, b: (a * 2, b + a), device="cuda",
                 cuda_arch="sm_80", donate_argnums=(0,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f.compile(x, x)
    assert any("on a GPU every output gets its own buffer" in str(w.message)
               for w in caught), [str(w.message) for w in caught]


def test_a_call_without_a_device_says_so_before_compiling():
    if device_capability() is not None:
        pytest.skip("this machine has a CUDA device")
    f = kiln.jit(layer, device="cuda")
    x = np.ones((2, 2), np.float32)
    with pytest.raises(RuntimeError, match=r"'layer' runs on a CUDA GPU "
                       r"\(device='cuda'\), and this machine has none: no "
                       r"CUDA driver found"):
        f(x, x)
    assert f.cache_size == 0


def test_results_stay_on_the_device_and_match_numpy(gpu, tmp_path, rng):
    x = rng.standard_normal((33, 65)).astype(np.float32)
    w = rng.standard_normal((65, 17)).astype(np.float32)
    f = kiln.jit(layer, device="cuda")
    y, s = f(x, w)
    assert isinstance(y, kiln_runtime.DeviceArray)
    assert isinstance(s, kiln_runtime.DeviceArray)
    assert y.shape == (33, 17) and y.dtype == np.float32
    want_y, want_s = layer_reference(x, w)
    np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(s), want_s, rtol=1e-5)
    # A DeviceArray and a host DLPack array are the same signature.
    f.compile(x, w).save(tmp_path / "layer.kmod")
    dx = kiln_runtime.load(tmp_path / "layer.kmod").to_device(x)
    y2, _ = f(dx, Exported(w))
    np.testing.assert_array_equal(np.asarray(y2), np.asarray(y))
    assert f.cache_size == 1
    # A result is the next function's argument, where it lies.
    twice = kiln.jit(lambda a: a * 2, device="cuda")
    np.testing.assert_array_equal(np.asarray(twice(y)), 2 * np.asarray(y))


def test_a_training_loop_keeps_its_parameters_on_the_device(gpu, rng):
    def loss(w, x, t):
        return knp.mean((knp.tanh(x @ w) - t) ** 2)

    def step(w, x, t):
        value, g = kiln.value_and_grad(loss)(w, x, t)
        return w - 0.1 * g, value

    x = rng.standard_normal((64, 16)).astype(np.float32)
    t = rng.standard_normal((64, 4)).astype(np.float32)
    w0 = (0.1 * rng.standard_normal((16, 4))).astype(np.float32)
    on_gpu, on_cpu = kiln.jit(step, device="cuda"), kiln.jit(step)
    w_gpu, w_cpu = w0, w0
    for _ in range(20):
        w_gpu, l_gpu = on_gpu(w_gpu, x, t)
        w_cpu, l_cpu = on_cpu(w_cpu, x, t)
    assert isinstance(w_gpu, kiln_runtime.DeviceArray)
    np.testing.assert_allclose(np.asarray(w_gpu), w_cpu, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(l_gpu), l_cpu, rtol=1e-4)
    # numpy parameters first, DeviceArrays after: one signature.
    assert on_gpu.cache_size == 1


def test_torch_tensors_go_in_and_out_without_copies(gpu, rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    x = torch.randn(9, 12, device="cuda")
    w = torch.randn(12, 5, device="cuda")
    y, s = kiln.jit(layer, device="cuda")(x, w)
    ty = torch.from_dlpack(y)
    assert ty.device.type == "cuda"
    assert ty.data_ptr() == y.__cuda_array_interface__["data"][0]
    torch.testing.assert_close(ty, torch.tanh(x @ w), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.from_dlpack(s), (ty * ty).sum(),
                               rtol=1e-5, atol=1e-5)


def attention_loss(q, k, v):
    o = kiln.nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    return knp.sum(o * o)


def ptx_products(path):
    """The module's TF32 (m16n8k8) and half (m16n8k16) tensor-core
    products, as PTX instructions in its .kmod."""
    data = path.read_bytes()
    return (data.count(b"mma.sync.aligned.m16n8k8"),
            data.count(b"mma.sync.aligned.m16n8k16"))


def test_cuda_attention_options_reach_the_kernels(tmp_path, rng):
    q, k, v = (rng.standard_normal((2, 64, 64)).astype(np.float32)
               for _ in range(3))
    grad = kiln.grad(attention_loss, argnums=(0, 1, 2))
    plain = kiln.jit(grad, device="cuda", cuda_arch="sm_90",
                     cuda_attention_tuning=False)
    plain.compile(q, k, v).save(tmp_path / "plain.kmod")
    assert ptx_products(tmp_path / "plain.kmod") == (0, 0)
    # By default a tuned call site carries the 3xTF32 kernels beside the
    # f32 ones (those without tensor-core products).
    tuned = kiln.jit(grad, device="cuda", cuda_arch="sm_90")
    tuned.compile(q, k, v).save(tmp_path / "tuned.kmod")
    data = (tmp_path / "tuned.kmod").read_bytes()
    assert ptx_products(tmp_path / "tuned.kmod")[0] > 0
    assert b"f32,3xtf32" in data
    tf32 = kiln.jit(grad, device="cuda", cuda_arch="sm_90",
                    cuda_attention_3xtf32=True)
    tf32.compile(q, k, v).save(tmp_path / "3xtf32.kmod")
    products, halves = ptx_products(tmp_path / "3xtf32.kmod")
    assert products > 0 and halves == 0
    # Below sm_80 the option is ignored, as kiln-compile's.
    old = kiln.jit(grad, device="cuda", cuda_arch="sm_75",
                   cuda_attention_3xtf32=True)
    old.compile(q, k, v).save(tmp_path / "sm75.kmod")
    assert ptx_products(tmp_path / "sm75.kmod") == (0, 0)


def test_half_attention_goes_to_cudnn_unless_asked_otherwise(
        tmp_path, monkeypatch, rng):
    # f16 attention and its gradient: by default tuned call sites of
    # kiln's tensor-core kernels and cuDNN's fused attention (its calls
    # and the sites' variant names in the module); with
    # cuda_cudnn_attention=False kiln's kernels alone, compiled anew
    # rather than taken from the module cache.
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    q, k, v = (rng.standard_normal((2, 64, 64)).astype(np.float16)
               for _ in range(3))
    grad = kiln.grad(attention_loss, argnums=(0, 1, 2))
    default = kiln.jit(grad, device="cuda", cuda_arch="sm_90")
    default.compile(q, k, v).save(tmp_path / "default.kmod")
    data = (tmp_path / "default.kmod").read_bytes()
    assert b"kiln_cuda_attention_grad" in data
    assert b"kiln,cudnn" in data
    assert ptx_products(tmp_path / "default.kmod")[1] > 0
    own = kiln.jit(grad, device="cuda", cuda_arch="sm_90",
                   cuda_cudnn_attention=False)
    compiled = own.compile(q, k, v)
    assert not compiled.from_cache
    compiled.save(tmp_path / "own.kmod")
    data = (tmp_path / "own.kmod").read_bytes()
    assert b"kiln_cuda_attention" not in data
    assert ptx_products(tmp_path / "own.kmod")[1] > 0
    # cuDNN alone, without tuning: no tensor-core kernel of kiln's.
    alone = kiln.jit(grad, device="cuda", cuda_arch="sm_90",
                     cuda_attention_tuning=False)
    alone.compile(q, k, v).save(tmp_path / "alone.kmod")
    assert b"kiln_cuda_attention_grad" in (tmp_path / "alone.kmod").read_bytes()
    assert ptx_products(tmp_path / "alone.kmod")[1] == 0


def test_cuda_options_key_the_module_cache(tmp_path, monkeypatch, rng):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    q, k, v = (rng.standard_normal((1, 32, 16)).astype(np.float32)
               for _ in range(3))
    first = kiln.jit(attention_loss, device="cuda", cuda_arch="sm_90",
                     cuda_attention_tuning=False)
    first.compile(q, k, v).save(tmp_path / "first.kmod")
    other = kiln.jit(attention_loss, device="cuda", cuda_arch="sm_90",
                     cuda_attention_tuning=False, cuda_attention_3xtf32=True)
    compiled = other.compile(q, k, v)
    compiled.save(tmp_path / "other.kmod")
    assert not compiled.from_cache
    assert ptx_products(tmp_path / "first.kmod")[0] == 0
    assert ptx_products(tmp_path / "other.kmod")[0] > 0
    # Tuning is part of the key too: the default is compiled anew, with
    # the 3xTF32 kernels beside the f32 ones.
    tuned = kiln.jit(attention_loss, device="cuda", cuda_arch="sm_90")
    compiled = tuned.compile(q, k, v)
    compiled.save(tmp_path / "tuned.kmod")
    assert not compiled.from_cache
    assert ptx_products(tmp_path / "tuned.kmod")[0] > 0


def test_cuda_flags_need_the_cuda_device():
    for flag, other in (("cuda_tf32", True), ("cuda_deterministic", True),
                        ("cuda_attention_3xtf32", True),
                        ("cuda_cudnn_attention", False),
                        ("cuda_attention_tuning", False)):
        with pytest.raises(TypeError,
                           match=f"{flag} is an option of device='cuda'"):
            kiln.jit(layer, **{flag: other})
        with pytest.raises(TypeError, match=f"{flag} is True or False"):
            kiln.jit(layer, device="cuda", **{flag: "yes"})
    # A flag at its default is fine on the CPU.
    kiln.jit(layer, cuda_tf32=False)
    kiln.jit(layer, cuda_attention_tuning=True)


def test_cuda_deterministic_takes_the_attention_gradient_without_atomics(
        tmp_path, rng):
    q, k, v = (rng.standard_normal((2, 64, 64)).astype(np.float32)
               for _ in range(3))
    grad = kiln.grad(attention_loss, argnums=(0, 1, 2))
    for deterministic in (False, True):
        path = tmp_path / f"{deterministic}.kmod"
        kiln.jit(grad, device="cuda", cuda_arch="sm_90",
                 cuda_deterministic=deterministic).compile(q, k, v).save(path)
        atomics = path.read_bytes().count(b"atom.global.add.f32")
        assert (atomics == 0) == deterministic
