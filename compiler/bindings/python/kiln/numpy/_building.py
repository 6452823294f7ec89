"""Arrays built from others: take, tile, repeat, tril and triu, diagonal,
diag and trace, pad."""

import builtins

import numpy as _np

from .. import _kiln
from .._eager import eager
from ._base import (_normalize_axis, Tensor, as_tensor, dtype_of, fail)
from ._creation import full, zeros, zeros_like
from ._reductions import sum
from ._shapes import broadcast_to, concatenate, ravel, reshape

__all__ = ["diag", "diagonal", "pad", "repeat", "take", "tile", "trace",
           "tril", "triu"]


@eager
def take(a, indices, axis=None):
    """numpy's take: static indices (numbers, lists, numpy arrays) index as
    numpy does (out of range is an IndexError); traced ones clamp."""
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    index = [slice(None)] * x.ndim
    index[_normalize_axis(axis, x.ndim)] = (
        indices if isinstance(indices, Tensor) else _np.asarray(indices))
    return x[tuple(index)]


# Shapes, counts and offsets are static (numpy values), as the result's shape
# depends on them; the data may be traced.

@eager
def tile(A, reps):
    x = as_tensor(A)
    reps = [int(r) for r in ((reps,) if isinstance(reps, int) else reps)]
    rank = builtins.max(x.ndim, len(reps))
    dims = [1] * (rank - x.ndim) + list(x.shape)
    reps = [1] * (rank - len(reps)) + reps
    # [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 d0, r1 d1]
    spread = [v for d in dims for v in (1, d)]
    target = [v for r, d in zip(reps, dims) for v in (r, d)]
    x = broadcast_to(reshape(x, spread), target)
    return reshape(x, [r * d for r, d in zip(reps, dims)])


@eager
def repeat(a, repeats, axis=None):
    x = as_tensor(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _normalize_axis(axis, x.ndim)
    counts = _np.asarray(repeats)
    if counts.ndim == 0:
        # Each element repeated r times: a new axis after `axis`, widened.
        r = int(counts)
        inner = list(x.shape[:axis + 1]) + [1] + list(x.shape[axis + 1:])
        wide = list(x.shape[:axis + 1]) + [r] + list(x.shape[axis + 1:])
        shape = list(x.shape)
        shape[axis] *= r
        return reshape(broadcast_to(reshape(x, inner), wide), shape)
    return take(x, _np.repeat(_np.arange(x.shape[axis]), counts), axis=axis)


def _triangle(m, k, lower):
    x = as_tensor(m)
    if x.ndim < 2:
        fail("tril/triu need an array of rank 2 or more", ValueError)
    rows, cols = x.shape[-2:]
    mask = _np.tri(rows, cols, k, dtype=bool)
    if not lower:
        mask = ~_np.tri(rows, cols, k - 1, dtype=bool)
    return _kiln.where(mask, x, zeros_like(x))


@eager
def tril(m, k=0):
    return _triangle(m, k, lower=True)


@eager
def triu(m, k=0):
    return _triangle(m, k, lower=False)


@eager
def diagonal(a, offset=0):
    """The diagonal of a matrix (rank 2), shifted by `offset`."""
    x = as_tensor(a)
    if x.ndim != 2:
        fail("kiln.numpy.diagonal takes a matrix (rank 2)", ValueError)
    rows, cols = x.shape
    positions = _np.arange(rows * cols).reshape(rows, cols).diagonal(offset)
    return take(x, positions)


@eager
def diag(v, k=0):
    """The diagonal of a matrix, or a matrix with vector v on diagonal k."""
    x = as_tensor(v)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        fail("kiln.numpy.diag takes a vector or a matrix", ValueError)
    n = x.shape[0] + builtins.abs(int(k))
    # Element j of v lands at flat position j * (n + 1) + the offset.
    source = _np.full(n * n, -1)
    target = _np.diag(_np.arange(x.shape[0]), k).reshape(-1)
    mask = _np.diag(_np.ones(x.shape[0], bool), k).reshape(-1)
    source[mask] = target[mask]
    gathered = _kiln.gather(x, _np.maximum(source, 0))
    return reshape(_kiln.where(mask, gathered, zeros(n * n, dtype_of(x))),
                   [n, n])


@eager
def trace(a, offset=0):
    return sum(diagonal(a, offset))


@eager
def pad(array, pad_width, mode="constant", constant_values=0):
    """Constant padding only (numpy's default mode)."""
    if mode != "constant":
        fail(f"kiln.numpy.pad supports mode='constant', not {mode!r}",
             NotImplementedError)
    x = as_tensor(array)
    widths = _np.broadcast_to(_np.asarray(pad_width, int), (x.ndim, 2))
    for axis, (before, after) in enumerate(widths):
        if before < 0 or after < 0:
            fail("pad widths must not be negative", ValueError)
        parts = []
        for width in (before, after):
            shape = list(x.shape)
            shape[axis] = int(width)
            parts.append(full(shape, constant_values, dtype_of(x)))
        if before or after:
            x = concatenate([parts[0], x, parts[1]], axis=axis)
    return x
