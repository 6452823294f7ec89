#!/usr/bin/env python3
"""Elastic training: how long a run takes to recover from a worker killed
between steps, and what a commit costs, on the MLP training step of
workloads.py (see bench/README.md).

    /usr/bin/python3 bench/elastic.py --build-dir build --markdown bench/results-elastic.md
    /usr/bin/python3 bench/elastic.py --quick

Recovery: `kiln-launch --nproc 1:N` starts N workers (N = 2, 3, 4) of a
data-parallel training run of the MLP (kiln.distributed.elastic, commit
every 5 steps); at step 8 the worker of rank N-1 writes the time and kills
itself with SIGKILL. Each survivor records when it completes its first step
in the next generation, and how long compiling the step for the new size
took. Recovery time = that completion - the kill: detection (the peers'
connections close), the rendezvous (its settle time, KILN_ELASTIC_SETTLE,
1 s by default), the state's broadcast, the compilation for a size not seen
before (the first run of each size; later runs read the modules from
KILN_CACHE_DIR), and the redone steps since the last commit.

Commit cost: 2 workers train 40 steps; the worker times every step and
every commit (the parameters' copy and the members' agreement on whether
workers wait) and reports the commit's time over 10 steps' time, the cost
of committing every 10 steps.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp_dims(quick):
    return (32, [64, 128, 128, 10]) if quick else (256, [784, 1024, 1024, 10])


def worker(args):
    import kiln
    import kiln.numpy as knp
    from kiln.distributed import elastic

    batch, dims = mlp_dims(args.quick)
    rng = np.random.default_rng(20261122)
    params = []
    for i in range(3):
        params.append((rng.standard_normal((dims[i], dims[i + 1])) /
                       np.sqrt(dims[i])).astype(np.float32))
        params.append(np.zeros(dims[i + 1], np.float32))
    # Rows that split evenly over 1 to 4 workers.
    rows = batch - batch % 12
    xs = rng.standard_normal((8, rows, dims[0])).astype(np.float32)
    labels = rng.integers(0, dims[3], (8, xs.shape[1])).astype(np.int32)

    def loss_fn(p, x, y):
        h = x
        for i in range(3):
            h = h @ p[2 * i] + p[2 * i + 1]
            if i < 2:
                h = knp.maximum(h, 0)
        m = knp.max(h, axis=1, keepdims=True)
        logp = h - m - knp.log(knp.sum(knp.exp(h - m), axis=1, keepdims=True))
        onehot = (knp.arange(dims[3])[None, :] == y[:, None]).astype(
            knp.float32)
        return -knp.sum(onehot * logp) / x.shape[0]

    def train_step(p, x, y):
        loss, g = kiln.value_and_grad(lambda p: loss_fn(p, x, y))(p)
        return loss, [a - 0.1 * b for a, b in zip(p, g)]

    step_fn = elastic.jit(train_step, batch_argnums=(1, 2))
    state = elastic.State(params=params, step=0)
    out = args.out
    timings = {"step": [], "commit": []}

    @elastic.run
    def train(state):
        comm = elastic.comm()
        recovered = False
        while state.step < args.steps:
            if (args.mode == "recovery" and comm.rank == comm.size - 1
                    and elastic.generation() == 0 and state.step == 8):
                with open(os.path.join(out, "kill"), "w") as f:
                    f.write(repr(time.time()))
                os.kill(os.getpid(), signal.SIGKILL)
            k = state.step % xs.shape[0]
            began = time.perf_counter()
            _, state.params = step_fn(state.params, elastic.block(xs[k]),
                                      elastic.block(labels[k]))
            timings["step"].append(time.perf_counter() - began)
            state.step += 1
            if (args.mode == "recovery" and elastic.generation() > 0
                    and not recovered):
                recovered = True
                jitted = step_fn._by_size[comm.size]
                with open(os.path.join(out, f"recovered.{comm.rank}"),
                          "w") as f:
                    json.dump({"time": time.time(),
                               "compile": jitted.last_compile_seconds +
                               jitted.last_trace_seconds}, f)
            if state.step % args.commit_every == 0:
                began = time.perf_counter()
                state.commit()
                timings["commit"].append(time.perf_counter() - began)
        return comm.rank

    rank = train(state)
    if args.mode == "commit" and rank == 0:
        with open(os.path.join(out, "timings.json"), "w") as f:
            json.dump(timings, f)


def launch(build, nproc, out, mode, steps, quick, cache=None):
    cmd = [os.path.join(build, "bin", "kiln-launch"), "--nproc", nproc, "--",
           sys.executable, os.path.abspath(__file__), "--worker", "--mode",
           mode, "--out", out, "--steps", str(steps)]
    if quick:
        cmd.append("--quick")
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"),
               OMP_NUM_THREADS="1")
    env.pop("KILN_CACHE_DIR", None)
    if cache:
        env["KILN_CACHE_DIR"] = cache
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=600)
    if r.returncode != 0:
        sys.exit(f"kiln-launch failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout + r.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--markdown")
    parser.add_argument("--quick", action="store_true",
                        help="the small MLP (batch 32, 64-128-128-10)")
    parser.add_argument("--repeat", type=int, default=4,
                        help="runs per size, the first with an empty cache")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="recovery", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=20,
                        help=argparse.SUPPRESS)
    parser.add_argument("--commit-every", type=int, default=5,
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    build = os.path.abspath(args.build_dir)
    batch, dims = mlp_dims(args.quick)
    lines = [f"# Elastic training: recovery and commit cost",
             "",
             f"MLP training step, batch {batch - batch % 12} split over the workers, "
             f"{'-'.join(map(str, dims))}, f32, one thread per worker; "
             f"`{' '.join(sys.argv)}` on "
             f"{open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}, "
             f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}.",
             "",
             "The first run of each size starts with an empty KILN_CACHE_DIR, "
             "so its survivors compile the step for their new size; the "
             "later runs find the modules there (what a size seen before, "
             "or a worker started again, costs).",
             "",
             "| workers | survivors | first run: recovery (s) | its "
             "compilation (s) | later runs, modules cached: recovery (s) | "
             "median | their module loading (s) |",
             "|---|---|---|---|---|---|---|"]
    for n in (2, 3, 4):
        totals, compiles = [], []
        with tempfile.TemporaryDirectory() as cache:
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as out:
                    launch(build, f"1:{n}", out, "recovery", 14, args.quick,
                           cache)
                    killed = float(open(os.path.join(out, "kill")).read())
                    done = [json.load(open(os.path.join(out, name)))
                            for name in os.listdir(out)
                            if name.startswith("recovered.")]
                    totals.append(max(d["time"] for d in done) - killed)
                    compiles.append(max(d["compile"] for d in done))
        later = totals[1:]
        lines.append(f"| {n} | {n - 1} | {totals[0]:.2f} | {compiles[0]:.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in later)} | "
                     f"{float(np.median(later)):.2f} | "
                     f"{float(np.median(compiles[1:])):.2f} |")
        print(lines[-1], flush=True)
    with tempfile.TemporaryDirectory() as out:
        launch(build, "2:2", out, "commit", 60, args.quick)
        timings = json.load(open(os.path.join(out, "timings.json")))
    steps = np.array(timings["step"][5:])
    commits = np.array(timings["commit"][1:])
    step, commit = float(np.median(steps)), float(np.median(commits))
    lines += ["",
              "| 2 workers | median (ms) |", "|---|---|",
              f"| step | {step * 1e3:.2f} |",
              f"| commit | {commit * 1e3:.2f} |",
              f"| commit / 10 steps | {100 * commit / (10 * step):.2f}% "
              f"(goal <= 2%) |"]
    print("\n".join(lines[-5:]), flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
