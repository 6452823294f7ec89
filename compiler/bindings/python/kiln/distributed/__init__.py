"""kiln.distributed: the ranks of a run, for data-parallel training.

    # mpirun -n 2 python3 train.py
    comm = kiln.distributed.mpi()
    step = kiln.jit(train_step, comm=comm, batch_argnums=(1, 2))
    x_block = kiln.distributed.block(x, comm)      # this rank's rows
    loss, params = step(params, x_block, kiln.distributed.block(y, comm))

A communicator is the runtime's kiln_comm_t: `mpi()` over the processes of
an MPI run (OpenMPI, loaded by the runtime through its plug-in only when
asked for), `gloo()` over processes that meet through a store (Gloo's TCP
transport; KILN_RANK, KILN_WORLD_SIZE and KILN_STORE say which),
`single()` for a run of this process alone. `comm.rank`,
`comm.size`, `comm.barrier()` and `comm.all_gather(block)` (the blocks of
every rank joined along the leading dimension) work outside compiled code.

Inside a function jitted with `comm=`, the collectives exchange traced
values between the ranks, for SPMD programs written by hand (as
jax.lax.psum and friends inside shard_map):

    @functools.partial(kiln.jit, comm=comm)
    def f(x):
        return kiln.distributed.all_reduce(x, comm)      # sum over the ranks

`all_reduce`, `all_gather`, `reduce_scatter`, `broadcast`, `all_to_all`,
`permute` and `rank` act within replica groups (`groups=[[0, 1], [2, 3]]`;
by default one group of all ranks) and are differentiable. See
docs/python.md, "Data parallelism".

kiln.distributed.elastic runs training whose workers may die or arrive
(kiln-launch --nproc MIN:MAX).
"""

import numpy as np

from .. import _kiln, _tree
from .._core import fail

__all__ = ["Communicator", "CommunicationError", "mpi", "gloo", "single",
           "block", "Sharded", "shard",
           "unshard", "all_reduce",
           "all_gather", "reduce_scatter", "broadcast", "all_to_all",
           "permute", "rank"]

Communicator = _kiln.Communicator
# A collective failed: a rank died, hangs, or disagrees on it (what an
# elastic run recovers from; kiln.distributed.elastic).
CommunicationError = _kiln.CommunicationError


def mpi():
    """A communicator over the ranks of the MPI run this process is part of
    (`mpirun -n N python3 ...`); in a process not started by mpirun, a run
    of one rank."""
    return _kiln.Communicator.mpi()


def gloo():
    """A communicator over the ranks of a run that meet through a store,
    over Gloo: the environment names this process's rank (KILN_RANK), the
    run's size (KILN_WORLD_SIZE) and the store (KILN_STORE: file:DIRECTORY
    or redis://HOST[:PORT]); with none of them set, a run of one rank.
    Releasing it closes its connections, and a process may make another."""
    return _kiln.Communicator.gloo()


def single():
    """A communicator of this process alone (every collective is a copy)."""
    return _kiln.Communicator.single()


def block(array, comm):
    """This rank's block of `array`'s rows: rows [r B / N, (r + 1) B / N)
    of its B rows for rank r of N."""
    array = np.asarray(array)
    if array.ndim == 0:
        fail("kiln.distributed.block: a scalar has no rows to split",
             TypeError)
    rows, ranks = array.shape[0], comm.size
    if rows % ranks:
        fail(f"kiln.distributed.block: {rows} rows do not split evenly "
             f"over {ranks} ranks", ValueError)
    size = rows // ranks
    return array[comm.rank * size:(comm.rank + 1) * size]


class Sharded:
    """This rank's block of a tensor held sharded over the ranks (ZeRO):
    `block` is elements [r c, (r + 1) c) of the flattened tensor padded
    with zeros to N c elements, c = ceil(numel / N); `shape` is the whole
    tensor's. kiln.jit(..., zero=S) takes and returns these."""

    __slots__ = ("block", "shape")

    def __init__(self, block, shape):
        self.block = block
        self.shape = tuple(int(d) for d in shape)

    @property
    def dtype(self):
        return self.block.dtype

    def __repr__(self):
        return (f"Sharded(block of {self.block.shape[0]} {self.dtype} of "
                f"shape {self.shape})")


def shard(tree, comm):
    """`tree` with every array of rank >= 1 replaced by this rank's
    Sharded block of it (rank-0 values, such as an optimizer's step count,
    stay whole)."""

    def cut(leaf):
        array = np.asarray(leaf)
        if array.ndim == 0:
            return leaf
        flat = np.ascontiguousarray(array).reshape(-1)
        c = -(-flat.size // comm.size)
        padded = np.zeros(c * comm.size, flat.dtype)
        padded[:flat.size] = flat
        return Sharded(padded[comm.rank * c:(comm.rank + 1) * c].copy(),
                       array.shape)

    return _tree.tree_map(cut, tree)


def unshard(tree, comm):
    """`tree` with every Sharded block replaced by the whole tensor,
    gathered from all ranks (every rank must call it)."""

    def join(leaf):
        if not isinstance(leaf, Sharded):
            return leaf
        whole = comm.all_gather(np.ascontiguousarray(leaf.block))
        return whole[:int(np.prod(leaf.shape))].reshape(leaf.shape)

    return _tree.tree_map(join, tree)


class P:
    """How an array is split over a device mesh (JAX's PartitionSpec): per
    dimension the name of the mesh axis it is split over, or None.
    P(None, "tp") splits a matrix's columns over the axis "tp". kiln.jit's
    in_shardings and out_shardings take these."""

    __slots__ = ("axes",)

    def __init__(self, *axes):
        for axis in axes:
            if axis is not None and not (isinstance(axis, str) and axis):
                raise TypeError(f"kiln.distributed.P takes mesh axis names "
                                f"or None, not {axis!r}")
        named = [a for a in axes if a is not None]
        if len(named) != len(set(named)):
            raise ValueError(f"kiln.distributed.P{axes}: an axis splits one "
                             "dimension")
        self.axes = tuple(axes)

    def __eq__(self, other):
        return isinstance(other, P) and self.axes == other.axes

    def __hash__(self):
        return hash(self.axes)

    def __repr__(self):
        return "P(" + ", ".join(repr(a) for a in self.axes) + ")"


def _mesh_position(mesh, axis, rank):
    """(index, count) of `rank`'s block along mesh axis `axis`: the mesh
    (a dict of axis sizes, in order) is laid out row-major."""
    names = list(mesh)
    if axis not in mesh:
        raise ValueError(f"the mesh {mesh} has no axis {axis!r}")
    stride = 1
    for later in names[names.index(axis) + 1:]:
        stride *= mesh[later]
    return (rank // stride) % mesh[axis], mesh[axis]


def mesh_block(tree, spec, mesh, rank):
    """Rank `rank`'s blocks of the arrays of `tree` split as `spec` says
    over `mesh` (a dict of axis sizes in row-major order, as kiln.jit's
    mesh=): what that rank passes to, or gets from, a function jitted with
    that mesh. `spec` is what kiln.jit's in_shardings takes for one
    argument: a P, None (whole), or a container of those shaped like
    `tree` (a dict may leave keys out: whole)."""
    if isinstance(tree, dict):
        return {k: mesh_block(v, spec.get(k) if isinstance(spec, dict)
                              else spec, mesh, rank)
                for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        specs = (spec if isinstance(spec, (list, tuple))
                 else [spec] * len(tree))
        if len(specs) != len(tree):
            raise ValueError(f"{spec!r} does not match a container of "
                             f"{len(tree)} entries")
        return type(tree)(mesh_block(v, s, mesh, rank)
                          for v, s in zip(tree, specs))
    array = np.asarray(tree)
    if spec is None:
        return array
    if len(spec.axes) != array.ndim:
        raise ValueError(f"{spec!r} has {len(spec.axes)} entries but the "
                         f"array has rank {array.ndim}")
    index = []
    for dim, axis in enumerate(spec.axes):
        if axis is None:
            index.append(slice(None))
            continue
        position, count = _mesh_position(mesh, axis, rank)
        size = array.shape[dim]
        if size % count:
            raise ValueError(f"dimension {dim} of size {size} does not split "
                             f"into {count} blocks over {axis!r}")
        step = size // count
        index.append(slice(position * step, (position + 1) * step))
    return array[tuple(index)]


def _groups(comm, groups):
    """The replica groups as rows of ranks; by default one row of all of
    comm's ranks."""
    if not isinstance(comm, _kiln.Communicator):
        fail(f"kiln.distributed: expected a communicator "
             f"(kiln.distributed.mpi()), not {type(comm).__name__}", TypeError)
    if groups is None:
        return [list(range(comm.size))]
    rows = [[int(r) for r in row] for row in groups]
    size = sum(len(row) for row in rows)
    if size != comm.size:
        fail(f"kiln.distributed: the replica groups {rows} hold {size} ranks, "
             f"the communicator {comm.size}", ValueError)
    return rows


def all_reduce(x, comm, op="sum", groups=None):
    """The elementwise `op` ("sum", "max", "min", "mean") of x over the
    ranks of each group, on every rank of it."""
    return _kiln.all_reduce(x, op, _groups(comm, groups))


def all_gather(x, comm, axis=0, groups=None):
    """The group's x joined along `axis` in group order."""
    return _kiln.all_gather(x, axis, _groups(comm, groups))


def reduce_scatter(x, comm, op="sum", axis=0, groups=None):
    """The reduction over the group split along `axis` into one block per
    member; the member with group index i keeps block i."""
    return _kiln.reduce_scatter(x, op, axis, _groups(comm, groups))


def broadcast(x, comm, root=0, groups=None):
    """x of the group member with group index `root`, on every member."""
    return _kiln.broadcast_from(x, root, _groups(comm, groups))


def all_to_all(x, comm, split_axis, concat_axis, groups=None):
    """Block j of x (split along split_axis) goes to group member j; the
    blocks received are joined along concat_axis in group order."""
    return _kiln.all_to_all(x, split_axis, concat_axis, _groups(comm, groups))


def permute(x, comm, pairs):
    """Each (source, target) pair of ranks sends the source's x to the
    target; a rank that is no target receives zeros."""
    _groups(comm, None)
    return _kiln.collective_permute(x, [(int(s), int(t)) for s, t in pairs],
                                    comm.size)


def rank(comm):
    """This process's rank, an int64 0-d value of the traced program."""
    _groups(comm, None)
    return _kiln.rank_index()
