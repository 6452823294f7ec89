"""What the rest of the package shares: the C++ module, dtypes, errors and
the conversion of Python values to traced arrays."""

import os

import numpy as np

from . import _kiln, _tree

Tensor = _kiln.Tensor
TraceError = _kiln.TraceError
JitError = _kiln.JitError

_kiln.set_package_directory(os.path.dirname(os.path.abspath(__file__)) + os.sep)

# The element types the tracer offers, by code and by numpy dtype (bfloat16
# where the ml_dtypes package gives numpy one).
_DTYPE_OF_CODE = {code: np.dtype(dtype) for code, dtype in _kiln.traced_dtypes()}
_CODE_OF_DTYPE = {dtype: code for code, dtype in _DTYPE_OF_CODE.items()}
TRACED_DTYPES = tuple(_DTYPE_OF_CODE.values())
BFLOAT16 = next((d for d in TRACED_DTYPES if d.name == "bfloat16"), None)


def is_float_dtype(dtype):
    """True for numpy's floats and ml_dtypes' bfloat16 (whose numpy kind is
    'V')."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype == BFLOAT16


class ConcretizationError(TraceError, TypeError):
    """A traced array was used where Python needs a concrete value (`if`,
    `while`, `float()`, `int()`, numpy)."""


def location_prefix():
    """'file:line: ' of the user's line that called into kiln, or ''."""
    where = _kiln.caller_location()
    return f"{where[0]}:{where[1]}: " if where else ""


def fail(message, error=TraceError):
    """Raises `error` with `message`, prefixed by the user's file:line."""
    raise error(f"{location_prefix()}error: {message}")


class MissingDtype:
    """A dtype kiln traces that this Python cannot name (bfloat16 without
    ml_dtypes). Every use fails and says which package provides it, where
    None would pass silently: `x.astype(None)` is numpy's float64, and
    `zeros(shape, dtype=None)` a function's default."""

    def __init__(self, name, package):
        self.name = name
        self.package = package

    def __repr__(self):
        return f"<{self.name}: needs the {self.package} package>"

    def __call__(self, *args, **kwargs):
        numpy_dtype(self)


def numpy_dtype(dtype):
    """np.dtype(dtype) for a dtype a user named, refusing None (which numpy
    reads as float64) and the dtypes this Python lacks."""
    if isinstance(dtype, MissingDtype):
        fail(f"dtype {dtype.name} needs the {dtype.package} package, which "
             f"this Python does not have (pip install {dtype.package})",
             TypeError)
    if dtype is None:
        fail("dtype None names no dtype here (numpy would read it as "
             "float64); name one, e.g. kiln.numpy.float32", TypeError)
    return np.dtype(dtype)


def dtype_code(dtype):
    """The tracer's code for a numpy dtype (or anything np.dtype accepts)."""
    dtype = numpy_dtype(dtype)
    code = _CODE_OF_DTYPE.get(dtype)
    if code is None:
        names = ", ".join(str(d) for d in TRACED_DTYPES)
        fail(f"kiln does not trace dtype {dtype} (it traces {names})",
             TypeError)
    return code


def dtype_of(x):
    """The numpy dtype of a Tensor."""
    return _DTYPE_OF_CODE[x.dtype_code]


def astype(x, dtype):
    """The Tensor x as dtype: x itself when it has that dtype, else one
    kiln.cast (kiln.numpy.astype, without its argument conversion)."""
    code = dtype_code(dtype)
    return x if code == x.dtype_code else _kiln.cast(x, code)


def is_tensor(x):
    return isinstance(x, Tensor)


def as_tensor(x):
    """x as a Tensor: Tensors as they are, numbers and arrays as constants
    (Python float -> float32, int -> int32, bool -> bool, numpy arrays keep
    their dtype)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor)
                                             for e in _flat_items(x)):
        return _stack_nested(x)
    return _kiln.constant(x)


def _flat_items(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat_items(e)
        else:
            yield e


def _stack_nested(x):
    """A nested list mixing tensors and numbers as one stacked tensor: each
    entry with a new leading axis, joined along it (kiln.numpy.stack)."""
    tensors = [as_tensor(e) for e in x]
    return _kiln.concat([_kiln.reshape(t, [1] + list(t.shape))
                         for t in tensors], 0)


def int_dtype(value):
    """The dtype a Python int is traced as (as the C++ binding does):
    int32, or int64 when it does not fit."""
    return np.int32 if -2**31 <= value < 2**31 else np.int64


def flat_tensors(tree):
    """(the leaves of `tree` as Tensors, its TreeDef)."""
    leaves, treedef = _tree.flatten(tree)
    return [as_tensor(leaf) for leaf in leaves], treedef


def flat_function(fn, in_def, out_defs):
    """fn on pytrees as a callable on flat lists of tensors, as the C++
    side calls it: its arguments are the leaves of `in_def`; the structure
    of each result is appended to `out_defs`."""
    def flat(leaves):
        out, out_def = flat_tensors(fn(*in_def.unflatten(leaves)))
        out_defs.append(out_def)
        return out
    return flat
