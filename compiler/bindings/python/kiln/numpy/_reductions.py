"""Reductions and scans along axes: sum, mean, max, min, any, all, var,
std, argmax, argmin, cumsum, prod, cumprod; and sorting (sort,
argsort)."""

import builtins

from .. import _kiln
from .._eager import eager
from ._base import (_axes, _float_of, _is_float, _normalize_axis,
                    as_tensor, bool_, dtype_of, int32)


from ._creation import astype, full
from ._shapes import (concatenate, expand_dims, ravel, reshape, split,
                     squeeze)


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "argsort",
           "cumprod", "cumsum", "max", "mean", "min", "prod", "sort", "std",
           "sum", "var"]


@eager
def sum(a, axis=None, keepdims=False, dtype=None):
    """dtype: the type to accumulate in (the input is cast first)."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    return _kiln.sum(x, _axes(axis, x.ndim), keepdims)


@eager
def mean(a, axis=None, keepdims=False, dtype=None):
    """dtype: the type to compute in (integers otherwise give float32)."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    return _kiln.mean(x, _axes(axis, x.ndim), keepdims)


@eager
def max(a, axis=None, keepdims=False):
    x = as_tensor(a)
    if dtype_of(x) == bool_:
        return astype(_kiln.max(astype(x, int32), _axes(axis, x.ndim),
                                keepdims), bool_)
    return _kiln.max(x, _axes(axis, x.ndim), keepdims)


amax = max


@eager
def min(a, axis=None, keepdims=False):
    x = as_tensor(a)
    if dtype_of(x) == bool_:
        # logical_not's op (x is bool already): logical functions are
        # elementwise, a layer above.
        return _kiln.logical_not(max(_kiln.logical_not(x), axis, keepdims))
    if _is_float(x):
        return _kiln.neg(_kiln.max(_kiln.neg(x), _axes(axis, x.ndim),
                                   keepdims))
    # -1 - x maps the integers onto themselves in reverse without overflow.
    flipped = _kiln.max(_kiln.sub(-1, x), _axes(axis, x.ndim), keepdims)
    return _kiln.sub(-1, flipped)


amin = min


@eager
def any(a, axis=None, keepdims=False):
    return max(astype(a, bool_), axis, keepdims)


@eager
def all(a, axis=None, keepdims=False):
    return min(astype(a, bool_), axis, keepdims)


@eager
def var(a, axis=None, keepdims=False, ddof=0):
    x = _float_of(a)
    centered = _kiln.sub(x, mean(x, axis, keepdims=True))
    total = sum(_kiln.mul(centered, centered), axis, keepdims)
    count = x.size // builtins.max(total.size, 1)
    return _kiln.div(total, float(builtins.max(count - ddof, 0)))


@eager
def std(a, axis=None, keepdims=False, ddof=0):
    return _kiln.sqrt(var(a, axis, keepdims, ddof))


def _arg_reduce(name, op):
    @eager
    def reduce(a, axis=None, keepdims=False):
        x = as_tensor(a)
        if dtype_of(x) == bool_:
            x = astype(x, int32)        # the tracer orders numbers only
        if axis is None:
            # Over the flattened array; keepdims keeps every axis as 1.
            result = op(ravel(x), 0, False)
            return reshape(result, [1] * x.ndim) if keepdims else result
        axis = _normalize_axis(axis, x.ndim)
        result = op(x, axis, False)
        return expand_dims(result, axis) if keepdims else result
    reduce.__name__ = name
    return reduce


argmax = _arg_reduce("argmax", _kiln.argmax)
argmin = _arg_reduce("argmin", _kiln.argmin)


@eager
def cumsum(a, axis=None, dtype=None):
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)            # counts, as sum counts
    if axis is None:
        x, axis = ravel(x), 0
    return _kiln.cumsum(x, axis, False, False)


def _ones_along(x, axis, count):
    shape = list(x.shape)
    shape[axis] = count
    return full(shape, 1, dtype_of(x))


@eager
def prod(a, axis=None, keepdims=False, dtype=None):
    """Products by halving: the axis is padded with ones to a power of two,
    then its two halves are multiplied until one element is left (log2(n)
    elementwise multiplications, differentiable like any of them). The
    order of the multiplications differs from numpy's running product, so
    float results can differ in the last bits."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    if axis is None:
        result = prod(ravel(x), 0)
        return reshape(result, [1] * x.ndim) if keepdims else result
    axes = sorted({_normalize_axis(ax, x.ndim) for ax in _axes(axis, x.ndim)})
    for ax in reversed(axes):
        size = x.shape[ax]
        width = 1
        while width < size:
            width *= 2
        if width != size:
            x = concatenate([x, _ones_along(x, ax, width - size)], axis=ax)
        while x.shape[ax] > 1:
            low, high = split(x, 2, axis=ax)
            x = _kiln.mul(low, high)
        x = x if keepdims else squeeze(x, ax)
    return x


@eager
def cumprod(a, axis=None, dtype=None):
    """Running products by doubling strides (Hillis-Steele): log2(n) steps,
    each multiplying every element by the one `stride` before it."""
    x = as_tensor(a) if dtype is None else astype(a, dtype)
    if dtype_of(x) == bool_:
        x = astype(x, int32)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _normalize_axis(axis, x.ndim)
    size, stride = x.shape[axis], 1
    while stride < size:
        kept = [slice(None)] * x.ndim
        kept[axis] = slice(0, size - stride)
        shifted = concatenate([_ones_along(x, axis, stride), x[tuple(kept)]],
                              axis=axis)
        x = _kiln.mul(x, shifted)
        stride *= 2
    return x


@eager
def sort(a, axis=-1):
    """Stable ascending sort along `axis` (axis=None sorts the flattened
    array); NaN sorts last."""
    a = as_tensor(a)
    if axis is None:
        a, axis = _kiln.reshape(a, [a.size]), 0
    return _kiln.sort(a, axis, False)[0]


@eager
def argsort(a, axis=-1):
    """The int64 indices that sort `a` stably along `axis` (axis=None:
    of the flattened array)."""
    a = as_tensor(a)
    if axis is None:
        a, axis = _kiln.reshape(a, [a.size]), 0
    return _kiln.sort(a, axis, False)[1]
