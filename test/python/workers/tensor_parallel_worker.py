"""Run by test_tensor_parallel.py under `mpirun -n N`: trains a Megatron
MLP block with Adam for STEPS steps over the mesh MESH (tp=N, or dp=2,tp=2
on 4 ranks): kiln.jit with mesh=, in_shardings and out_shardings, each rank
passing its blocks (kiln.distributed.mesh_block) of the weights (w1 by
columns, b1 by features, w2 by rows over tp; with dp, the batch by rows).
Rank 0 then trains the same step in one process on whole arrays and writes
the largest difference between each rank's blocks and its blocks of the
single-process run, relative to each tensor's largest magnitude, and the
losses, to OUT.

Usage: tensor_parallel_worker.py OUT STEPS MESH   (MESH: tp or dp_tp)
"""

import json
import sys

import numpy as np

import kiln
import kiln.distributed as kd
import kiln.numpy as knp
from kiln.distributed import P


def loss_fn(params, x, onehot):
    h0 = knp.maximum(x @ params["w0"], 0.0)
    h1 = knp.maximum(h0 @ params["w1"] + params["b1"], 0.0)
    h2 = h1 @ params["w2"] + params["b2"] + h0
    z = h2 @ params["wout"]
    logp = kiln.nn.log_softmax(z)
    return -knp.mean(knp.sum(onehot * logp, axis=1))


def main():
    out, steps, layout = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    comm = kd.mpi()
    mesh = ({"tp": comm.size} if layout == "tp"
            else {"dp": 2, "tp": comm.size // 2})
    rng = np.random.default_rng(11)
    width, hidden, classes, batch = 12, 16, 5, 8
    params = {
        "w0": rng.uniform(-0.4, 0.4, (width, width)).astype(np.float32),
        "w1": rng.uniform(-0.4, 0.4, (width, hidden)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": rng.uniform(-0.4, 0.4, (hidden, width)).astype(np.float32),
        "b2": np.zeros(width, np.float32),
        "wout": rng.uniform(-0.4, 0.4, (width, classes)).astype(np.float32),
    }
    split = {"w1": P(None, "tp"), "b1": P("tp"), "w2": P("tp", None)}
    param_specs = {k: split.get(k) for k in params}
    xs = rng.standard_normal((steps, batch, width)).astype(np.float32)
    onehots = np.eye(classes, dtype=np.float32)[
        rng.integers(0, classes, (steps, batch))]
    opt = kiln.optim.adam(0.01)

    def step(params, state, x, onehot):
        loss, grads = kiln.value_and_grad(loss_fn)(params, x, onehot)
        params, state = opt.update(params, grads, state)
        return loss, params, state

    state0 = opt.init(params)
    # The optimizer state is split like its parameters (the step count,
    # left out, stays whole).
    state_specs = {"exp_avg": param_specs, "exp_avg_sq": param_specs}
    batch_spec = P("dp", None) if "dp" in mesh else None
    parallel = kiln.jit(
        step, comm=comm, mesh=mesh,
        in_shardings=(param_specs, state_specs, batch_spec, batch_spec),
        out_shardings=(None, param_specs, state_specs),
        bucket_axis="dp" if "dp" in mesh else None)

    def local(tree, specs):
        return kd.mesh_block(tree, specs, mesh, comm.rank)

    p, state, losses = local(params, param_specs), local(state0, state_specs), []
    for k in range(steps):
        loss, p, state = parallel(p, state,
                                  kd.mesh_block(xs[k], batch_spec, mesh, comm.rank),
                                  kd.mesh_block(onehots[k], batch_spec, mesh,
                                                comm.rank))
        losses.append(float(loss))
    shapes = {k: list(v.shape) for k, v in p.items()}

    single = kiln.jit(step)
    q, state1, single_losses = params, state0, []
    for k in range(steps):
        loss, q, state1 = single(q, state1, xs[k], onehots[k])
        single_losses.append(float(loss))
    want = local(q, param_specs)
    worst = max(float(np.abs(p[n] - want[n]).max() / np.abs(q[n]).max())
                for n in q)
    moved = min(float(np.abs(q[n] - params[n]).max()) for n in q)
    worsts = comm.all_gather(np.array([worst]))
    if comm.rank != 0:
        return 0
    with open(out, "w") as f:
        json.dump({"ranks": comm.size, "worst": float(worsts.max()),
                   "moved": moved, "shapes": shapes, "losses": losses,
                   "single_losses": single_losses}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
