"""kiln.ops: jax.ops's segment reductions.

    kiln.ops.segment_sum(data, segment_ids, num_segments)

sums the rows of `data` that share a segment id: row i of the result is
the sum of data[j] over the j with segment_ids[j] == i, as
jax.ops.segment_sum computes it. It is kiln.scatter_add of the rows into
zeros, so its cost is that of `data` (not of the result), its gradient
with respect to `data` is a gather of the result's cotangent, and it runs
wherever scatter_add is lowered (CPU, CUDA). Ids outside [0, num_segments)
are dropped, as JAX drops them. This is the combiner of embedding bags and
feature columns: the rows of a ragged batch summed per example.
"""

import numpy as np

from . import _core, _kiln
from . import numpy as knp
from ._core import fail
from ._eager import eager

__all__ = ["segment_sum"]


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False):
    """jax.ops.segment_sum: [num_segments, *data.shape[1:]], the rows of
    `data` summed by their `segment_ids` ([data.shape[0]] integers).
    `num_segments` must be static; without it, segment_ids must be a numpy
    array and it is their maximum + 1. The two hints are accepted for JAX's
    signature and change nothing."""
    del indices_are_sorted, unique_indices
    if num_segments is None:
        if isinstance(segment_ids, _core.Tensor):
            fail("kiln.ops.segment_sum: pass num_segments when the segment "
                 "ids are traced (the result's shape must be static)",
                 ValueError)
        ids = np.asarray(segment_ids)
        num_segments = int(ids.max()) + 1 if ids.size else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        fail(f"kiln.ops.segment_sum: num_segments must not be negative, got "
             f"{num_segments}", ValueError)
    return _segment_sum(data, segment_ids, num_segments)


@eager(name="segment_sum")
def _segment_sum(data, segment_ids, num_segments):
    data = knp.asarray(data)
    ids = knp.asarray(segment_ids)
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        fail(f"kiln.ops.segment_sum: segment_ids must be one id per row of "
             f"data, got ids of shape {tuple(ids.shape)} for data of shape "
             f"{tuple(data.shape)}", ValueError)
    if ids.dtype.kind not in "iu":
        fail(f"kiln.ops.segment_sum: segment_ids must be integers, not "
             f"{ids.dtype}", TypeError)
    out_shape = (num_segments,) + tuple(data.shape[1:])
    if num_segments == 0 or data.shape[0] == 0:
        return knp.zeros(out_shape, data.dtype)
    # scatter_add clamps its indices; JAX drops the ones out of range, so
    # their rows become zeros first.
    inside = knp.logical_and(ids >= 0, ids < num_segments)
    inside = knp.reshape(inside, (ids.shape[0],) + (1,) * (data.ndim - 1))
    rows = knp.where(inside, data, knp.zeros_like(data))
    clamped = knp.clip(ids, 0, num_segments - 1)
    return _kiln.scatter_add(knp.zeros(out_shape, data.dtype), clamped, rows)
