"""kiln.nn: the functions of neural networks (as in jax.nn)."""

import math

import numpy as np

from . import _kiln
from . import numpy as knp
from .numpy import _eager, _float_of


@_eager
def relu(x):
    return _kiln.relu(x)


@_eager
def sigmoid(x):
    return _kiln.sigmoid(_float_of(x))


@_eager
def softplus(x):
    """log(1 + exp(x)), computed without overflow."""
    x = _float_of(x)
    return knp.maximum(x, 0.0) + knp.log1p(knp.exp(-knp.abs(x)))


@_eager
def silu(x):
    x = _float_of(x)
    return x * _kiln.sigmoid(x)


swish = silu


@_eager
def gelu(x, approximate=True):
    x = _float_of(x)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + _kiln.tanh(inner))
    return 0.5 * x * (1.0 + _kiln.erf(x / math.sqrt(2.0)))


@_eager
def softmax(x, axis=-1):
    return _kiln.softmax(_float_of(x), axis)


@_eager
def log_softmax(x, axis=-1):
    return _kiln.log_softmax(_float_of(x), axis)


@_eager
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


@_eager
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


@_eager
def one_hot(x, num_classes, dtype=np.float32):
    """x's integers as one-hot vectors along a new last axis."""
    x = knp.asarray(x)
    classes = knp.arange(num_classes)
    return knp.astype(knp.equal(knp.expand_dims(x, -1), classes), dtype)


@_eager
def layer_norm(x, gamma, beta, eps=1e-5, axis=-1):
    mean = knp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    var = knp.mean(centered * centered, axis=axis, keepdims=True)
    return centered * _kiln.rsqrt(var + eps) * gamma + beta
