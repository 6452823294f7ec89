"""Run by test_distributed.py under `mpirun -n N`: trains an MLP with Adam
for STEPS steps data parallel (kiln.jit with comm and batch_argnums, each
rank feeding its block of every batch), and once more in one process on the
whole batch (rank 0 only, no communicator), then writes the largest
difference between the two runs' parameters, relative to each tensor's
largest magnitude, and the losses, to OUT (rank 0); also the sum of a
dropout of the batch data parallel, in one process, and as each rank's
block would draw it alone.

With ZERO (1, 2, 3) the optimizer state (and at 3 the parameters) is held
as kiln.distributed.Sharded blocks, as kiln.jit(..., zero=ZERO) takes them.

With KILN_TEST_COMM=gloo the ranks meet through a store over Gloo
(test/unit/runtime/gloo_test.sh starts them) instead of mpirun.

Usage: data_parallel_worker.py OUT STEPS [ZERO]
"""

import json
import os
import sys

import numpy as np

import kiln
import kiln.numpy as knp


def loss_fn(params, x, onehot):
    h = knp.maximum(x @ params["w1"] + params["b1"], 0.0)
    z = h @ params["w2"] + params["b2"]
    z = z - knp.max(z, axis=1, keepdims=True)
    logp = z - knp.log(knp.sum(knp.exp(z), axis=1, keepdims=True))
    return -knp.mean(knp.sum(onehot * logp, axis=1))


def main():
    out, steps = sys.argv[1], int(sys.argv[2])
    zero = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    comm = (kiln.distributed.gloo()
            if os.environ.get("KILN_TEST_COMM") == "gloo"
            else kiln.distributed.mpi())
    rng = np.random.default_rng(7)
    sizes = (12, 16, 5)
    params = {
        "w1": rng.uniform(-0.3, 0.3, sizes[:2]).astype(np.float32),
        "b1": np.zeros(sizes[1], np.float32),
        "w2": rng.uniform(-0.3, 0.3, sizes[1:]).astype(np.float32),
        "b2": np.zeros(sizes[2], np.float32),
    }
    batch = 8 * comm.size
    xs = rng.standard_normal((steps, batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[2], (steps, batch))
    onehots = np.eye(sizes[2], dtype=np.float32)[labels]
    opt = kiln.optim.adam(0.01)

    def step(params, state, x, onehot):
        loss, grads = kiln.value_and_grad(loss_fn)(params, x, onehot)
        params, state = opt.update(params, grads, state)
        return loss, params, state

    parallel = kiln.jit(step, comm=comm, batch_argnums=(2, 3), zero=zero,
                        shard_outnums=(1, 2) if zero == 3 else (2,))
    p, state, losses = params, opt.init(params), []
    if zero:
        state = kiln.distributed.shard(state, comm)
    if zero == 3:
        p = kiln.distributed.shard(p, comm)
    for k in range(steps):
        loss, p, state = parallel(p, state, kiln.distributed.block(xs[k], comm),
                                  kiln.distributed.block(onehots[k], comm))
        losses.append(float(loss))
    blocks_out = all(isinstance(v, kiln.distributed.Sharded)
                     for v in state["exp_avg"].values()) if zero else True
    p = kiln.distributed.unshard(p, comm)
    # Dropout on the batch: each rank's mask is its rows of the mask the
    # whole batch draws (the counters are the global element indices), so
    # the ranks differ and together equal one process.
    key = kiln.random.PRNGKey(3)

    def masked_sum(key, x):
        return knp.sum(kiln.nn.dropout(key, 0.5, x))

    dropped = float(kiln.jit(masked_sum, comm=comm, batch_argnums=(1,))(
        key, kiln.distributed.block(xs[0], comm)))
    # Every rank holds the same parameters: gather rank 1's to check.
    gathered = comm.all_gather(p["w1"])
    same = all(np.array_equal(gathered[r * sizes[0]:(r + 1) * sizes[0]], p["w1"])
               for r in range(comm.size))
    if comm.rank != 0:
        return 0
    single = kiln.jit(step)
    q, state1, single_losses = params, opt.init(params), []
    for k in range(steps):
        loss, q, state1 = single(q, state1, xs[k], onehots[k])
        single_losses.append(float(loss))
    worst = max(float(np.abs(p[n] - q[n]).max() / np.abs(q[n]).max()) for n in q)
    dropped_single = float(kiln.jit(masked_sum)(key, xs[0]))
    # Had every rank drawn the mask of its own block alone, the sum would
    # be this instead.
    same_mask = float(sum(kiln.jit(masked_sum)(key, block) for block in
                          np.split(xs[0], comm.size)))
    moved = min(float(np.abs(q[n] - params[n]).max()) for n in q)
    with open(out, "w") as f:
        json.dump({"ranks": comm.size, "worst": worst, "moved": moved,
                   "same_on_every_rank": same, "blocks_out": blocks_out,
                   "dropout": [dropped, dropped_single, same_mask],
                   "losses": losses,
                   "single_losses": single_losses}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
