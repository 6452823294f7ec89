"""kiln.vmap, and the Jacobians and Hessian built from it with jvp and vjp
(kiln.jacfwd, kiln.jacrev, kiln.hessian), with JAX's signatures.

kiln.vmap hands the function to the C++ transform (kiln/Vmap.h): it is
traced on one example, its batched form is derived by the batching pass
(products over all the examples' rows, batched products, per-lane indices,
cond as a select, while until every lane is done) and inlined into the
enclosing trace. This layer maps pytrees of axes (in_axes and out_axes as
prefixes of the arguments' and outputs' structures) onto the flat lists the
C++ side takes. Outside a trace a vmapped function is compiled with
kiln.jit and run on concrete arrays.
"""

import numpy as np

from . import _core, _kiln
from . import numpy as knp
from ._core import fail, flat_function, flat_tensors
from ._eager import eager, every_argument
from ._grad import jvp, vjp


def _prefix(axes, treedef, what):
    """One axis per leaf of `treedef`, from `axes`: an int or None for the
    whole subtree, or a tree of the same structure (a prefix of it)."""
    if axes is None or isinstance(axes, (int, np.integer)):
        return [None if axes is None else int(axes)] * treedef.num_leaves
    kind = treedef.kind
    if kind == "dict" and isinstance(axes, dict):
        if sorted(axes) != sorted(treedef.meta):
            fail(f"kiln.vmap: {what} has keys {sorted(axes)} where the "
                 f"value has {sorted(treedef.meta)}", ValueError)
        return [a for key, child in zip(treedef.meta, treedef.children)
                for a in _prefix(axes[key], child, what)]
    if kind in ("tuple", "list", "namedtuple") and \
            isinstance(axes, (tuple, list)):
        if len(axes) != len(treedef.children):
            fail(f"kiln.vmap: {what} has {len(axes)} entries where the value "
                 f"has {len(treedef.children)}", ValueError)
        return [a for axis, child in zip(axes, treedef.children)
                for a in _prefix(axis, child, what)]
    fail(f"kiln.vmap: {what} {axes!r} does not match the structure "
         f"{treedef!r}", ValueError)


def _normalized(axis, rank):
    return None if axis is None else (axis + rank if axis < 0 else axis)


class _Vmapped:
    def __init__(self, fun, in_axes, out_axes):
        self._fun, self._in_axes, self._out_axes = fun, in_axes, out_axes
        self.__name__ = "vmap_" + getattr(fun, "__name__", "fn")
        self.__wrapped__ = fun
        self._call = eager(self._traced, name=self.__name__,
                           inputs=every_argument)

    def __call__(self, *args):
        return self._call(*args)

    def _traced(self, *args):
        leaves, in_def = flat_tensors(args)
        in_axes = self._in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if not (in_axes is None or isinstance(in_axes, (int, tuple))):
            fail("kiln.vmap: in_axes must be an int, None or a tuple with "
                 "one entry per argument", TypeError)
        flat_in = _prefix(in_axes, in_def, "in_axes")
        flat_in = [_normalized(a, len(leaf.shape))
                   for a, leaf in zip(flat_in, leaves)]
        out_defs = []
        flat = flat_function(self._fun, in_def, out_defs)
        out_axes = self._out_axes
        if out_axes is None or isinstance(out_axes, (int, np.integer)):
            flat_out = [None if out_axes is None else int(out_axes)]
        else:
            flat_out = _prefix(out_axes, self._probe(flat, leaves, flat_in,
                                                     out_defs), "out_axes")
        results = _kiln.vmap(flat, flat_in, flat_out, leaves)
        return out_defs[-1].unflatten(results)

    @staticmethod
    def _probe(flat, leaves, flat_in, out_defs):
        """The output structure, from a trace of one example."""
        specs = []
        for i, (leaf, axis) in enumerate(zip(leaves, flat_in)):
            shape = list(leaf.shape)
            if axis is not None:
                del shape[axis]
            specs.append((leaf.dtype_code, shape, f"a{i}"))
        _kiln.trace("probe", specs, flat, capture=True)
        return out_defs[-1]


def vmap(fun, in_axes=0, out_axes=0):
    """The batched form of `fun`, as jax.vmap: each argument carries a batch
    at dim in_axes (an int for all, None for an argument shared by every
    example, or a tuple with one entry per argument, each a prefix of that
    argument's structure); each output carries it at out_axes (likewise a
    prefix of the output's structure; None for an output that does not
    depend on the batch). Lane b is fun on lane b of the mapped arguments.
    Composes with grad, jvp, jit and itself: vmap(grad(loss), in_axes=(None,
    0, 0)) gives per-example gradients as batched products."""
    return _Vmapped(fun, in_axes, out_axes)


def _argnum_tuple(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _cut(x, leaves):
    """x cut along its first dim into one piece per leaf, of the leaf's
    element count, in order."""
    pieces, at = [], 0
    for leaf in leaves:
        size = int(np.prod(leaf.shape, dtype=np.int64))
        pieces.append(x[at:at + size])
        at += size
    return pieces


def _unflat(vector, leaves, treedef):
    """A flat vector as a tree of `leaves`' shapes and dtypes (a tangent or
    a cotangent built from a row of the identity)."""
    return treedef.unflatten([
        knp.astype(knp.reshape(piece, tuple(leaf.shape)),
                   _core.dtype_of(leaf))
        for piece, leaf in zip(_cut(vector, leaves), leaves)])


def _tree_jacobian(blocks, out_def, in_def):
    """Blocks [out leaf][in leaf] as JAX lays a Jacobian out: the output's
    structure with each leaf replaced by the input's structure."""
    return out_def.unflatten([in_def.unflatten(row) for row in blocks])


def _identity(leaves):
    """The identity over the leaves' elements, in the first leaf's dtype."""
    total = sum(int(np.prod(leaf.shape, dtype=np.int64)) for leaf in leaves)
    return knp.eye(total, dtype=_core.dtype_of(leaves[0]))


def jacfwd(fun, argnums=0):
    """The Jacobian of `fun` by forward mode, as jax.jacfwd: one jvp per
    input element, batched with vmap. For an output leaf of shape S and an
    input leaf of shape T the block has shape S + T, laid out as JAX does
    (the output's structure, each leaf replaced by the input's). argnums:
    an int, or a tuple for a tuple of Jacobians."""
    nums = _argnum_tuple(argnums)

    def jacobian(*args):
        jacobians = []
        for n in nums:
            in_leaves, in_def = flat_tensors(args[n])

            def pushforward(t, n=n, in_leaves=in_leaves, in_def=in_def):
                tangents = tuple(
                    _unflat(t, in_leaves, in_def) if i == n else
                    _tree_map_zeros(a) for i, a in enumerate(args))
                return jvp(fun, args, tangents)[1]

            # One [n_in, *out] batch per output leaf; block (out, in) is its
            # rows of that input leaf, the batch moved last.
            columns, out_def = flat_tensors(
                vmap(pushforward)(_identity(in_leaves)))
            blocks = [[knp.reshape(knp.moveaxis(piece, 0, -1),
                                   tuple(column.shape[1:]) + tuple(leaf.shape))
                       for piece, leaf in zip(_cut(column, in_leaves),
                                              in_leaves)]
                      for column in columns]
            jacobians.append(_tree_jacobian(blocks, out_def, in_def))
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)
    return _jit_outside(jacobian, "jacfwd")


def jacrev(fun, argnums=0):
    """The Jacobian of `fun` by reverse mode, as jax.jacrev: one vjp per
    output element, batched with vmap. Shapes and layout as jacfwd."""
    nums = _argnum_tuple(argnums)

    def jacobian(*args):
        out, pullback = vjp(fun, *args)
        out_leaves, out_def = flat_tensors(out)

        def pullback_row(c):
            grads = pullback(_unflat(c, out_leaves, out_def))
            return tuple(grads[n] for n in nums)

        rows = vmap(pullback_row)(_identity(out_leaves))
        jacobians = []
        for grads in rows:
            # One [n_out, *in] batch per input leaf; block (out, in) is its
            # rows of that output leaf.
            in_leaves, in_def = flat_tensors(grads)
            cuts = [_cut(row, out_leaves) for row in in_leaves]
            blocks = [[knp.reshape(cut[o], tuple(out_leaf.shape) +
                                   tuple(row.shape[1:]))
                       for cut, row in zip(cuts, in_leaves)]
                      for o, out_leaf in enumerate(out_leaves)]
            jacobians.append(_tree_jacobian(blocks, out_def, in_def))
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)
    return _jit_outside(jacobian, "jacrev")


def _tree_map_zeros(tree):
    leaves, treedef = flat_tensors(tree)
    return treedef.unflatten([knp.zeros_like(leaf) for leaf in leaves])


def hessian(fun, argnums=0):
    """The Hessian of a scalar `fun`, as jax.hessian: jacfwd of jacrev
    (forward over reverse)."""
    return jacfwd(jacrev(fun, argnums), argnums)


def _jit_outside(fn, name):
    """fn, compiled with kiln.jit when called outside a trace."""
    call = eager(fn, name=name, inputs=every_argument)
    call.__name__ = name
    return call
