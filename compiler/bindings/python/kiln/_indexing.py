"""numpy indexing on traced arrays (x[...]) and JAX's functional updates
(x.at[...].set(v), .add(v), ...).

Reading: integers and slices become one kiln.slice (negative steps also a
reversing gather); integer arrays and traced integers are advanced indices,
which become one kiln.gather over the indexed axes folded into one (traced
indices are clamped into range, as in JAX; static ones out of range are an
IndexError, as in numpy); boolean masks must be static numpy arrays (their
positions decide the shape). The result's shape is numpy's for the same
index, which numpy itself computes on a stand-in array.

Updates: with a static index (no traced values), the updated positions are
known at trace time, so an update is a gather of the new values into place
and a select; repeated positions are applied in rounds (`set` keeps the
last, like numpy's assignment; `add` accumulates). With traced indices,
integers and full slices select a slab through a mask; with other traced
forms `add` is a kiln.scatter_add into the flattened array (bools: compared
like `set`), and `set`, `min` and `max` compare every updated position with
every element.
"""

import numpy as _np

from . import _core, _kiln
from . import numpy as knp
from ._core import Tensor, fail


def _is_index_tensor(entry):
    return isinstance(entry, Tensor)


def _static_index_array(entry):
    """A list, tuple or numpy array of integers used as an index, as a
    numpy array."""
    array = _np.asarray(entry)
    if array.dtype.kind not in "iu":
        fail(f"arrays used as indices must be integers or bools, not "
             f"{array.dtype}", IndexError)
    return array


class TracedMaskError(_core.TraceError, IndexError):
    """A traced bool array used as an index: the result's shape would
    depend on its values."""


def _normalize(x, index):
    """The index as a tuple with Ellipsis expanded, bool masks converted to
    integer arrays, and lists as numpy arrays."""
    if not isinstance(index, tuple):
        index = (index,)
    entries = []
    for entry in index:
        if isinstance(entry, Tensor):
            kind = _core.dtype_of(entry).kind
            if kind == "b":
                fail("boolean masks that are traced arrays cannot index: the "
                     "result's shape would depend on their values; use "
                     "kiln.numpy.where", TracedMaskError)
            if kind not in "iu":
                fail(f"traced arrays used as indices must be integers, not "
                     f"{_core.dtype_of(entry)}", IndexError)
            entries.append(entry)
        elif isinstance(entry, (list, _np.ndarray)):
            array = _np.asarray(entry)
            entries.append(array if array.dtype == bool else
                           _static_index_array(array))
        elif isinstance(entry, (bool, _np.bool_)):
            fail("a bool scalar is not a supported index", IndexError)
        else:
            entries.append(entry)
    consumed = sum(_rank_consumed(e) for e in entries)
    if consumed > x.ndim:
        fail(f"too many indices: the array has rank {x.ndim} but "
             f"{consumed} were given", IndexError)
    # By identity: == on a traced or numpy index would compare elements.
    ellipses = [i for i, e in enumerate(entries) if e is Ellipsis]
    if len(ellipses) > 1:
        fail("an index can only have one ellipsis ('...')", IndexError)
    if ellipses:
        at = ellipses[0]
        entries[at:at + 1] = [slice(None)] * (x.ndim - consumed)
    else:
        entries += [slice(None)] * (x.ndim - consumed)
    return _masks_as_positions(x, entries)


def _rank_consumed(entry):
    """How many of the array's axes an index entry consumes (a bool mask:
    as many as it has)."""
    if entry is None or entry is Ellipsis:
        return 0
    if isinstance(entry, _np.ndarray) and entry.dtype == bool:
        return entry.ndim
    return 1


def _masks_as_positions(x, entries):
    """Bool masks as the integer arrays of their True positions, after
    checking that each matches the axes it covers (as numpy does: a shorter
    mask would otherwise select silently)."""
    result, dim = [], 0
    for entry in entries:
        if isinstance(entry, _np.ndarray) and entry.dtype == bool:
            covered = tuple(x.shape[dim:dim + entry.ndim])
            if entry.shape != covered:
                fail(f"boolean index did not match the indexed array: the "
                     f"mask has shape {entry.shape} but the axes it indexes "
                     f"({dim} on) have shape {covered}", IndexError)
            result.extend(_np.nonzero(entry))
        else:
            result.append(entry)
        dim += _rank_consumed(entry)
    return result


def _numpy_shape(x, index):
    """The shape numpy gives x[index] (traced indices stand in as zeros
    of their shape); raises numpy's IndexError for a bad static index.
    The index as written, not normalized: an Ellipsis that stands for no
    axes still decides where advanced indices' dimensions go."""
    stand_in = _np.broadcast_to(_np.zeros((), bool), x.shape)
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(_np.zeros(e.shape, _np.int64) if isinstance(e, Tensor)
                  else e for e in index)
    try:
        return stand_in[index].shape
    except IndexError as error:
        fail(f"{error} (indexing an array of shape {x.shape})", IndexError)


def _take(x, indices, axis):
    """x's entries `indices` (a 1-D static list) along `axis`."""
    moved = knp.moveaxis(x, axis, 0)
    taken = _kiln.gather(moved, _np.asarray(indices, _np.int64))
    return knp.moveaxis(taken, 0, axis)


def _advanced_adjacent(index):
    """numpy's rule for where the advanced indices' dimensions go: in place
    when the advanced entries (arrays, and integers among them) are
    adjacent in the index as written -- a slice, None or an Ellipsis
    between two of them separates them, even an Ellipsis that stands for
    no axes -- and first otherwise."""
    if not isinstance(index, tuple):
        index = (index,)
    advanced = [isinstance(e, (Tensor, list, _np.ndarray)) or
                isinstance(e, (int, _np.integer)) and
                not isinstance(e, (bool, _np.bool_)) for e in index]
    first = advanced.index(True)
    last = len(advanced) - 1 - advanced[::-1].index(True)
    return all(advanced[first:last + 1])


def getitem(x, index):
    entries = _normalize(x, index)
    final_shape = _numpy_shape(x, index)
    advanced_any = any(_is_index_tensor(e) or isinstance(e, _np.ndarray)
                       for e in entries)

    # 1. Slices and (without advanced indices) integers: one static slice.
    start, limit, stride, reversed_axes = [], [], [], []
    kept = []        # per input dimension: "slice", "int" or "advanced"
    advanced = []    # the advanced index entries, in order
    dim = 0
    for entry in entries:
        if entry is None:
            continue
        size = x.shape[dim]
        if isinstance(entry, slice):
            lo, hi, step = entry.indices(size)
            count = len(range(lo, hi, step))
            if step < 0:
                first = lo + step * (count - 1) if count else 0
                lo, hi, step = first, first + (-step) * (count - 1) + 1, -step
                reversed_axes.append(dim)
            if count == 0:
                lo = hi = 0
            start.append(lo)
            limit.append(max(hi, lo))
            stride.append(step)
            kept.append("slice")
        elif _is_index_tensor(entry) or isinstance(entry, _np.ndarray) or \
                advanced_any:
            start.append(0)
            limit.append(size)
            stride.append(1)
            kept.append("advanced")
            advanced.append(entry)
        else:
            i = int(entry)
            i = i + size if i < 0 else i
            start.append(i)
            limit.append(i + 1)
            stride.append(1)
            kept.append("int")
        dim += 1
    y = x
    if any(s != 0 or l != d or st != 1 for s, l, st, d in
           zip(start, limit, stride, x.shape)):
        y = _kiln.slice(y, start, limit, stride)
    for axis in reversed_axes:
        if y.shape[axis] > 1:       # (nothing to reverse, or to gather from)
            y = _take(y, list(range(y.shape[axis] - 1, -1, -1)), axis)
    if not advanced:
        return _kiln.reshape(y, list(final_shape)) \
            if tuple(y.shape) != tuple(final_shape) else y

    # 2. Advanced indices: fold the indexed axes into one and gather.
    if 0 in final_shape:
        # Nothing to read (the gather needs a non-empty table).
        return _kiln.full(list(final_shape), 0, x.dtype_code)
    positions = [i for i, k in enumerate(kept) if k == "advanced"]
    rest = [i for i, k in enumerate(kept) if k != "advanced"]
    y = _kiln.transpose(y, positions + rest) if positions + rest != \
        list(range(len(kept))) else y
    dims = [x.shape[i] for i in positions]
    y = _kiln.reshape(y, [int(_np.prod(dims))] + list(y.shape[len(dims):]))
    static = all(not _is_index_tensor(e) for e in advanced)
    if static:
        arrays = _np.broadcast_arrays(*[_np.asarray(e, _np.int64)
                                        for e in advanced])
        linear = _np.zeros(arrays[0].shape, _np.int64)
        for array, size in zip(arrays, dims):
            linear = linear * size + _np.where(array < 0, array + size, array)
        linear = _np.ascontiguousarray(linear)
    else:
        tensors = [knp.astype(e, _np.int64) for e in advanced]
        shape = _np.broadcast_shapes(*[t.shape for t in tensors])
        linear = knp.zeros(shape, _np.int64)
        for t, size in zip(tensors, dims):
            t = knp.where(t < 0, t + size, t)
            t = knp.clip(t, 0, size - 1)
            linear = linear * size + t
    gathered = _kiln.gather(y, linear)
    batch = len(_np.shape(linear)) if static else linear.ndim
    if _advanced_adjacent(index) and positions[0] > 0:
        # numpy keeps adjacent advanced indices' dimensions in place.
        front = positions[0]
        order = list(range(batch, batch + front)) + list(range(batch)) + \
            list(range(batch + front, gathered.ndim))
        gathered = _kiln.transpose(gathered, order)
    if tuple(gathered.shape) != tuple(final_shape):
        gathered = _kiln.reshape(gathered, list(final_shape))
    return gathered


# --- Functional updates ----------------------------------------------------

def _combine(how, old, new):
    """The updated value of one position. kiln.numpy's ops, so that bools
    combine as numpy's ufuncs do (add and max: or; multiply and min:
    and)."""
    if how == "set":
        return new
    return {"add": knp.add, "multiply": knp.multiply, "min": knp.minimum,
            "max": knp.maximum}[how](old, new)


class AtIndexer:
    """x.at: `x.at[index]` names the positions an update writes."""

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _AtUpdate(self._x, index)


class _AtUpdate:
    def __init__(self, x, index):
        self.x, self.index = x, index

    def get(self):
        return getitem(self.x, self.index)

    def set(self, values):
        return _update(self.x, self.index, values, "set")

    def add(self, values):
        return _update(self.x, self.index, values, "add")

    def multiply(self, values):
        return _update(self.x, self.index, values, "multiply")

    def min(self, values):
        return _update(self.x, self.index, values, "min")

    def max(self, values):
        return _update(self.x, self.index, values, "max")


def _values(x, values, shape):
    v = knp.astype(_core.as_tensor(values) if isinstance(values, Tensor)
                   else _np.asarray(values), _core.dtype_of(x))
    return knp.broadcast_to(v, shape)


def _update(x, index, values, how):
    entries = _normalize(x, index)
    if not any(_is_index_tensor(e) for e in entries):
        return _static_update(x, index, values, how)
    if all(e is not None for e in entries) and all(
            isinstance(e, slice) and e == slice(None) or
            (_is_index_tensor(e) and e.ndim == 0) or
            isinstance(e, (int, _np.integer)) for e in entries):
        return _slab_update(x, entries, values, how)
    if how == "multiply":
        fail(f".at[...].{how} with traced array indices is not supported "
             "(set, add, min and max are)", NotImplementedError)
    return _compared_update(x, index, values, how)


def _compared_update(x, index, values, how):
    """An update through traced index arrays: `add` scatter-adds the values
    at their flat positions; the others compare every updated position
    with every element of x ([updates, x.size] of work).
    Repeated positions: `add` sums, `min`/`max` reduce, `set` keeps the
    last write (numpy's assignment)."""
    positions = getitem(knp.reshape(knp.arange(x.size, dtype=_np.int64),
                                    x.shape), index)
    count = positions.size
    if count == 0:
        return x
    if how == "add" and _core.dtype_of(x) != _np.bool_:
        # kiln.scatter_add: the work of the updates, not of x.
        added = _kiln.scatter_add(
            knp.ravel(x), knp.reshape(positions, [count]),
            knp.reshape(_values(x, values, positions.shape), [count]))
        return knp.reshape(added, x.shape)
    v = knp.reshape(_values(x, values, positions.shape), [count, 1])
    hits = knp.equal(knp.reshape(positions, [count, 1]),
                     knp.reshape(knp.arange(x.size, dtype=_np.int64),
                                 [1, x.size]))
    flat = knp.ravel(x)
    hit = knp.any(hits, axis=0)
    if how == "add":
        # Bools (the others scatter-add above): any, as numpy's bool sum.
        contribution = knp.any(knp.where(hits, v, knp.zeros_like(v)), axis=0)
        return knp.reshape(knp.add(flat, contribution), x.shape)
    if how == "set":
        order = knp.reshape(knp.arange(count, dtype=_np.int64), [count, 1])
        last = knp.max(knp.where(hits, order, -1), axis=0)
        new = _kiln.gather(knp.ravel(v), knp.maximum(last, 0))
        return knp.reshape(knp.where(hit, new, flat), x.shape)
    neutral = _extreme(_core.dtype_of(x), lowest=(how == "max"))
    reduce = knp.max if how == "max" else knp.min
    best = reduce(knp.where(hits, v, neutral), axis=0)
    return knp.reshape(knp.where(hit, _combine(how, flat, best), flat),
                       x.shape)


def _extreme(dtype, lowest):
    """The smallest (or largest) value of dtype, as a numpy scalar."""
    if _core.is_float_dtype(dtype):
        return dtype.type(-_np.inf if lowest else _np.inf)
    if dtype.kind == "b":
        return _np.bool_(not lowest)
    info = _np.iinfo(dtype)
    return dtype.type(info.min if lowest else info.max)


def _static_update(x, index, values, how):
    """numpy itself indexes the flat positions of x with the index as
    written (an Ellipsis that stands for no axes still orders the
    updated positions), so they line up with the values."""
    try:
        updated = _np.asarray(_np.arange(x.size).reshape(x.shape)[index])
    except IndexError as error:
        fail(f"{error} (updating an array of shape {x.shape})", IndexError)
    positions = updated.reshape(-1)
    if positions.size == 0:
        return x
    v = knp.ravel(_values(x, values, updated.shape))
    flat = knp.ravel(x)
    order = _np.arange(positions.size)
    if how == "set":
        # The last write to a position wins, as in numpy.
        source = _np.full(x.size, -1, _np.int64)
        source[positions] = order
        rounds = [source]
    else:
        rounds, remaining = [], order
        while remaining.size:
            _, first = _np.unique(positions[remaining], return_index=True)
            source = _np.full(x.size, -1, _np.int64)
            source[positions[remaining[first]]] = remaining[first]
            rounds.append(source)
            remaining = _np.delete(remaining, first)
    for source in rounds:
        hit = source >= 0
        new = _kiln.gather(v, _np.maximum(source, 0))
        flat = knp.where(hit, _combine(how, flat, new), flat)
    return knp.reshape(flat, x.shape)


def _slab_update(x, entries, values, how):
    """Integers (traced or not) and full slices: a mask selects the slab."""
    mask = None
    slab_shape = []
    for axis, entry in enumerate(entries):
        if isinstance(entry, slice):
            slab_shape.append(x.shape[axis])
            continue
        slab_shape.append(1)
        size = x.shape[axis]
        i = knp.astype(entry, _np.int64)
        i = knp.clip(knp.where(i < 0, i + size, i), 0, size - 1)
        shape = [1] * x.ndim
        shape[axis] = size
        hit = knp.equal(knp.reshape(knp.arange(size, dtype=_np.int64),
                                    shape), i)
        mask = hit if mask is None else knp.logical_and(mask, hit)
    kept = [d for e, d in zip(entries, x.shape) if isinstance(e, slice)]
    v = knp.reshape(_values(x, values, kept), slab_shape)
    return knp.where(mask, _combine(how, x, v), x)
