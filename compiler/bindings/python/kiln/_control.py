"""Structured control flow on traced values: kiln.cond, kiln.while_loop,
kiln.fori_loop and kiln.scan, over pytrees of arrays.

Each traces its Python callables into the regions of one kiln.cond,
kiln.while or kiln.for op (the C++ tracer's closure conversion turns
traced arrays a callable uses from outside into explicit operands). Outside
a trace, they run compiled on concrete arrays, like kiln.numpy's functions.
"""

import numpy as np

from . import _kiln
from ._core import (Tensor, as_tensor, astype, dtype_of, fail,
                    flat_function, flat_tensors, int_dtype)
from ._eager import eager, positional_operands


def _check_same(expected, got, what):
    if expected != got:
        fail(f"{what} returned the structure {got!r} but {expected!r} was "
             "expected (the carried state keeps its structure)", TypeError)


# Outside a trace, each primitive is compiled and run on its operands; the
# callables and Python integers (loop bounds, lengths) are baked in, anew at
# each call.
_eager = eager(inputs=positional_operands, cache=False)


@_eager
def cond(pred, true_fn, false_fn, *operands):
    """true_fn(*operands) if pred else false_fn(*operands), with pred a
    traced bool scalar; both branches must return the same structure of
    arrays of the same shapes and dtypes."""
    leaves, in_def = flat_tensors(operands)
    defs_true, defs_false = [], []
    results = _kiln.cond(pred, flat_function(true_fn, in_def, defs_true),
                         flat_function(false_fn, in_def, defs_false), leaves)
    if defs_true[0] != defs_false[0]:
        fail(f"kiln.cond's branches return different structures: "
             f"{defs_true[0]!r} and {defs_false[0]!r}", TypeError)
    return defs_true[0].unflatten(results)


@_eager
def while_loop(cond_fun, body_fun, init_val):
    """Repeats `val = body_fun(val)` while `cond_fun(val)` (a traced bool
    scalar) holds, starting from init_val; the trip count may depend on the
    data. Gradients flow through it (the forward loop keeps what the
    backward loop needs on a stack)."""
    leaves, treedef = flat_tensors(init_val)

    def predicate(xs):
        return as_tensor(cond_fun(treedef.unflatten(xs)))

    def body(xs):
        out, out_def = flat_tensors(body_fun(treedef.unflatten(xs)))
        _check_same(treedef, out_def, "kiln.while_loop's body_fun")
        return out
    return treedef.unflatten(_kiln.while_loop(predicate, body, leaves))


@_eager
def fori_loop(lower, upper, body_fun, init_val):
    """`val = body_fun(i, val)` for i in range(lower, upper), i an int32
    scalar (int64 when a bound does not fit). With Python integer bounds
    this is a counted loop (kiln.for); with traced bounds, a while loop."""
    leaves, treedef = flat_tensors(init_val)
    if isinstance(lower, Tensor) or isinstance(upper, Tensor):
        def cond_fun(state):
            return _kiln.less(state[0], state[1])

        def step(state):
            i, hi, val = state
            return _kiln.add(i, 1), hi, body_fun(i, val)
        wide = any(isinstance(b, Tensor) and dtype_of(b) == np.int64 or
                   isinstance(b, int) and int_dtype(b) == np.int64
                   for b in (lower, upper))
        lo_t = astype(as_tensor(lower), np.int64 if wide else np.int32)
        hi_t = astype(as_tensor(upper), np.int64 if wide else np.int32)
        return while_loop(cond_fun, step, (lo_t, hi_t, init_val))[2]

    narrow = int_dtype(int(lower)) == int_dtype(int(upper)) == np.int32

    def body(i, xs):
        if narrow:
            i = astype(i, np.int32)
        out, out_def = flat_tensors(body_fun(i, treedef.unflatten(xs)))
        _check_same(treedef, out_def, "kiln.fori_loop's body_fun")
        return out
    return treedef.unflatten(_kiln.fori_loop(int(lower), int(upper), body,
                                             leaves))


@_eager
def scan(f, init, xs=None, length=None):
    """JAX's scan: `carry, y = f(carry, x)` for each x along axis 0 of xs
    (a pytree), returning the final carry and the ys stacked along a new
    leading axis. With xs None, `length` gives the number of steps."""
    carry_leaves, carry_def = flat_tensors(init)
    x_leaves, x_def = flat_tensors(xs)
    y_defs = []

    def step(carry, x):
        result = f(carry_def.unflatten(carry), x_def.unflatten(x))
        if not isinstance(result, tuple) or len(result) != 2:
            fail("kiln.scan's f must return a pair (carry, y)", TypeError)
        new_carry, new_carry_def = flat_tensors(result[0])
        _check_same(carry_def, new_carry_def, "kiln.scan's f (carry)")
        ys, y_def = flat_tensors(result[1])
        y_defs.append(y_def)
        return new_carry, ys
    if length is None and not x_leaves:
        fail("kiln.scan needs xs or a length", ValueError)
    carry, ys = _kiln.scan(step, carry_leaves, x_leaves,
                           -1 if length is None else int(length))
    return carry_def.unflatten(carry), y_defs[0].unflatten(ys)
