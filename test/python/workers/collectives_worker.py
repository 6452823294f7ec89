"""Run by test_distributed.py under `mpirun -n N`: every rank jits the
kiln.distributed collectives on its own data (drawn from a seed and its
rank, so any rank can recompute every other's), rank 0 gathers all ranks'
results with comm.all_gather and compares them with numpy on all ranks'
data (and each rank's kiln.random.per_rank draw with the draw from the key
folded with that rank); the same exchanges and a per-example gradient
under kiln.vmap, each lane against numpy. Writes {"ranks": N, "failures": [...]} to OUT (rank 0).

Usage: collectives_worker.py OUT
"""

import functools
import json
import sys

import numpy as np

import kiln
import kiln.distributed as kd
import kiln.numpy as knp

ROWS, COLS = 4, 3
LANES = 3


def data_of(rank):
    return np.random.default_rng(100 + rank).standard_normal((ROWS, COLS))


def lanes_of(rank):
    return np.random.default_rng(300 + rank).standard_normal((LANES, ROWS,
                                                              COLS))


def main():
    out = sys.argv[1]
    comm = kd.mpi()
    n, r = comm.size, comm.rank
    pairs = [(q, (q + 1) % n) for q in range(n)]     # a ring
    half = [list(range(0, n, 2)), list(range(1, n, 2))]  # even and odd ranks

    @functools.partial(kiln.jit, comm=comm)
    def collectives(x):
        return (kd.all_reduce(x, comm),
                kd.all_reduce(x, comm, op="max", groups=half),
                kd.all_reduce(x, comm, op="mean"),
                kd.all_gather(x, comm, axis=1),
                kd.reduce_scatter(x, comm, axis=0),
                kd.broadcast(x, comm, root=n - 1),
                kd.all_to_all(x, comm, split_axis=0, concat_axis=1),
                kd.permute(x, comm, pairs),
                kd.rank(comm))

    def loss(x, w):
        return knp.sum(w * kd.all_gather(x, comm, axis=0))

    gradient = kiln.jit(kiln.grad(loss), comm=comm)
    key = kiln.random.PRNGKey(7)
    per_rank_draw = kiln.jit(
        lambda k: kiln.random.uniform(kiln.random.per_rank(k), (5,)),
        comm=comm)

    # The same exchanges under vmap: every lane at once.
    mapped = kiln.jit(kiln.vmap(lambda x: (
        kd.all_gather(x, comm, axis=1), kd.reduce_scatter(x, comm, axis=0),
        kd.all_reduce(x * x, comm))), comm=comm)

    def square_loss(x, w):
        return knp.sum(w * kd.all_gather(x * x, comm, axis=0))

    per_example = kiln.jit(kiln.vmap(kiln.grad(square_loss),
                                     in_axes=(0, None)), comm=comm)

    x = data_of(r)
    w = np.random.default_rng(200 + r).standard_normal((ROWS * n, COLS))
    results = [np.asarray(v) for v in collectives(x)]
    results.append(np.asarray(gradient(x, w)))
    results.append(np.asarray(per_rank_draw(key)))
    results += [np.asarray(v) for v in mapped(lanes_of(r))]
    results.append(np.asarray(per_example(lanes_of(r), w)))
    gathered = [comm.all_gather(v.reshape(1, -1)) for v in results]
    if r != 0:
        return 0

    xs = [data_of(q) for q in range(n)]
    ws = [np.random.default_rng(200 + q).standard_normal((ROWS * n, COLS))
          for q in range(n)]
    total = sum(xs)
    lanes = [lanes_of(q) for q in range(n)]
    block = ROWS // n
    failures = []
    for q in range(n):
        group = half[q % 2]
        expected = [
            total,
            np.max([xs[p] for p in group], axis=0),
            total / n,
            np.concatenate(xs, axis=1),
            total[q * block:(q + 1) * block],
            xs[n - 1],
            np.concatenate([xs[p][q * block:(q + 1) * block] for p in range(n)],
                           axis=1),
            xs[(q - 1) % n],
            np.int64(q),
            sum(ws)[q * ROWS:(q + 1) * ROWS],
            kiln.random.uniform(kiln.random.fold_in(key, q), (5,)),
            np.concatenate(lanes, axis=2),
            sum(lanes)[:, q * block:(q + 1) * block],
            sum(v * v for v in lanes),
            2 * lanes[q] * sum(ws)[q * ROWS:(q + 1) * ROWS],
        ]
        names = ["all_reduce", "all_reduce max in halves", "all_reduce mean",
                 "all_gather", "reduce_scatter", "broadcast", "all_to_all",
                 "permute", "rank", "grad of all_gather",
                 "random.per_rank", "vmap of all_gather",
                 "vmap of reduce_scatter", "vmap of all_reduce",
                 "vmap of grad of all_gather"]
        for name, got, want in zip(names, gathered, expected):
            want = np.asarray(want)
            value = got[q].reshape(want.shape)
            if not np.allclose(value, want, rtol=1e-12, atol=1e-12):
                failures.append(f"rank {q}: {name}: {value.tolist()} != "
                                f"{want.tolist()}")
    with open(out, "w") as f:
        json.dump({"ranks": n, "failures": failures}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
