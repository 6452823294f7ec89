#!/usr/bin/env python3
"""The price of Gloo against MPI on the same all-reduces: one compiled
module that only all-reduces (sum) an f32 vector, run by kiln-run on R
ranks over the MPI plug-in (mpirun) and over the Gloo plug-in (ranks
meeting through a file store), alternating, for several sizes.

    /usr/bin/python3 bench/comm_allreduce.py --build-dir build --markdown bench/results-comm.md
    /usr/bin/python3 bench/comm_allreduce.py --quick

Each measurement is rank 0's median time per call of `kiln-run --repeat N`
(the runtime's agreement between the ranks included, as every collective
of a training step pays it). MPI ranks are bound to a core each where
there are enough (mpirun --bind-to core; they poll). Gloo ranks are not
pinned: Gloo's TCP transport reads in a thread of its own, which spins on
a readable socket until the receive is posted, and pinned to the rank's
one core it makes every message wait a scheduler slice (12 ms here);
--pin-gloo measures that. The report gives, per size, the median over the rounds and the
ratio Gloo / MPI measured in the same rounds.
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ddp  # noqa: E402  (all_reduce_source)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    p.add_argument("--markdown", default=None, help="markdown report to write")
    p.add_argument("--quick", action="store_true", help="2 rounds, 2 sizes")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=None, help="default 5 (quick 2)")
    p.add_argument("--pin-gloo", action="store_true",
                   help="pin each Gloo rank to one core, as the MPI ranks are")
    return p.parse_args()


def timing(stdout):
    m = re.search(r"time per call: median ([0-9.]+) us", stdout)
    if not m:
        raise RuntimeError(f"kiln-run printed no timing:\n{stdout[-2000:]}")
    return float(m.group(1)) * 1e-6


def cores_for(ranks):
    cores = sorted(os.sched_getaffinity(0))
    return [cores[r % len(cores)] for r in range(ranks)]


def run_mpi(bin_dir, module, data, ranks, repeat):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        raise RuntimeError("mpirun not found (apt-get install openmpi-bin)")
    bind = "core" if ranks <= len(os.sched_getaffinity(0)) else "none"
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
           "--bind-to", bind, os.path.join(bin_dir, "kiln-run"), module,
           "--comm", "mpi", "--input", data, "--repeat", str(repeat)]
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=600)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return timing(r.stdout)


def run_gloo(bin_dir, module, data, ranks, repeat, work, serial, pin):
    store = os.path.join(work, f"store{serial}")
    procs = []
    for rank, core in enumerate(cores_for(ranks)):
        env = dict(os.environ, OMP_NUM_THREADS="1", KILN_RANK=str(rank),
                   KILN_WORLD_SIZE=str(ranks), KILN_STORE="file:" + store,
                   KILN_RUN_ID=f"bench{serial}", KILN_GLOO_HOSTNAME="127.0.0.1")
        cmd = (["taskset", "-c", str(core)] if pin else []) + [
            os.path.join(bin_dir, "kiln-run"), module, "--comm", "gloo", "--input", data,
            "--repeat", str(repeat)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env))
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        if p.returncode:
            raise RuntimeError(f"kiln-run --comm gloo failed:\n{out[-2000:]}{err[-2000:]}")
    return timing(outs[0][0])


def main():
    args = parse_args()
    rounds = args.rounds or (2 if args.quick else 5)
    sizes = [1 << 10, 1 << 20] if args.quick else [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22]
    bin_dir = os.path.join(args.build_dir, "bin")
    work = tempfile.mkdtemp(prefix="kiln-comm-bench-")
    samples = {n: {"mpi": [], "gloo": []} for n in sizes}
    serial = 0
    try:
        modules = {}
        for n in sizes:
            src = ddp.all_reduce_source(os.path.join(work, f"ar{n}.mlir"), n, args.ranks)
            module = src.replace(".mlir", ".kmod")
            subprocess.run([os.path.join(bin_dir, "kiln-compile"), src, "-o", module],
                           check=True)
            data = os.path.join(work, f"x{n}.npy")
            np.save(data, np.ones(n, np.float32))
            modules[n] = (module, data)
        for r in range(rounds):
            for n in sizes:
                module, data = modules[n]
                # Fewer calls for the large sizes; at least ~0.2 s of work.
                repeat = max(20, min(2000, (1 << 24) // n))
                order = ["mpi", "gloo"] if r % 2 == 0 else ["gloo", "mpi"]
                for engine in order:
                    serial += 1
                    t = (run_mpi(bin_dir, module, data, args.ranks, repeat) if engine == "mpi"
                         else run_gloo(bin_dir, module, data, args.ranks, repeat, work, serial,
                                       args.pin_gloo))
                    samples[n][engine].append(t)
            print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [f"# All-reduce over Gloo and MPI ({args.ranks} ranks, f32 sum)", "",
             f"{datetime.date.today()}, `{' '.join(sys.argv)}`, {rounds} rounds, "
             f"CPU: {platform.processor() or platform.machine()}, "
             f"{len(os.sched_getaffinity(0))} cores, load {os.getloadavg()[0]:.2f}; "
             f"Gloo ranks {'pinned to a core each' if args.pin_gloo else 'not pinned'}", "",
             "| elements | MiB | MPI median | Gloo median | Gloo / MPI |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for n in sizes:
        mpi = float(np.median(samples[n]["mpi"]))
        gloo = float(np.median(samples[n]["gloo"]))
        ratios = [g / m for g, m in zip(samples[n]["gloo"], samples[n]["mpi"])]
        lines.append(f"| {n} | {n * 4 / 2**20:.3f} | {mpi * 1e6:.1f} us | {gloo * 1e6:.1f} us "
                     f"| {np.median(ratios):.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
