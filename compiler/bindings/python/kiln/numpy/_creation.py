"""Arrays from values: asarray (and astype), and the creation functions
(full, zeros, ones and their _like forms, arange, eye, linspace)."""

import numpy as _np

from .. import _core
from .. import _kiln
from .._eager import eager
from ._base import (as_tensor, bool_, dtype_of, float32, int32, _shape)
from ._shapes import broadcast_to

__all__ = ["arange", "array", "asarray", "astype", "eye", "full",
           "full_like", "linspace", "ones", "ones_like", "zeros",
           "zeros_like"]


@eager
def asarray(a, dtype=None):
    """`a` as a traced array (numpy arrays and numbers become constants;
    nested lists of Python numbers are float32 or int32, see as_tensor)."""
    x = as_tensor(a)
    return astype(x, dtype) if dtype is not None else x


array = asarray


@eager
def astype(x, dtype):
    return _core.astype(as_tensor(x), dtype)


@eager
def full(shape, fill_value, dtype=None):
    """A Python number fills with dtype (default: bool, int32 -- int64
    when it does not fit -- or float32); a traced or numpy array or a list
    is broadcast to the shape, keeping its dtype unless one is given."""
    shape = _shape(shape)
    if not isinstance(fill_value, (bool, int, float)):
        fill = asarray(fill_value)
        return broadcast_to(astype(fill, dtype) if dtype is not None
                            else fill, shape)
    if dtype is None:
        dtype = (bool_ if isinstance(fill_value, bool) else
                 float32 if isinstance(fill_value, float) else
                 _core.int_dtype(fill_value))
    return _kiln.full(shape, fill_value, _core.dtype_code(dtype))


@eager
def zeros(shape, dtype=float32):
    return full(shape, 0, dtype)


@eager
def ones(shape, dtype=float32):
    return full(shape, 1, dtype)


@eager
def zeros_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 0, dtype if dtype is not None else dtype_of(x))


@eager
def ones_like(x, dtype=None):
    x = as_tensor(x)
    return full(x.shape, 1, dtype if dtype is not None else dtype_of(x))


@eager
def full_like(x, fill_value, dtype=None):
    x = as_tensor(x)
    return full(x.shape, fill_value,
                dtype if dtype is not None else dtype_of(x))


@eager
def arange(start, stop=None, step=1, dtype=None):
    """Static bounds only (the result's shape must be known)."""
    if stop is None:
        start, stop = 0, start
    values = _np.arange(start, stop, step)
    if dtype is None:
        dtype = int32 if values.dtype.kind in "iu" else float32
    return asarray(values.astype(_core.numpy_dtype(dtype)))


@eager
def eye(n, m=None, k=0, dtype=float32):
    return asarray(_np.eye(n, m, k, dtype=_core.numpy_dtype(dtype)))


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """Static bounds: a constant (float32 unless dtype says otherwise)."""
    dtype = _core.numpy_dtype(float32 if dtype is None else dtype)
    return asarray(_np.linspace(start, stop, num, endpoint=endpoint,
                                dtype=dtype))
