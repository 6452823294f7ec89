"""kiln's runtime for Python: load compiled modules and call them on numpy arrays.

    import kiln_runtime
    module = kiln_runtime.load("mlp.kmod")
    y = module["mlp"](x, w)      # numpy arrays in; one array, or a tuple

Needs only the runtime (no compiler): modules come from `kiln-compile` or
from `kiln.jit(f).compile(...).save(path)`. Inputs must match a function's
signature exactly (dtype and shape; see `Function.inputs`); C-contiguous,
aligned arrays of the right dtype are read in place, without a copy.

A CUDA module's tensors can stay on the GPU across calls:

    w = module.to_device(w)                  # a DeviceArray
    w, loss = module["step"].call_on_device(w, x)   # outputs stay there
    torch.from_dlpack(w)                     # no copy, through DLPack

and its functions take other libraries' GPU arrays (PyTorch, JAX, CuPy:
anything with `__dlpack__`) in place.

`kiln_runtime.data` reads training data from TFRecord files of tf.Example
records into numpy arrays.
"""

from ._runtime import (DeviceArray, Function, Module, cuda_compute_capability,
                       memory_stats, reset_memory_peak)
from . import data, profiler


def load(path, device=None):
    """Loads the .kmod file at `path` (optionally insisting on `device`,
    'cpu' or 'cuda')."""
    return Module.load(str(path), device)


def load_bytes(data, device=None):
    """Loads a module from its bytes."""
    return Module.from_bytes(bytes(data), device)


__all__ = ["DeviceArray", "Function", "Module", "cuda_compute_capability", "load",
           "load_bytes", "memory_stats", "reset_memory_peak", "data", "profiler"]
