"""kiln.nn: the functions of neural networks: jax.nn's activations and
softmax, and the layers a CNN needs (convolution, transposed convolution,
max and average pooling, batch normalization, embedding lookup, dropout)
as functions of explicit parameters, state and random keys."""

import math

import numpy as np

from . import _core, _kiln, lax, random
from . import numpy as knp
from ._core import fail
from ._eager import eager
from .numpy._base import _float_of


@eager
def relu(x):
    return _kiln.relu(x)


@eager
def sigmoid(x):
    return _kiln.sigmoid(_float_of(x))


@eager
def softplus(x):
    """log(1 + exp(x)), computed without overflow."""
    x = _float_of(x)
    return knp.maximum(x, 0.0) + knp.log1p(knp.exp(-knp.abs(x)))


@eager
def silu(x):
    x = _float_of(x)
    return x * _kiln.sigmoid(x)


swish = silu


@eager
def gelu(x, approximate=True):
    x = _float_of(x)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + _kiln.tanh(inner))
    return 0.5 * x * (1.0 + _kiln.erf(x / math.sqrt(2.0)))


@eager
def softmax(x, axis=-1):
    return _kiln.softmax(_float_of(x), axis)


@eager
def log_softmax(x, axis=-1):
    return _kiln.log_softmax(_float_of(x), axis)


@eager
def scaled_dot_product_attention(query, key, value, mask=None,
                                 is_causal=False, scale=None):
    """softmax(query @ key^T * scale + mask) @ value over the last two
    dims, as torch.nn.functional.scaled_dot_product_attention: query
    [..., Nq, D], key [..., Nk, D], value [..., Nk, Dv]; `scale` defaults
    to 1/sqrt(D); a bool `mask` keeps the keys where it is true, a float
    one is added to the scores (either broadcasts to [..., Nq, Nk]);
    `is_causal` lets query i attend to keys j <= i. One kiln.attention:
    compiled for the CPU it never forms the Nq x Nk scores, and its
    gradient is FlashAttention's backward."""
    return _kiln.scaled_dot_product_attention(
        query, key, value, mask, bool(is_causal),
        None if scale is None else float(scale))


@eager
def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) over `axis`, stable for large values. An all
    -inf slice gives -inf (its max is not subtracted: -inf - -inf would
    be nan)."""
    x = _float_of(a)
    top = knp.max(x, axis=axis, keepdims=True)
    top = knp.where(knp.isfinite(top), top, knp.zeros_like(top))
    total = knp.sum(knp.exp(x - top), axis=axis, keepdims=True)
    result = knp.log(total) + top
    return result if keepdims else knp.squeeze(
        result, axis=axis if axis is not None else None)


@eager
def one_hot(x, num_classes, dtype=np.float32):
    """x's integers as one-hot vectors along a new last axis."""
    x = knp.asarray(x)
    classes = knp.arange(num_classes)
    return knp.astype(knp.equal(knp.expand_dims(x, -1), classes), dtype)


@eager
def layer_norm(x, gamma, beta, eps=1e-5, axis=-1):
    mean = knp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    var = knp.mean(centered * centered, axis=axis, keepdims=True)
    return centered * _kiln.rsqrt(var + eps) * gamma + beta


@eager
def relu6(x):
    return knp.clip(_float_of(x), 0.0, 6.0)


@eager
def leaky_relu(x, negative_slope=0.01):
    x = _float_of(x)
    return knp.where(x >= 0, x, negative_slope * x)


@eager
def elu(x, alpha=1.0):
    x = _float_of(x)
    return knp.where(x > 0, x, alpha * knp.expm1(knp.minimum(x, 0.0)))


@eager
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    return -softplus(-_float_of(x))


@eager
def hard_sigmoid(x):
    return relu6(_float_of(x) + 3.0) / 6.0


@eager
def hard_swish(x):
    x = _float_of(x)
    return x * hard_sigmoid(x)


hard_silu = hard_swish


def _layout_specs(layout, spatial):
    """kiln.lax dimension numbers for an input layout: NCHW-style inputs
    take OIHW-style kernels, NHWC-style ones HWIO-style (as in JAX and
    Flax)."""
    letters = "DHW"[-spatial:] if spatial <= 3 else None
    if letters is None:
        fail("kiln.nn: convolutions and pooling have 1 to 3 spatial dims",
             ValueError)
    if layout == "NCHW":
        return ("NC" + letters, "OI" + letters, "NC" + letters)
    if layout == "NHWC":
        return ("N" + letters + "C", letters + "IO", "N" + letters + "C")
    fail(f"unknown layout {layout!r}: use 'NCHW' or 'NHWC'", ValueError)


def _per_dim(value, spatial):
    if value is None:
        return (1,) * spatial
    return tuple(value) if isinstance(value, (tuple, list)) \
        else (int(value),) * spatial


@eager
def conv(x, w, strides=None, padding="SAME", dilation=None, groups=1,
         layout="NCHW"):
    """An N-d convolution layer's product (add the bias yourself): x is
    [N, C, spatial...] with w [O, C / groups, kernel...] (layout "NCHW"),
    or [N, spatial..., C] with w [kernel..., C / groups, O] ("NHWC").
    padding is "SAME", "VALID", an int for every side or (low, high)
    pairs; strides and dilation an int or one per spatial dim."""
    spatial = len(x.shape) - 2
    if isinstance(padding, int):
        padding = [(padding, padding)] * spatial
    return lax.conv_general_dilated(
        x, w, _per_dim(strides, spatial), padding,
        rhs_dilation=_per_dim(dilation, spatial),
        dimension_numbers=_layout_specs(layout, spatial),
        feature_group_count=groups)


@eager
def conv_transpose(x, w, strides=None, padding="SAME", dilation=None,
                   layout="NCHW"):
    """The transposed convolution of jax.lax.conv_transpose (Flax's
    ConvTranspose): the input dilated by `strides`, w laid out as for conv
    ([O, I, kernel...] or [kernel..., I, O]) and not flipped."""
    spatial = len(x.shape) - 2
    return lax.conv_transpose(x, w, _per_dim(strides, spatial), padding,
                              rhs_dilation=_per_dim(dilation, spatial),
                              dimension_numbers=_layout_specs(layout, spatial))


def _pool_window(x, window, strides, padding, layout):
    """reduce_window's window, strides and padding over every dim of x for
    a pool over its spatial dims (strides default to the window)."""
    spatial = len(x.shape) - 2
    window = _per_dim(window, spatial)
    strides = _per_dim(strides, spatial) if strides is not None else window
    _layout_specs(layout, spatial)
    # The spatial dims: 2.. for NCHW, 1..-1 for NHWC.
    before, after = ((1, 1), ()) if layout == "NCHW" else ((1,), (1,))
    if isinstance(padding, int):
        padding = [(padding, padding)] * spatial
    if not isinstance(padding, str):
        padding = ([(0, 0)] * len(before) + [tuple(p) for p in padding] +
                   [(0, 0)] * len(after))
    return before + window + after, before + strides + after, padding


@eager
def max_pool(x, window, strides=None, padding="VALID", layout="NCHW"):
    """Max pooling over the spatial dims (strides default to the window;
    padding as for conv, padded positions never win)."""
    x = _float_of(x)
    return lax.reduce_window(x, -np.inf, lax.max,
                             *_pool_window(x, window, strides, padding,
                                           layout))


@eager
def avg_pool(x, window, strides=None, padding="VALID", layout="NCHW",
             count_include_pad=True):
    """Average pooling (strides default to the window). With
    count_include_pad (Flax's default) every window is divided by its full
    size; without, by the number of elements it covers inside x."""
    x = _float_of(x)
    window, strides, padding = _pool_window(x, window, strides, padding,
                                            layout)
    total = lax.reduce_window(x, 0.0, lax.add, window, strides, padding)
    if count_include_pad:
        return total / float(np.prod(window))
    ones = knp.ones(x.shape, _core.dtype_of(x))
    count = lax.reduce_window(ones, 0.0, lax.add, window, strides, padding)
    return total / count


@eager
def batch_norm(x, scale, bias, mean, var, training, momentum=0.9, eps=1e-5,
               axis=1):
    """Batch normalization over every dim but `axis` (the channels: 1 for
    NCHW, -1 for NHWC), with its running statistics as explicit state:
    returns (y, (new_mean, new_var)). Training normalizes by the batch's
    mean and (biased) variance and moves the running ones toward them,
    new = momentum * old + (1 - momentum) * batch, as Flax's BatchNorm;
    evaluation normalizes by the running ones and returns them unchanged."""
    x = _float_of(x)
    rank = len(x.shape)
    axis = axis % rank
    reduced = tuple(d for d in range(rank) if d != axis)
    shape = [1] * rank
    shape[axis] = x.shape[axis]
    if training:
        batch_mean = knp.mean(x, axis=reduced)
        centered = x - knp.reshape(batch_mean, shape)
        batch_var = knp.mean(centered * centered, axis=reduced)
        use_mean, use_var = batch_mean, batch_var
        new_mean = momentum * mean + (1.0 - momentum) * batch_mean
        new_var = momentum * var + (1.0 - momentum) * batch_var
    else:
        use_mean, use_var, new_mean, new_var = mean, var, mean, var
    inv = _kiln.rsqrt(knp.reshape(use_var, shape) + eps)
    y = (x - knp.reshape(use_mean, shape)) * inv * knp.reshape(scale, shape) \
        + knp.reshape(bias, shape)
    return y, (new_mean, new_var)


@eager
def embedding(table, ids):
    """The rows of `table` [vocabulary, features] at the integer `ids` (any
    shape): [*ids.shape, features]. Out-of-range ids are clamped; the
    gradient with respect to the table is a scatter-add of the rows."""
    return _kiln.gather(table, knp.asarray(ids))


def dropout(key, rate, x, deterministic=False):
    """Inverted dropout (haiku.dropout's convention): each element of x is
    kept with probability 1 - rate and scaled by 1 / (1 - rate), or zeroed,
    by kiln.random.bernoulli(key, 1 - rate, x.shape); deterministic=True
    (evaluation) or rate 0 returns x. Draw a fresh key per step and layer
    (kiln.random.split or fold_in)."""
    if not 0.0 <= rate <= 1.0:
        fail(f"kiln.nn.dropout: rate must be in [0, 1], got {rate}",
             ValueError)
    if deterministic or rate == 0.0:
        return x
    return _dropout(key, float(rate), x)


@eager
def _dropout(key, rate, x):
    x = _float_of(_core.as_tensor(x))
    if rate == 1.0:
        return knp.zeros_like(x)
    keep = 1.0 - rate
    mask = random.bernoulli(key, keep, tuple(x.shape))
    return knp.where(mask, x / keep, 0.0)
