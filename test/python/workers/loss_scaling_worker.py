"""Run by test_distributed.py under `mpirun -n N`: f16 autocast training
with dynamic loss scaling (kiln.optim.LossScaler) data parallel, each rank
feeding its block of every batch, starting from a scale so large that the
f16 products overflow; then the same steps in one process on the whole
batch (rank 0 only). Writes to OUT (rank 0): each run's skipped steps,
scales and losses, whether every rank holds the same parameters and
scaler state, and the largest difference between the two runs'
parameters relative to their largest magnitude. At step SPIKE the last
rank's block of the batch is 300 times larger, so that only that rank's
gradient overflows.

Usage: loss_scaling_worker.py OUT STEPS
"""

import json
import sys

import numpy as np

import kiln
import kiln.numpy as knp

SPIKE = 100


def main():
    out, steps = sys.argv[1], int(sys.argv[2])
    comm = kiln.distributed.mpi()
    rng = np.random.default_rng(11)
    w_true = rng.standard_normal((16, 4)).astype(np.float32)
    batch = 16 * comm.size
    xs = rng.standard_normal((steps, batch, 16)).astype(np.float32)
    # At step SPIKE the last rank's block is 300 times larger: only that
    # rank's f16 gradient overflows, and every rank must skip the step.
    xs[SPIKE, -16:] *= 300
    ys = xs @ w_true
    opt = kiln.optim.sgd(0.1)
    scaler = kiln.optim.LossScaler(init_scale=2.0 ** 40, growth_interval=5)

    def train_step(w, state, sstate, x, y):
        scaled, grad = kiln.value_and_grad(
            lambda w: scaler.scale(knp.mean((x @ w - y) ** 2), sstate))(w)
        loss = scaled / sstate["scale"]
        w, state, sstate, skipped = scaler.update(opt, w, grad, state, sstate)
        return loss, w, state, sstate, skipped

    def run(step, blocks):
        w = np.zeros((16, 4), np.float32)
        state, sstate = opt.init(w), scaler.init()
        record = {"skipped": [], "scales": [], "losses": []}
        for k in range(steps):
            x, y = blocks(xs[k]), blocks(ys[k])
            loss, w, state, sstate, skipped = step(w, state, sstate, x, y)
            record["skipped"].append(bool(skipped))
            record["scales"].append(float(sstate["scale"]))
            record["losses"].append(float(loss))
        return w, sstate, record

    parallel = kiln.jit(train_step, comm=comm, batch_argnums=(3, 4),
                        autocast="f16")
    w, sstate, ranks = run(parallel,
                           lambda a: kiln.distributed.block(a, comm))
    # Every rank decided alike: the same parameters and scaler state.
    mine = np.concatenate([w.ravel(), [sstate["scale"],
                                       float(sstate["growth_tracker"])]])
    gathered = comm.all_gather(mine.astype(np.float64)[None])
    same = bool(np.all(gathered == gathered[0]))
    if comm.rank != 0:
        return 0
    single = kiln.jit(train_step, autocast="f16")
    w1, _, one = run(single, lambda a: a)
    worst = float(np.abs(w - w1).max() / np.abs(w1).max())
    final = float(np.mean((xs[-1] @ w - ys[-1]) ** 2) / np.mean(ys[-1] ** 2))
    ranks["spike"] = SPIKE
    with open(out, "w") as f:
        json.dump({"ranks": comm.size, "same_on_every_rank": same,
                   "worst": worst, "final_relative_loss": final,
                   "parallel": ranks, "single": one}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
