"""Where a jitted function runs: kiln.jit(f, device="cuda").

A CUDA function is compiled by the same C++ JIT (JitOptions::device) and
called through kiln_runtime, which owns the device: its results are
kiln_runtime.DeviceArrays that stay in the GPU's memory, and its arguments
may be numpy arrays and numbers (copied to the device by the call),
DeviceArrays (of any kiln module or jitted function on that device) and
other libraries' arrays with __dlpack__ (PyTorch, JAX, CuPy: read in
place). The signature of a GPU array is read from it, without copying it.
"""

import re

import kiln_runtime
import numpy as np

from ._core import fail

DEVICES = ("cpu", "cuda")


def check_device(device, cuda_arch):
    """The device name kiln.jit was given, checked ("cpu" for None)."""
    device = "cpu" if device is None else device
    if device not in DEVICES:
        fail(f"kiln.jit: device is 'cpu' or 'cuda', not {device!r}",
             ValueError)
    if cuda_arch is not None:
        if device != "cuda":
            fail("kiln.jit: cuda_arch chooses the GPU architecture of "
                 "device='cuda'", TypeError)
        if not isinstance(cuda_arch, str) or not re.fullmatch(r"sm_\d+",
                                                              cuda_arch):
            fail(f"kiln.jit: cuda_arch is an architecture such as 'sm_90', "
                 f"not {cuda_arch!r}", ValueError)
    return device


#: kiln.jit's keywords for device='cuda' alone, as kiln-compile's flags of
#: those names (--cuda-tf32, ...; cuda_cudnn_attention=False and
#: cuda_attention_tuning=False as --no-cuda-cudnn-attention and
#: --no-cuda-attention-tuning), with their defaults.
CUDA_FLAGS = {"cuda_tf32": False, "cuda_deterministic": False,
              "cuda_attention_3xtf32": False, "cuda_cudnn_attention": True,
              "cuda_attention_tuning": True}


def check_cuda_flags(device, flags):
    """The CUDA flags (a dict of CUDA_FLAGS to their values), checked:
    booleans, and none but at its default without device='cuda'."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            fail(f"kiln.jit: {name} is True or False, not {value!r}",
                 TypeError)
        if value != CUDA_FLAGS[name] and device != "cuda":
            fail(f"kiln.jit: {name} is an option of device='cuda'",
                 TypeError)
    return dict(flags)


def gpu_leaf_signature(leaf, where):
    """(numpy dtype, shape) of a DeviceArray or another library's array
    (anything with __dlpack__), or None for any other leaf."""
    if isinstance(leaf, np.ndarray) or not hasattr(leaf, "__dlpack__"):
        return None
    signature = kiln_runtime._runtime.array_signature(leaf)
    if signature is None:
        fail(f"kiln.jit: {where} has a DLPack dtype kiln has no dtype for",
             TypeError)
    dtype, shape = signature
    if isinstance(dtype, str):
        fail(f"kiln.jit: {where} has dtype {dtype}, which numpy (and so the "
             f"tracer) has no type for here; bf16 needs the ml_dtypes "
             f"package", TypeError)
    return dtype, tuple(int(d) for d in shape)


_capability = None


def require_cuda(name):
    """Raises unless this machine has a CUDA device calls can run on."""
    global _capability
    if _capability is not None:
        return
    try:
        _capability = kiln_runtime.cuda_compute_capability()
    except RuntimeError as error:
        fail(f"kiln.jit: '{name}' runs on a CUDA GPU (device='cuda'), and "
             f"this machine has none: {error}. Compiling and saving "
             f"(.compile(...).save(path)) work without one", RuntimeError)


class CudaFunction:
    """A compiled CUDA function loaded by kiln_runtime, whose calls leave
    their outputs on the device."""

    __slots__ = ("function", "output_count")

    def __init__(self, compiled):
        # The module the compile loaded, shared (not loaded again).
        module = kiln_runtime.Module._share(compiled._module_capsule())
        self.function = module[compiled.name]
        self.output_count = len(self.function.outputs)

    def call(self, leaves):
        """The outputs, as a tuple of DeviceArrays."""
        outputs = self.function.call_on_device(*leaves)
        return (outputs,) if self.output_count == 1 else outputs
