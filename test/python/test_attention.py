"""kiln.nn.scaled_dot_product_attention: one kiln.attention, compiled for
the CPU as FlashAttention kernels (forward, and the backward from the saved
log-sum-exp under kiln.grad). The reference is numpy in float64 written
from the definition, with the gradients derived by hand; the
finite-difference test checks that derivation itself."""

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
import kiln.nn as knn


def reference(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + mask) v in float64, and the softmax."""
    q, k, v = (np.float64(a) for a in (q, k, v))
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = scale * q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        if mask.dtype == bool:
            s = np.where(mask, s, -np.inf)
        else:
            s = s + np.float64(mask)
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] > np.arange(nq)[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return p @ v, p


def reference_grads(q, k, v, w, mask=None, causal=False, scale=None):
    """Gradients of sum(out * w) with respect to q, k and v."""
    q, k, v, w = (np.float64(a) for a in (q, k, v, w))
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    out, p = reference(q, k, v, mask, causal, scale)
    dv = np.swapaxes(p, -1, -2) @ w
    dp = w @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (w * out).sum(-1, keepdims=True)) * scale
    return ds @ k, np.swapaxes(ds, -1, -2) @ q, dv


def problem(rng, lead=(2, 3), nq=70, nk=45, d=16, dv=8):
    q = rng.standard_normal(lead + (nq, d)).astype(np.float32)
    k = rng.standard_normal(lead + (nk, d)).astype(np.float32)
    v = rng.standard_normal(lead + (nk, dv)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_reference(rng, causal):
    q, k, v = problem(rng)
    got = kiln.jit(lambda q, k, v: knn.scaled_dot_product_attention(
        q, k, v, is_causal=causal))(q, k, v)
    want, _ = reference(q, k, v, causal=causal)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


def test_masks_bool_and_float(rng):
    q, k, v = problem(rng, lead=(2, 2), nq=20, nk=30)
    keep = rng.random((2, 1, 1, 30)) > 0.3
    keep[..., 0] = True  # no row fully masked
    bias = rng.standard_normal((20, 30)).astype(np.float32)
    f = kiln.jit(lambda q, k, v, m: knn.scaled_dot_product_attention(
        q, k, v, mask=m, scale=0.3))
    np.testing.assert_allclose(f(q, k, v, keep), reference(q, k, v, keep, scale=0.3)[0],
                               rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(f(q, k, v, bias), reference(q, k, v, bias, scale=0.3)[0],
                               rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_gradients_match_reference(rng, causal):
    q, k, v = problem(rng, lead=(2,), nq=66, nk=66, d=8, dv=12)
    w = rng.standard_normal((2, 66, 12)).astype(np.float32)

    def loss(q, k, v, w):
        return knp.sum(knn.scaled_dot_product_attention(
            q, k, v, is_causal=causal) * w)

    grads = kiln.jit(kiln.grad(loss, argnums=(0, 1, 2)))(q, k, v, w)
    want = reference_grads(q, k, v, w, causal=causal)
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got, expected, rtol=1e-4,
                                   atol=1e-5 * np.abs(expected).max())


def test_reference_gradients_match_finite_differences(rng):
    q, k, v = (np.float64(a) for a in problem(rng, lead=(), nq=4, nk=5, d=3, dv=2))
    w = rng.standard_normal((4, 2))
    analytic = reference_grads(q, k, v, w, causal=True)
    for arg, grad in zip((q, k, v), analytic):
        numeric = np.zeros_like(arg)
        for index in np.ndindex(arg.shape):
            saved = arg[index]
            arg[index] = saved + 1e-6
            up = (reference(q, k, v, causal=True)[0] * w).sum()
            arg[index] = saved - 1e-6
            down = (reference(q, k, v, causal=True)[0] * w).sum()
            arg[index] = saved
            numeric[index] = (up - down) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_shape_errors_name_the_operands():
    q = np.zeros((2, 4, 8), np.float32)
    with pytest.raises(Exception, match="key must have query's feature size 8"):
        kiln.jit(lambda q, k: knn.scaled_dot_product_attention(q, k, k))(
            q, np.zeros((2, 5, 7), np.float32))
    with pytest.raises(Exception, match=r"cannot broadcast shapes \[3,4\] and \[2,4,4\]"):
        kiln.jit(lambda q, m: knn.scaled_dot_product_attention(q, q, q, mask=m))(
            q, np.zeros((3, 4), np.float32))
