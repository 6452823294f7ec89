"""Products: matmul, dot, vdot, outer, inner and einsum (as batched
matrix products, with transposes and reshapes around them)."""

import numpy as _np

from .. import _kiln
from .._eager import eager
from ._base import as_tensor, fail
from ._building import take
from ._elementwise import multiply
from ._reductions import sum
from ._shapes import (broadcast_to, moveaxis, ravel, reshape, transpose)

__all__ = ["dot", "einsum", "inner", "matmul", "outer", "vdot"]


@eager
def matmul(x1, x2):
    t1, t2 = as_tensor(x1), as_tensor(x2)
    if t1.ndim == 0 or t2.ndim == 0:
        fail("matmul: operands must have at least one dimension (use * for "
             "a scalar)", ValueError)
    if t1.ndim > 3 or t2.ndim > 3 or (
            t1.ndim == 3 and t2.ndim == 3 and t1.shape[0] != t2.shape[0]):
        # (the tracer's matmul takes one batch dimension, not broadcast)
        return _batched_matmul(t1, t2)
    return _kiln.matmul(t1, t2)


def _batched_matmul(t1, t2):
    """matmul with more than one batch dimension: the batch dimensions
    broadcast and fold into one (a vector operand first becomes a matrix,
    as numpy treats it, and its axis is dropped from the result)."""
    vector1, vector2 = t1.ndim == 1, t2.ndim == 1
    if vector1:
        t1 = reshape(t1, [1, t1.shape[0]])
    if vector2:
        t2 = reshape(t2, [t2.shape[0], 1])
    batch = tuple(_np.broadcast_shapes(t1.shape[:-2], t2.shape[:-2]))
    n = int(_np.prod(batch))
    t1 = reshape(broadcast_to(t1, batch + t1.shape[-2:]),
                 (n,) + t1.shape[-2:])
    t2 = reshape(broadcast_to(t2, batch + t2.shape[-2:]),
                 (n,) + t2.shape[-2:])
    out = _kiln.matmul(t1, t2)
    shape = batch + ((out.shape[1],) if not vector1 else ()) + \
        ((out.shape[2],) if not vector2 else ())
    return reshape(out, shape)


@eager
def dot(a, b):
    t1, t2 = as_tensor(a), as_tensor(b)
    if t1.ndim == 0 or t2.ndim == 0:
        return multiply(t1, t2)
    if t1.ndim <= 2 and t2.ndim <= 2:
        return matmul(t1, t2)
    # numpy's N-D dot: a's last axis with b's second-to-last (b's other
    # axes all pair with each of a's), one matrix product.
    k = t1.shape[-1]
    rows = reshape(t1, [-1, k])
    columns = reshape(moveaxis(t2, -2, 0), [k, -1]) if t2.ndim >= 2 \
        else reshape(t2, [k, 1])
    rest = list(t2.shape[:-2]) + list(t2.shape[-1:]) if t2.ndim >= 2 else []
    return reshape(matmul(rows, columns), list(t1.shape[:-1]) + rest)


@eager
def vdot(a, b):
    return sum(multiply(ravel(a), ravel(b)))


@eager
def outer(a, b):
    return multiply(reshape(a, [-1, 1]), reshape(b, [1, -1]))


@eager
def inner(a, b):
    """Sums over the last axes: the result's shape is a.shape[:-1] +
    b.shape[:-1] (a matrix product with b's rows)."""
    t1, t2 = as_tensor(a), as_tensor(b)
    if t1.ndim == 0 or t2.ndim == 0:
        return multiply(t1, t2)
    if t1.shape[-1] != t2.shape[-1]:
        fail(f"inner: the last axes differ ({t1.shape} and {t2.shape})",
             ValueError)
    k = t1.shape[-1]
    out = matmul(reshape(t1, [-1, k]), transpose(reshape(t2, [-1, k])))
    return reshape(out, list(t1.shape[:-1]) + list(t2.shape[:-1]))


def _distinct_letters(x, letters):
    """x with each repeated index letter reduced to its diagonal (a static
    gather of the elements whose repeated indices agree); returns the array
    and its letters, each once."""
    if len(set(letters)) == len(letters):
        return x, letters
    unique = "".join(dict.fromkeys(letters))
    sizes = {}
    for letter, size in zip(letters, x.shape):
        if sizes.setdefault(letter, size) != size:
            fail(f"einsum: index '{letter}' has sizes {sizes[letter]} and "
                 f"{size}", ValueError)
    grid = _np.indices([sizes[u] for u in unique])
    flat = _np.ravel_multi_index(
        tuple(grid[unique.index(letter)] for letter in letters), x.shape)
    return take(ravel(x), flat), unique


def _sum_letters(x, letters, keep):
    """x summed over its letters that are not in `keep`."""
    drop = tuple(i for i, c in enumerate(letters) if c not in keep)
    if not drop:
        return x, letters
    return sum(x, axis=drop), "".join(c for c in letters if c in keep)


def _einsum_pair(x, xl, y, yl, keep):
    """x (letters xl) times y (letters yl) as one batched matmul, summed
    over the letters that are not in `keep`; result letters: batch, x's
    free, y's free."""
    # A letter only one operand has and nobody needs is summed out first.
    x, xl = _sum_letters(x, xl, keep + yl)
    y, yl = _sum_letters(y, yl, keep + xl)
    batch = [c for c in xl if c in yl and c in keep]
    contract = [c for c in xl if c in yl and c not in keep]
    xfree = [c for c in xl if c not in yl]
    yfree = [c for c in yl if c not in xl]
    size = dict(zip(xl + yl, list(x.shape) + list(y.shape)))

    def volume(letters):
        return int(_np.prod([size[c] for c in letters])) if letters else 1
    x = transpose(x, [xl.index(c) for c in batch + xfree + contract])
    y = transpose(y, [yl.index(c) for c in batch + contract + yfree])
    x = reshape(x, [volume(batch), volume(xfree), volume(contract)])
    y = reshape(y, [volume(batch), volume(contract), volume(yfree)])
    letters = batch + xfree + yfree
    return (reshape(_kiln.matmul(x, y), [size[c] for c in letters]),
            "".join(letters))


def einsum(subscripts, *operands):
    """Einstein summation over one or more operands: pairs become one
    batched matmul (transposes and reshapes around it), repeated indices of
    an operand its diagonal, indices nobody keeps are summed. Explicit
    ('ij,jk->ik') and implicit ('ij,jk') outputs; no ellipsis."""
    if "..." in subscripts:
        fail("kiln.numpy.einsum does not take '...' yet; name every "
             "dimension", NotImplementedError)
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        fail(f"einsum: '{subscripts}' names {len(terms)} operands but "
             f"{len(operands)} were given", ValueError)
    if "->" not in subscripts:
        counts = {}
        for c in inputs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    arrays = []
    for term, operand in zip(terms, operands):
        x = as_tensor(operand)
        if len(term) != x.ndim:
            fail(f"einsum: '{term}' has {len(term)} indices for an operand "
                 f"of rank {x.ndim}", ValueError)
        arrays.append(_distinct_letters(x, term))
    x, letters = arrays[0]
    for k, (y, other) in enumerate(arrays[1:], 1):
        later = "".join(t for _, t in arrays[k + 1:])
        x, letters = _einsum_pair(x, letters, y, other, output + later)
    # Sum what the output drops, then order the rest as the output asks.
    x, letters = _sum_letters(x, letters, output)
    if sorted(letters) != sorted(output):
        fail(f"einsum: the output '{output}' names indices the operands "
             "do not have", ValueError)
    return transpose(x, [letters.index(c) for c in output]) \
        if letters != output else x
