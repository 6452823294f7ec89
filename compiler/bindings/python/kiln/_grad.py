"""kiln.grad, kiln.value_and_grad, kiln.vjp, kiln.jvp and kiln.checkpoint
over pytrees.

The C++ transforms (kiln/Grad.h) do the work: called inside a trace, they
trace the function on fresh inputs, derive its reverse mode with the
autodiff pass (through cond, fori_loop, scan and while_loop; jvp in
forward mode) and inline the result into the enclosing trace. This layer maps pytrees and `argnums` onto
the flat inputs the C++ side takes. Outside a trace, a transformed function
is compiled with kiln.jit and run on concrete arrays. Transforms compose
with jit and with each other (second order where every op on the way has
a derivative rule).
"""

from . import _core, _kiln
from . import numpy as knp
from ._core import fail, flat_function, flat_tensors
from ._eager import eager, every_argument
from ._jit import jit

_GRAD, _VALUE_AND_GRAD, _VJP, _JVP = 0, 1, 2, 3


def _argnum_list(argnums, count, what):
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)
    for n in nums:
        if not -count <= n < count:
            fail(f"{what}: argnums {n} is out of range for a function "
                 f"called with {count} argument(s)", ValueError)
    return [n % count for n in nums], many


def _leaf_ranges(in_def):
    """[(first leaf, treedef)] of each argument, from the TreeDef of the
    argument tuple."""
    ranges, first = [], 0
    for treedef in in_def.children:
        ranges.append((first, treedef))
        first += treedef.num_leaves
    return ranges


def _group(flat, ranges, nums):
    """The flat values of the arguments `nums`, each in its structure."""
    grouped, at = [], 0
    for n in nums:
        treedef = ranges[n][1]
        grouped.append(treedef.unflatten(flat[at:at + treedef.num_leaves]))
        at += treedef.num_leaves
    return grouped


def _is_float(x):
    return _core.is_float_dtype(_core.dtype_of(x))


class _Transform:
    def __init__(self, fun, kind, argnums, has_aux):
        self._fun, self._kind = fun, kind
        self._argnums, self._has_aux = argnums, has_aux
        self.__name__ = ("grad_" if kind == _GRAD else "value_and_grad_") + \
            getattr(fun, "__name__", "fn")
        self.__wrapped__ = fun
        self._call = eager(self._traced, name=self.__name__,
                           inputs=every_argument)

    def __call__(self, *args):
        return self._call(*args)

    def _traced(self, *args):
        what = "kiln.grad" if self._kind == _GRAD else "kiln.value_and_grad"
        nums, many = _argnum_list(self._argnums, len(args), what)
        leaves, in_def = flat_tensors(args)
        ranges = _leaf_ranges(in_def)
        flat_argnums = []
        for n in nums:
            first, treedef = ranges[n]
            flat_argnums += range(first, first + treedef.num_leaves)
        for i in flat_argnums:
            if not _is_float(leaves[i]):
                fail(f"{what}: argument leaf {i} has dtype "
                     f"{_core.dtype_of(leaves[i])}; only float arrays can be "
                     "differentiated", TypeError)
        out_defs = []
        flat = flat_function(self._fun, in_def, out_defs)
        if not self._has_aux:
            results = _kiln.transform(self._kind, flat, flat_argnums, leaves,
                                      [])
            value, grads = (results[0], results[1:]) \
                if self._kind == _VALUE_AND_GRAD else (None, results)
        else:
            value, grads = self._with_aux(flat, leaves, flat_argnums,
                                          out_defs, what)
        grouped = _group(grads, ranges, nums)
        grad_tree = tuple(grouped) if many else grouped[0]
        if self._kind == _GRAD:
            return (grad_tree, value) if self._has_aux else grad_tree
        return value, grad_tree

    def _with_aux(self, flat, leaves, flat_argnums, out_defs, what):
        """Through the vjp transform: fun returns (loss, aux); the loss's
        cotangent is one, the float aux leaves' are zero."""
        probe = _kiln.trace("probe", [(l.dtype_code, list(l.shape), f"a{i}")
                                      for i, l in enumerate(leaves)], flat,
                            capture=True)
        out_def = out_defs[-1]
        if out_def.kind != "tuple" or len(out_def.children) != 2 or \
                out_def.children[0].kind != "leaf":
            fail(f"{what} with has_aux=True needs the function to return a "
                 "pair (loss, aux)", TypeError)
        # The probe's outputs (its extra inputs are the closure's captures).
        outputs = probe.outputs
        cotangents = []
        for i, (_, code, shape) in enumerate(outputs):
            dtype = _core._DTYPE_OF_CODE[code]
            if not _core.is_float_dtype(dtype):
                continue
            cotangents.append(knp.full(list(shape), 1 if i == 0 else 0,
                                       dtype))
        results = _kiln.transform(_VJP, flat, flat_argnums, leaves,
                                  cotangents)
        n_out = len(outputs)
        primal = out_def.unflatten(results[:n_out])
        loss, aux = primal
        if self._kind == _GRAD:
            return aux, results[n_out:]
        return (loss, aux), results[n_out:]


def grad(fun, argnums=0, has_aux=False):
    """The gradient of `fun`, which returns a float scalar (or, with
    has_aux, a pair (scalar, aux)), with respect to the arguments
    `argnums` (an int, or a tuple for a tuple of gradients). Each gradient
    has its argument's structure. With has_aux the result is (grad, aux)."""
    return _Transform(fun, _GRAD, argnums, has_aux)


def value_and_grad(fun, argnums=0, has_aux=False):
    """Like grad, returning (value, grad); with has_aux,
    ((value, aux), grad)."""
    return _Transform(fun, _VALUE_AND_GRAD, argnums, has_aux)


def vjp(fun, *primals):
    """(fun(*primals), vjp_fn): vjp_fn(cotangent) returns one cotangent per
    primal (the vector-Jacobian product). cotangent has the structure of
    fun's output; non-float outputs take no cotangent."""
    if not _kiln.is_tracing():
        # Two compiled functions, not one traced one: the forward pass now,
        # and the backward pass (fun again, and its vjp) at each call of the
        # pullback, wherever it is called.
        out = jit(fun, name="vjp_forward")(*primals)

        def eager_vjp(cotangent):
            return jit(lambda p, c: vjp(fun, *p)[1](c),
                       name="vjp_backward")(tuple(primals), cotangent)
        return out, eager_vjp
    out = fun(*primals)
    leaves, in_def = flat_tensors(primals)
    ranges = _leaf_ranges(in_def)
    float_leaves = [i for i, leaf in enumerate(leaves) if _is_float(leaf)]
    out_leaves, out_def = flat_tensors(out)

    def vjp_fn(cotangent):
        ct_leaves, ct_def = flat_tensors(cotangent)
        if ct_def != out_def:
            fail(f"kiln.vjp: the cotangent has the structure {ct_def!r} but "
                 f"the function's output has {out_def!r}", TypeError)
        cts = [c for c, o in zip(ct_leaves, out_leaves) if _is_float(o)]
        flat = flat_function(fun, in_def, [])
        results = _kiln.transform(_VJP, flat, float_leaves, leaves, cts)
        grads = dict(zip(float_leaves, results[len(out_leaves):]))
        flat_grads = [grads[i] if i in grads else knp.zeros_like(leaves[i])
                      for i in range(len(leaves))]
        return tuple(_group(flat_grads, ranges, range(len(ranges))))
    return out, vjp_fn


def jvp(fun, primals, tangents):
    """(fun(*primals), J tangents): the Jacobian-vector product of `fun` at
    `primals` along `tangents`, in forward mode, as jax.jvp. `primals` and
    `tangents` are tuples (or lists) of the same structure; a float
    primal's tangent has its shape and dtype, a non-float primal's tangent
    is not read. The output tangent has the structure of fun's output;
    non-float outputs get zeros of their own dtype (JAX gives float0).
    Composes with grad: jvp(grad(f), (x,), (v,))[1] is the Hessian-vector
    product H v, at the cost of about two gradients."""
    if not isinstance(primals, (tuple, list)) or \
            not isinstance(tangents, (tuple, list)):
        fail("kiln.jvp: primals and tangents must be tuples (or lists) of "
             f"arguments, got {type(primals).__name__} and "
             f"{type(tangents).__name__}", TypeError)
    if len(primals) != len(tangents):
        fail(f"kiln.jvp: {len(primals)} primal(s) but {len(tangents)} "
             "tangent(s)", ValueError)
    return _jvp(fun, tuple(primals), tuple(tangents))


# Outside a trace, compiled with the primals and tangents as inputs.
@eager(name="jvp", inputs=lambda key, value: key != 0, cache=False)
def _jvp(fun, primals, tangents):
    """jvp on checked arguments (primals and tangents as tuples)."""
    leaves, in_def = flat_tensors(tuple(primals))
    t_leaves, t_def = flat_tensors(tuple(tangents))
    if t_def != in_def:
        fail(f"kiln.jvp: the tangents have the structure {t_def!r} but the "
             f"primals have {in_def!r}", TypeError)
    float_leaves = [i for i, leaf in enumerate(leaves) if _is_float(leaf)]
    out_defs = []
    flat = flat_function(fun, in_def, out_defs)
    results = _kiln.transform(_JVP, flat, float_leaves, leaves,
                              [t_leaves[i] for i in float_leaves])
    out_def = out_defs[-1]
    out_leaves = results[:out_def.num_leaves]
    derived = iter(results[out_def.num_leaves:])
    out_tangents = [next(derived) if _is_float(o) else knp.zeros_like(o)
                    for o in out_leaves]
    return out_def.unflatten(out_leaves), out_def.unflatten(out_tangents)


def checkpoint(fun, prevent_cse=True, policy=None, static_argnums=()):
    """`fun` with its intermediate values recomputed in the backward pass
    of an enclosing gradient instead of stored, as jax.checkpoint (alias
    kiln.remat): a gradient through it keeps only fun's inputs, for one
    more forward run of fun. prevent_cse is accepted (kiln does not merge
    the recomputation with the forward pass); policy and static_argnums are
    not supported."""
    if policy is not None or static_argnums:
        fail("kiln.checkpoint: policy and static_argnums are not supported",
             NotImplementedError)

    @eager(name="checkpoint", inputs=every_argument, cache=False)
    def checkpointed(*args):
        leaves, in_def = flat_tensors(args)
        out_defs = []
        flat = flat_function(fun, in_def, out_defs)
        results = _kiln.checkpoint(flat, leaves)
        return out_defs[-1].unflatten(results)
    checkpointed.__name__ = "checkpoint_" + getattr(fun, "__name__", "fn")
    checkpointed.__wrapped__ = fun
    return checkpointed


remat = checkpoint
