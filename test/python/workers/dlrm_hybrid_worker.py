"""Run by test_dlrm_hybrid.py under `mpirun -n N`: trains the DLRM example
(examples/python/dlrm/dlrm.py) for STEPS steps with OPTIMIZER (sgd or
adagrad) in DTYPE (float32 or float64) split as dlrm.make_step splits it
over the N ranks (tables by rows, batch by examples), each rank passing its
blocks; rank 0 then trains the same steps in one process on whole arrays
and writes both runs' losses, the largest difference between the joined
parameters and the single run's relative to each tensor's largest
magnitude, and each rank's table shape, to OUT.

Usage: dlrm_hybrid_worker.py OUT STEPS OPTIMIZER DTYPE
"""

import json
import os
import sys

import numpy as np

import kiln
import kiln.distributed as kd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "examples", "python", "dlrm"))
import dlrm  # noqa: E402

TABLE, BATCH = 64, 16


def main():
    out, steps, name, dtype = (sys.argv[1], int(sys.argv[2]), sys.argv[3],
                               np.dtype(sys.argv[4]))
    comm = kd.mpi()
    params = kiln.tree_map(lambda a: a.astype(dtype), dlrm.init_params(
        5, TABLE, dim=8, bottom=(16,), top=(16,)))
    optimizer = (kiln.optim.sgd(lr=0.1) if name == "sgd"
                 else kiln.optim.adagrad(lr=0.03))
    state = optimizer.init(params)
    rng = np.random.default_rng(9)
    dense = rng.standard_normal((steps, BATCH, dlrm.DENSE)).astype(dtype)
    ids = rng.integers(0, TABLE, (steps, BATCH, dlrm.SPARSE))
    labels = rng.integers(0, 2, (steps, BATCH)).astype(dtype)

    step = dlrm.make_step(optimizer, comm, params)
    p, s = dlrm.split_params(params, state, comm)
    shape = list(p["tables"][0].shape)
    losses = []
    for k in range(steps):
        value, p, s = step(p, s, *(kd.block(a[k], comm)
                                   for a in (dense, ids, labels)))
        losses.append(float(value))
    joined = dlrm.join_params(p, comm)
    if comm.rank != 0:
        return 0

    # Not donated: `params` stays the starting point for `moved` below.
    single = dlrm.make_step(optimizer, donate=False)
    q, single_losses = params, []
    for k in range(steps):
        value, q, state = single(q, state, dense[k], ids[k], labels[k])
        single_losses.append(float(value))
    got, _ = kiln.tree_flatten(joined)
    want, _ = kiln.tree_flatten(q)
    start, _ = kiln.tree_flatten(params)
    worst = max(float(np.abs(a - b).max() / np.abs(b).max())
                for a, b in zip(got, want))
    moved = min(float(np.abs(b - a).max()) for a, b in zip(start, want))
    with open(out, "w") as f:
        json.dump({"ranks": comm.size, "shape": shape, "losses": losses,
                   "single_losses": single_losses, "worst": worst,
                   "moved": moved}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
