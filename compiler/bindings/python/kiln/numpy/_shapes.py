"""Shapes: reshape, transpose, axes moved, added and removed, arrays joined
(concatenate, stack), split and broadcast, and flip."""

from .. import _kiln
from .._eager import eager
from ._base import (_axes, _distinct_axes, _normalize_axis, _shape,
                    as_tensor, fail)


__all__ = ["broadcast_to", "concatenate", "expand_dims", "flip", "moveaxis",
           "ravel", "reshape", "split", "squeeze", "stack", "swapaxes",
           "transpose"]


@eager
def reshape(a, newshape):
    x = as_tensor(a)
    return _kiln.reshape(x, _shape(newshape))


@eager
def ravel(a):
    return reshape(a, [-1])


@eager
def transpose(a, axes=None):
    x = as_tensor(a)
    perm = list(range(x.ndim))[::-1] if axes is None else \
        [_normalize_axis(int(i), x.ndim) for i in axes]
    return _kiln.transpose(x, perm)


@eager
def swapaxes(a, axis1, axis2):
    x = as_tensor(a)
    perm = list(range(x.ndim))
    i, j = _normalize_axis(axis1, x.ndim), _normalize_axis(axis2, x.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _kiln.transpose(x, perm)


@eager
def moveaxis(a, source, destination):
    x = as_tensor(a)
    source = _distinct_axes(source, x.ndim, "source axis")
    destination = _distinct_axes(destination, x.ndim, "destination axis")
    if len(source) != len(destination):
        fail(f"moveaxis: {len(source)} source axes but {len(destination)} "
             "destinations", ValueError)
    order = [i for i in range(x.ndim) if i not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return _kiln.transpose(x, order)


@eager
def expand_dims(a, axis):
    x = as_tensor(a)
    rank = x.ndim + len(_axes(axis, x.ndim))
    axes = sorted(_distinct_axes(axis, rank))
    shape = list(x.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return _kiln.reshape(x, shape)


@eager
def squeeze(a, axis=None):
    x = as_tensor(a)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        axes = _distinct_axes(axis, x.ndim)
        for ax in axes:
            if x.shape[ax] != 1:
                fail(f"cannot squeeze axis {ax} of shape {x.shape}: its "
                     "size is not 1", ValueError)
    return _kiln.reshape(x, [d for i, d in enumerate(x.shape)
                             if i not in axes])


@eager
def concatenate(arrays, axis=0):
    tensors = [as_tensor(a) for a in arrays]
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    return _kiln.concat(tensors, axis)


@eager
def stack(arrays, axis=0):
    tensors = [as_tensor(a) for a in arrays]
    if not tensors:
        fail("kiln.numpy.stack needs at least one array", ValueError)
    rank = tensors[0].ndim + 1
    axis = _normalize_axis(axis, rank)
    return _kiln.concat([expand_dims(t, axis) for t in tensors], axis)


@eager
def broadcast_to(array, shape):
    return _kiln.broadcast_to(as_tensor(array), _shape(shape))


@eager
def flip(m, axis=None):
    x = as_tensor(m)
    axes = range(x.ndim) if axis is None else _axes(axis, x.ndim)
    index = [slice(None)] * x.ndim
    for ax in axes:
        index[_normalize_axis(ax, x.ndim)] = slice(None, None, -1)
    return x[tuple(index)]


def split(ary, indices_or_sections, axis=0):
    """A list of static slices along `axis`, as numpy.split."""
    x = as_tensor(ary)
    axis = _normalize_axis(axis, x.ndim)
    size = x.shape[axis]
    if isinstance(indices_or_sections, int):
        if size % indices_or_sections:
            fail(f"array of size {size} along axis {axis} does not split "
                 f"into {indices_or_sections} equal parts", ValueError)
        step = size // indices_or_sections
        bounds = list(range(step, size, step))
    else:
        bounds = [int(b) for b in indices_or_sections]
    edges = [0] + bounds + [size]
    parts = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        index = [slice(None)] * x.ndim
        index[axis] = slice(lo, hi)
        parts.append(x[tuple(index)])
    return parts
