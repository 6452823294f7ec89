"""What every kiln.numpy module shares: the dtypes and constants numpy
names, kiln.numpy.as_tensor (Python values as traced arrays, typed as JAX
types them), and the helpers that read operands, axes and shapes."""

import builtins
import math

import numpy as _np

from .. import _core
from .._core import Tensor, fail, dtype_of
from .. import _kiln

__all__ = ["Tensor", "as_tensor", "bfloat16", "bool_", "dtype_of", "e",
           "fail", "float16", "float32", "float64", "inf", "int32", "int64",
           "nan", "ndarray", "newaxis", "pi", "uint32"]


float32 = _np.float32
float64 = _np.float64
int32 = _np.int32
int64 = _np.int64
uint32 = _np.uint32
float16 = _np.float16
# ml_dtypes' bfloat16 where installed (JAX's), else a dtype that fails at
# every use and says so.
bfloat16 = (_core.BFLOAT16.type if _core.BFLOAT16 is not None
            else _core.MissingDtype("bfloat16", "ml_dtypes"))
bool_ = _np.bool_
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
ndarray = Tensor


def _is_float(x):
    return _core.is_float_dtype(dtype_of(x))


def _is_int(x):
    return dtype_of(x).kind == "i"


def _is_bool_operand(x):
    if isinstance(x, Tensor):
        return dtype_of(x) == bool_
    return isinstance(x, (bool, _np.bool_)) or (
        isinstance(x, _np.ndarray) and x.dtype == bool_)


def as_tensor(a):
    """_core.as_tensor, with (nested) lists of Python numbers typed as
    Python numbers are (float32, int32 where the values fit), as in JAX:
    numpy alone would make them float64 and int64, which would then widen
    the other operand."""
    if isinstance(a, (list, tuple)) and not builtins.any(
            isinstance(e, Tensor) for e in _core._flat_items(a)):
        a = _narrow_python_values(_np.asarray(a))
    return _core.as_tensor(a)


def _operand(x):
    """An operand for the tracer's ops: lists become arrays (as_tensor's
    typing); numbers stay weakly typed Python numbers."""
    return as_tensor(x) if isinstance(x, (list, tuple)) else x


def _float_of(x):
    """x as a float tensor (integers and bools become float32)."""
    x = as_tensor(x)
    return x if _is_float(x) else _kiln.cast(x, _core.dtype_code(float32))


def _axes(axis, ndim):
    """None, or the axes as a list of ints (numpy integers included)."""
    if axis is None:
        return None
    if _np.ndim(axis) == 0:
        return [int(axis)]
    return [int(a) for a in axis]


def _distinct_axes(axis, ndim, what="axis"):
    """An int or a sequence of axes, normalized into range; repeats are a
    ValueError, as in numpy."""
    axes = [_normalize_axis(ax, ndim, what) for ax in _axes(axis, ndim)]
    if len(set(axes)) != len(axes):
        fail(f"repeated {what} in {axis}", ValueError)
    return axes


def _narrow_python_values(values):
    """numpy's float64/int64 for Python numbers as float32/int32."""
    if values.dtype == float64:
        return values.astype(float32)
    if values.dtype == int64 and (values.size == 0 or (
            _core.int_dtype(int(values.min())) ==
            _core.int_dtype(int(values.max())) == int32)):
        return values.astype(int32)
    return values


def _shape(shape):
    """A shape (an integer, numpy's included, or a sequence of them) as a
    list of ints."""
    if _np.ndim(shape) == 0:
        return [int(shape)]
    return [int(d) for d in shape]


def _normalize_axis(axis, ndim, what="axis"):
    if not -ndim <= axis < builtins.max(ndim, 1):
        fail(f"{what} {axis} is out of range for an array of rank {ndim}",
             ValueError)
    return axis % builtins.max(ndim, 1)
