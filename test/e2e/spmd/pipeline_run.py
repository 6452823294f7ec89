"""A pipelined step through the tools as a user runs it, against numpy.

    pipeline_run.py KILN_OPT KILN_COMPILE KILN_RUN MPIRUN PROGRAM WORKDIR

PROGRAM is steps/pipeline_two_stages.mlir: the loss of one micro-batch of 2
rows, mean((tanh(x w0) w1 - y)^2), as two stage calls. kiln-opt
--kiln-pipeline derives its 1F1B step over 4 micro-batches, replicated
twice for data parallelism (replicas=2); kiln-compile compiles it, and
`mpirun -n 4 kiln-run --mesh dp=2,pp=2` runs it with the packed weights
split over pp (--shard-input 0=0:pp) and the data over dp. numpy computes
the mean loss over the 8 micro-batches and its gradients by hand: every
rank's loss must match, and rank r's gradients must be stage r % 2's,
packed (within 1e-5 of the largest magnitude). Exits 77 (skip) without
mpirun.
"""

import os
import sys

import numpy as np

from spmd_tools import run, tool_arguments


def reference(w0, w1, x, y, microbatches):
    """The mean over the micro-batches of mean((tanh(x w0) w1 - y)^2) and
    its gradients with respect to w0 and w1, in float64."""
    loss, g0, g1 = 0.0, np.zeros(w0.shape), np.zeros(w1.shape)
    rows = x.shape[0] // microbatches
    for m in range(microbatches):
        xm = x[m * rows:(m + 1) * rows].astype(np.float64)
        ym = y[m * rows:(m + 1) * rows].astype(np.float64)
        h = np.tanh(xm @ w0)
        d = h @ w1 - ym
        loss += (d * d).mean() / microbatches
        dz = 2 * d / d.size / microbatches
        g1 += h.T @ dz
        g0 += xm.T @ ((dz @ w1.T) * (1 - h * h))
    return loss, g0, g1


def main():
    opt, compile_tool, run_tool, mpirun, program, work = tool_arguments()
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((6, 8)).astype(np.float32)
    w1 = rng.standard_normal((8, 3)).astype(np.float32)
    x = rng.standard_normal((16, 6)).astype(np.float32)   # 2 replicas x 4 x 2 rows
    y = rng.standard_normal((16, 3)).astype(np.float32)
    packed = np.zeros((2, 48), np.float32)                # one row per stage
    packed[0, :48] = w0.ravel()
    packed[1, :24] = w1.ravel()
    paths = {}
    for name, array in (("packed", packed), ("x", x), ("y", y)):
        paths[name] = os.path.join(work, name + ".npy")
        np.save(paths[name], array)

    step = os.path.join(work, "step.mlir")
    run([opt, program, "--kiln-pipeline=function=loss microbatches=4 "
         "batch-args=2,3 schedule=1f1b replicas=2", "-o", step])
    module = os.path.join(work, "step.kmod")
    run([compile_tool, step, "-o", module])
    out = os.path.join(work, "out")
    run([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "4", run_tool,
         module, "--function", "loss_pipeline", "--mesh", "dp=2,pp=2",
         "--input", paths["packed"], "--input", paths["x"], "--input",
         paths["y"], "--shard-input", "0=0:pp", "--shard-input", "1=0:dp",
         "--shard-input", "2=0:dp", "--all-ranks-write", "--output-dir", out])

    loss, g0, g1 = reference(w0, w1, x, y, 8)
    rows = [g0.ravel(), np.concatenate([g1.ravel(), np.zeros(24)])]
    scale = max(1.0, max(np.abs(r).max() for r in rows))
    worst = 0.0
    for rank in range(4):
        got_loss = float(np.load(os.path.join(out, "out0.rank%d.npy" % rank)))
        got = np.load(os.path.join(out, "out1.rank%d.npy" % rank))
        if abs(got_loss - loss) > 1e-5 * max(1.0, abs(loss)):
            sys.exit("rank %d: loss %r, numpy %r" % (rank, got_loss, loss))
        worst = max(worst, float(np.abs(got[0] - rows[rank % 2]).max()) / scale)
    if worst > 1e-5:
        sys.exit("the ranks' gradients differ from numpy's by %g" % worst)
    print("4 ranks (dp x pp = 2 x 2) match numpy: loss %.6f, largest gradient "
          "difference %.3g" % (loss, worst))


if __name__ == "__main__":
    main()
