"""kiln.distributed: the ranks of a run, for data-parallel training.

    # mpirun -n 2 python3 train.py
    comm = kiln.distributed.mpi()
    step = kiln.jit(train_step, comm=comm, batch_argnums=(1, 2))
    x_block = kiln.distributed.block(x, comm)      # this rank's rows
    loss, params = step(params, x_block, kiln.distributed.block(y, comm))

A communicator is the runtime's kiln_comm_t: `mpi()` over the processes of
an MPI run (OpenMPI, loaded by the runtime through its plug-in only when
asked for), `single()` for a run of this process alone. `comm.rank`,
`comm.size`, `comm.barrier()` and `comm.all_gather(block)` (the blocks of
every rank joined along the leading dimension) work outside compiled code.
See docs/python.md, "Data parallelism".
"""

from . import _kiln
from ._core import fail

__all__ = ["Communicator", "mpi", "single", "block"]

Communicator = _kiln.Communicator


def mpi():
    """A communicator over the ranks of the MPI run this process is part of
    (`mpirun -n N python3 ...`); in a process not started by mpirun, a run
    of one rank."""
    return _kiln.Communicator.mpi()


def single():
    """A communicator of this process alone (every collective is a copy)."""
    return _kiln.Communicator.single()


def block(array, comm):
    """This rank's block of `array`'s rows: rows [r B / N, (r + 1) B / N)
    of its B rows for rank r of N."""
    import numpy as np
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
