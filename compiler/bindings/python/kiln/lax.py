"""kiln.lax: the raw convolution and window ops, with jax.lax's names and
signatures.

    y = kiln.lax.conv_general_dilated(x, w, (2, 2), "SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))
    p = kiln.lax.reduce_window(x, -np.inf, kiln.lax.max, (1, 1, 3, 3),
                               (1, 1, 2, 2), "SAME")

Each is one kiln op (kiln.conv, kiln.reduce_window) in the op's own layout
(channels first); other dimension numbers are transposes around it, which
the compiler folds where the backend takes the layout directly. Gradients
(kiln.grad) and tangents (kiln.jvp) go through them like through any op.
"""

import numpy as np

from . import _kiln
from . import numpy as knp
from . import _core
from ._core import fail
from ._eager import eager

__all__ = ["conv_general_dilated", "conv", "conv_transpose",
           "reduce_window", "max", "add", "padtype_to_pads", "dynamic_slice",
           "dynamic_update_slice", "shift_left", "shift_right_logical",
           "shift_right_arithmetic", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "bitcast_convert_type", "rem",
           "erf_inv", "sort", "sort_key_val"]


def max(x, y):  # noqa: A001  (jax.lax.max)
    """The elementwise maximum; as reduce_window's computation, max
    pooling."""
    return knp.maximum(x, y)


def add(x, y):
    """The elementwise sum; as reduce_window's computation, sum pooling."""
    return knp.add(x, y)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) padding per dim for "SAME", "SAME_LOWER" or "VALID" (as
    jax.lax.padtype_to_pads); a sequence of pairs is returned as it is."""
    if not isinstance(padding, str):
        pads = [tuple(int(v) for v in pair) for pair in padding]
        if len(pads) != len(in_shape) or any(len(p) != 2 for p in pads):
            fail(f"padding {padding!r} needs one (low, high) pair for each "
                 f"of the {len(in_shape)} windowed dims", ValueError)
        return pads
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        fail(f"unknown padding {padding!r}: use 'SAME', 'SAME_LOWER', "
             "'VALID' or (low, high) pairs", ValueError)
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = np.maximum((out - 1) * stride + window - size, 0)
        low = total // 2 if kind == "SAME" else total - total // 2
        pads.append((int(low), int(total - low)))
    return pads


def _ints(values, count, default, what):
    if values is None:
        return [default] * count
    values = [int(v) for v in (values if isinstance(values, (tuple, list))
                               else [values] * count)]
    if len(values) != count:
        fail(f"{what} {values} needs {count} entries", ValueError)
    return values


def _dimension_specs(dimension_numbers, rank):
    """(lhs, rhs, out) permutations that bring each operand to kiln.conv's
    [N, C, spatial...] / [O, I, spatial...] order, spatial dims in the
    order of the kernel's spec, as JAX matches them."""
    if dimension_numbers is None:
        ident = list(range(rank))
        return ident, ident, ident
    if len(dimension_numbers) != 3:
        fail(f"dimension_numbers {dimension_numbers!r} needs three specs "
             "(lhs, rhs, out)", ValueError)
    lhs, rhs, out = dimension_numbers
    if all(isinstance(s, str) for s in (lhs, rhs, out)):
        if not len(lhs) == len(rhs) == len(out) == rank:
            fail(f"dimension_numbers {dimension_numbers!r} must each have "
                 f"{rank} letters for operands of rank {rank}", ValueError)
        spatial = [c for c in rhs if c not in "OI"]
        try:
            return ([lhs.index("N"), lhs.index("C")] +
                    [lhs.index(c) for c in spatial],
                    [rhs.index("O"), rhs.index("I")] +
                    [rhs.index(c) for c in spatial],
                    [out.index("N"), out.index("C")] +
                    [out.index(c) for c in spatial])
        except ValueError:
            fail(f"dimension_numbers {dimension_numbers!r}: lhs and out need "
                 "N, C and the kernel's spatial letters; rhs needs O and I",
                 ValueError)
    # ConvDimensionNumbers-like: (batch, feature, spatial...) index tuples.
    return [list(int(i) for i in s) for s in (lhs, rhs, out)]


def _to_order(x, perm):
    return x if list(perm) == list(range(len(perm))) else \
        knp.transpose(x, perm)


def _from_order(x, perm):
    inverse = [0] * len(perm)
    for position, axis in enumerate(perm):
        inverse[axis] = position
    return _to_order(x, inverse)


@eager
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None,
                         feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """jax.lax.conv_general_dilated: an N-d convolution (cross-correlation)
    with strides, padding ("SAME", "SAME_LOWER", "VALID" or (low, high)
    pairs, computed on the input dilated by lhs_dilation), input and kernel
    dilation, grouped channels (feature_group_count) and dimension numbers
    given as specs such as ("NHWC", "HWIO", "NHWC") or index tuples (None:
    NCHW, OIHW, NCHW). batch_group_count must be 1; precision and
    preferred_element_type are accepted and ignored (the result has the
    operands' promoted float dtype)."""
    if batch_group_count != 1:
        fail("kiln.lax.conv_general_dilated: batch_group_count > 1 is not "
             "supported", NotImplementedError)
    rank = len(lhs.shape)
    lhs_perm, rhs_perm, out_perm = _dimension_specs(dimension_numbers, rank)
    x = _to_order(lhs, lhs_perm)
    w = _to_order(rhs, rhs_perm)
    spatial = rank - 2
    strides = _ints(window_strides, spatial, 1, "window_strides")
    lhs_dil = _ints(lhs_dilation, spatial, 1, "lhs_dilation")
    rhs_dil = _ints(rhs_dilation, spatial, 1, "rhs_dilation")
    dilated_in = [(s - 1) * d + 1 if s else 0
                  for s, d in zip(x.shape[2:], lhs_dil)]
    dilated_kernel = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    pads = padtype_to_pads(dilated_in, dilated_kernel, strides, padding)
    y = _kiln.conv(x, w, strides, [p[0] for p in pads], [p[1] for p in pads],
                   lhs_dil, rhs_dil, int(feature_group_count))
    return _from_order(y, out_perm)


def conv(lhs, rhs, window_strides, padding, precision=None,
         preferred_element_type=None):
    """jax.lax.conv: conv_general_dilated in NCHW/OIHW without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding)


def _conv_transpose_padding(k, s, padding):
    """jax.lax's padding of the stride-dilated input for conv_transpose."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + np.maximum(k - s, 0)
        low = k - 1
    else:
        fail(f"unknown padding {padding!r} for conv_transpose", ValueError)
    return int(low), int(total - low)


@eager
def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None,
                   dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None):
    """jax.lax.conv_transpose: the convolution whose input is dilated by
    `strides` (the gradient of a strided convolution with respect to its
    input, with transpose_kernel=True), padded as JAX pads it for "SAME"
    and "VALID", or by explicit (low, high) pairs."""
    rank = len(lhs.shape)
    lhs_perm, rhs_perm, out_perm = _dimension_specs(dimension_numbers, rank)
    spatial = rank - 2
    kernel = [rhs.shape[i] for i in rhs_perm[2:]]
    rhs_dil = _ints(rhs_dilation, spatial, 1, "rhs_dilation")
    strides = _ints(strides, spatial, 1, "strides")
    dilated = [(k - 1) * d + 1 for k, d in zip(kernel, rhs_dil)]
    if isinstance(padding, str):
        pads = [_conv_transpose_padding(k, s, padding.upper())
                for k, s in zip(dilated, strides)]
    else:
        pads = padding
    if transpose_kernel:
        # Spatially reversed, input and output channels swapped.
        rhs = knp.flip(rhs, axis=tuple(rhs_perm[2:]))
        o, i = rhs_perm[0], rhs_perm[1]
        swap = list(range(rank))
        swap[o], swap[i] = swap[i], swap[o]
        rhs = knp.transpose(rhs, swap)
    return conv_general_dilated(lhs, rhs, [1] * spatial, pads,
                                lhs_dilation=strides, rhs_dilation=rhs_dil,
                                dimension_numbers=dimension_numbers)


@eager
def reduce_window(operand, init_value, computation, window_dimensions,
                  window_strides, padding, base_dilation=None,
                  window_dilation=None):
    """jax.lax.reduce_window for the two reductions pooling needs:
    computation kiln.lax.max (or jax.lax.max) with init_value -inf (or the
    dtype's lowest value), or kiln.lax.add (jax.lax.add) with 0. padding is
    "SAME", "VALID" or (low, high) pairs; base_dilation must be all 1."""
    rank = len(operand.shape)
    name = getattr(computation, "__name__", "")
    init = float(np.asarray(init_value))
    if name in ("max", "maximum"):
        is_max = True
        dtype = _core.dtype_of(operand)
        if not (init == -np.inf or
                (dtype.kind in "iu" and init == np.iinfo(dtype).min)):
            fail("kiln.lax.reduce_window: a max reduction needs init_value "
                 f"-inf (the identity), got {init_value!r}", ValueError)
    elif name in ("add", "sum"):
        is_max = False
        if init != 0:
            fail("kiln.lax.reduce_window: a sum needs init_value 0 (the "
                 f"identity), got {init_value!r}", ValueError)
    else:
        fail("kiln.lax.reduce_window supports computation kiln.lax.max and "
             f"kiln.lax.add, got {computation!r}", NotImplementedError)
    if base_dilation is not None and any(int(d) != 1 for d in base_dilation):
        fail("kiln.lax.reduce_window: base_dilation is not supported",
             NotImplementedError)
    window = _ints(window_dimensions, rank, 1, "window_dimensions")
    strides = _ints(window_strides, rank, 1, "window_strides")
    dilation = _ints(window_dilation, rank, 1, "window_dilation")
    dilated = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
    pads = padtype_to_pads(operand.shape, dilated, strides, padding)
    return _kiln.reduce_window(operand, is_max, window, strides,
                               [p[0] for p in pads], [p[1] for p in pads],
                               dilation)


def _clamped_starts(shape, start_indices, sizes, what):
    """Each start as a traced int64 scalar as jax.lax takes it: a negative
    start counts from the end of its dim, and the start is then clamped so
    that the window of `sizes` fits."""
    if len(start_indices) != len(shape) or len(sizes) != len(shape):
        fail(f"kiln.lax.{what}: one start index and size per dim of the "
             f"operand's {len(shape)}", ValueError)
    starts = []
    for start, size, dim in zip(start_indices, sizes, shape):
        if not 0 <= size <= dim:
            fail(f"kiln.lax.{what}: a slice of {size} does not fit a dim of "
                 f"{dim}", ValueError)
        index = knp.astype(knp.asarray(start), np.int64)
        index = knp.where(index < 0, index + dim, index)
        starts.append(knp.clip(index, 0, dim - size))
    return starts


@eager
def dynamic_slice(operand, start_indices, slice_sizes):
    """jax.lax.dynamic_slice: the window of `slice_sizes` at run-time
    `start_indices` (one per dim; negative ones count from the end), each
    clamped so that the window fits. One gather per dim."""
    sizes = [int(s) for s in slice_sizes]
    starts = _clamped_starts(operand.shape, start_indices, sizes,
                             "dynamic_slice")
    x = operand
    for axis, (start, size) in enumerate(zip(starts, sizes)):
        rows = knp.arange(size, dtype=np.int64) + start
        x = knp.take(x, rows, axis=axis)
    return x


@eager
def dynamic_update_slice(operand, update, start_indices):
    """jax.lax.dynamic_update_slice: `operand` with `update` written at
    run-time `start_indices` (negative ones count from the end), each
    clamped so that the update fits."""
    sizes = list(update.shape)
    if len(sizes) != len(operand.shape):
        fail("kiln.lax.dynamic_update_slice: the update must have the "
             "operand's rank", ValueError)
    starts = _clamped_starts(operand.shape, start_indices, sizes,
                             "dynamic_update_slice")
    # Position p of dim d reads update row p - start (clamped) where the
    # window covers it.
    moved, inside = update, None
    for axis, (start, size, dim) in enumerate(zip(starts, sizes,
                                                  operand.shape)):
        offset = knp.arange(dim, dtype=np.int64) - start
        covered = (offset >= 0) & (offset < size)
        moved = knp.take(moved, knp.clip(offset, 0, max(size - 1, 0)),
                         axis=axis)
        shape = [1] * len(operand.shape)
        shape[axis] = dim
        covered = knp.reshape(covered, shape)
        inside = covered if inside is None else inside & covered
    if inside is None:
        return operand
    return knp.where(inside, knp.astype(moved, _core.dtype_of(operand)),
                     operand)


# Bits and remainders: one kiln op each (the logical shift of a signed type
# masks the filled bits), in numpy's promotion.

def _lax_op(fn, name, doc):
    def op(*args):
        return fn(*args)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return eager(op)


bitwise_and, bitwise_or, bitwise_xor = (knp.bitwise_and, knp.bitwise_or,
                                        knp.bitwise_xor)
bitwise_not = knp.invert
shift_left = knp.left_shift
shift_right_logical = _lax_op(
    _kiln.shift_right_logical, "shift_right_logical",
    "x >> y filling with zeros, whatever x's sign; amounts outside [0, bit "
    "width) give 0.")
shift_right_arithmetic = _lax_op(
    _kiln.shift_right_arithmetic, "shift_right_arithmetic",
    "x >> y filling with the sign bit, whatever x's type.")
rem = _lax_op(_kiln.rem, "rem",
              "x - trunc(x / y) * y: the sign of x (C's %, unlike numpy's "
              "mod); an integer remainder by 0 is x.")
erf_inv = _lax_op(_kiln.erf_inv, "erf_inv",
                  "The inverse error function; +-inf at +-1, NaN beyond.")


@eager
def bitcast_convert_type(operand, new_dtype):
    """The bits of every element read as `new_dtype` of the same width
    (float32 <-> int32 <-> uint32, float64 <-> int64)."""
    return _kiln.bitcast_convert_type(operand, _core.dtype_code(new_dtype))


@eager
def sort(operand, dimension=-1, is_stable=True):
    """Ascending stable sort along `dimension` (always stable)."""
    return _kiln.sort(operand, dimension, False)[0]


@eager
def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(keys sorted stably along `dimension`, values in the same order);
    values of keys' shape."""
    keys, values = _core.as_tensor(keys), _core.as_tensor(values)
    if tuple(keys.shape) != tuple(values.shape):
        fail(f"kiln.lax.sort_key_val needs keys and values of one shape, "
             f"got {tuple(keys.shape)} and {tuple(values.shape)}", ValueError)
    sorted_keys, order = _kiln.sort(keys, dimension, False)
    # Gather each slice's values in its order: with the dimension last and
    # the slices as rows, row r's index i is element r * n + i.
    moved = knp.moveaxis(values, dimension, -1)
    n = moved.shape[-1]
    rows = moved.size // n if n else 0
    flat = knp.reshape(knp.moveaxis(order, dimension, -1), (rows, n))
    flat = flat + knp.arange(rows, dtype=knp.int64)[:, None] * n
    picked = _kiln.gather(knp.reshape(moved, (moved.size,)), flat)
    return sorted_keys, knp.moveaxis(knp.reshape(picked, moved.shape), -1,
                                     dimension)
