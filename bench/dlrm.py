#!/usr/bin/env python3
"""DLRM training throughput: kiln against PyTorch, and the pipeline's stall.

The model is examples/python/dlrm/dlrm.py's (bottom MLP 13-64-32-16, 26
tables of 16 rows by `--table-size`, the dot interaction, top MLP
367-64-1, binary cross-entropy), trained with SGD on synthetic Criteo
logs (criteo_synthetic.py). test/python/test_dlrm.py holds the two
implementations to the same losses; here they are timed:

  step      samples per second of the training step alone, on batches
            already in memory: kiln's compiled step against the same model
            in PyTorch (nn.Embedding(sparse=True) tables, eager) from the
            same parameters;
  pipeline  kiln's whole loop from the TSV file (kiln_runtime.data.read_criteo,
            the features made in numpy, the step): samples per second and
            the share of the time spent waiting for the next batch (stall).

Each system and configuration runs in a subprocess of its own pinned to 1
or 2 CPUs (kiln's OpenMP and PyTorch's intra-op threads set to match; in
one process the two OpenMP runtimes spin against each other); the value is
the median over --rounds passes of --steps steps.

With --ranks (default 2), kiln also trains on that many MPI ranks of one
thread each, pinned to a CPU each (mpirun; skipped without it), as the
example does on several ranks: the tables split by rows, the batch by
examples (HugeCTR's hybrid parallelism), each rank reading its share of
the file; the row compares it with PyTorch on as many CPUs as threads
(PyTorch's own way to use them in one process).

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/dlrm.py \\
      [--batch 256] [--steps 200] [--rounds 3] [--ranks 2] \\
      [--markdown bench/results-dlrm.md]
"""

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "python", "dlrm"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
import machine  # noqa: E402


def worker(system, path, threads, batch, steps, rounds, table_size):
    """One system in its own process (two OpenMP runtimes in one process
    spin against each other on 2 CPUs)."""
    all_cpus = sorted(os.sched_getaffinity(0))
    if system == "kiln-ranks":
        # One CPU per rank (mpirun may have bound the rank to one already).
        rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
        os.sched_setaffinity(0, [all_cpus[rank % len(all_cpus)]])
    machine.pin_threads(threads)
    import dlrm
    batches = [b for b, _ in zip(dlrm.batches(path, batch, table_size),
                                 range(steps))]
    if system == "pytorch":
        import torch
        from test_dlrm import TorchDlrm
        torch.set_num_threads(threads)
        model = TorchDlrm(dlrm.init_params(0, table_size))
        torch_opt = torch.optim.SGD(model.parameters(), lr=0.1)
        bce = torch.nn.BCEWithLogitsLoss()
        torch_batches = [tuple(torch.from_numpy(a) for a in b) for b in batches]
        rates = {"pytorch": []}
        for _ in range(rounds):
            start = time.perf_counter()
            for dense, ids, labels in torch_batches:
                torch_opt.zero_grad()
                bce(model(dense, ids), labels).backward()
                torch_opt.step()
            rates["pytorch"].append(len(batches) * batch /
                                    (time.perf_counter() - start))
        print(json.dumps(rates))
        return

    import kiln
    opt = kiln.optim.sgd(lr=0.1)
    params = dlrm.init_params(0, table_size)
    state = opt.init(params)
    comm, rank, ranks = None, 0, 1
    if system == "kiln-ranks":
        import kiln.distributed as kd
        comm = kd.mpi()
        rank, ranks = comm.rank, comm.size
        batches = [b for b, _ in zip(dlrm.batches(path, batch // ranks,
                                                  table_size, rank, ranks),
                                     range(steps))]
    step = dlrm.make_step(opt, comm, params)
    if comm is not None:
        params, state = dlrm.split_params(params, state, comm)
    step(params, state, *batches[0])  # compiled once, outside the timing

    def from_file():
        """(samples/s, share of the time waiting for a batch) of the whole
        loop from the file."""
        waited, count = 0.0, 0
        p, s = params, state
        if comm is not None:
            comm.barrier()
        start = time.perf_counter()
        source = dlrm.batches(path, batch // ranks, table_size, rank, ranks)
        while count < len(batches):
            before = time.perf_counter()
            b = next(source)
            waited += time.perf_counter() - before
            _, p, s = step(p, s, *b)
            count += 1
        total = time.perf_counter() - start
        return count * batch / total, waited / total

    rates = {"kiln": [], "pipeline": [], "stall": []}
    for _ in range(rounds):
        if comm is not None:
            comm.barrier()
        start = time.perf_counter()
        p, s = params, state
        for b in batches:
            _, p, s = step(p, s, *b)
        rates["kiln"].append(len(batches) * batch / (time.perf_counter() - start))
        rate, stall = from_file()
        rates["pipeline"].append(rate)
        rates["stall"].append(stall)
    if system == "kiln" and threads < len(all_cpus):
        # The same step (its threads started already), the loader's thread
        # now free to run on the CPUs the step does not use.
        os.sched_setaffinity(0, all_cpus)
        rates["spare"], rates["spare_stall"] = [], []
        for _ in range(rounds):
            rate, stall = from_file()
            rates["spare"].append(rate)
            rates["spare_stall"].append(stall)
    if rank == 0:
        print(json.dumps(rates))


def run_ranks(ranks, args):
    """The kiln-ranks worker on `ranks` MPI ranks: rank 0's rates, or None
    (with why on stderr) where mpirun is missing or the run fails."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("mpirun not found: the ranks row is skipped", file=sys.stderr)
        return None
    return machine.run_worker(__file__, args, launcher=[
        mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
        "-x", "PYTHONPATH"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--table-size", type=int, default=4096)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--ranks", default="2",
                        help="MPI rank counts for kiln's hybrid-parallel rows "
                             "(comma-separated; empty for none)")
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--worker", nargs=3,
                        metavar=("SYSTEM", "PATH", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker[0], args.worker[1], int(args.worker[2]),
                      args.batch, args.steps, args.rounds, args.table_size)

    started = datetime.datetime.now(datetime.timezone.utc)
    import criteo_synthetic
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.txt")
        criteo_synthetic.write(path, args.batch * args.steps, 1)
        for threads in (int(t) for t in args.threads.split(",")):
            median = {}
            for system in ("kiln", "pytorch"):
                rates = machine.run_worker(
                    __file__, ["--worker", system, path, threads,
                               "--batch", args.batch, "--steps", args.steps,
                               "--rounds", args.rounds,
                               "--table-size", args.table_size])
                if rates is None:
                    return 1
                median.update(machine.medians(rates))
            rows.append((f"{threads} CPU{'s' if threads > 1 else ''}", median))
            print(threads, median, flush=True)
        pytorch = {threads: m["pytorch"] for threads, m in
                   zip(args.threads.split(","), (m for _, m in rows))}
        for ranks in (int(r) for r in args.ranks.split(",") if r):
            rates = run_ranks(ranks, [
                "--worker", "kiln-ranks", path, 1, "--batch", args.batch,
                "--steps", args.steps, "--rounds", args.rounds,
                "--table-size", args.table_size])
            if rates is None:
                continue
            median = machine.medians(rates)
            median["pytorch"] = pytorch.get(str(ranks), float("nan"))
            rows.append((f"{ranks} ranks x 1 CPU", median))
            print(ranks, "ranks", median, flush=True)
    lines = ["# DLRM training throughput: kiln against PyTorch", ""]
    lines += machine.measured_lines(started, __file__, sys.executable)
    lines += ["", f"Batches of {args.batch}, {args.steps} steps per pass, "
              f"tables of {args.table_size} x 16, SGD; median of "
              f"{args.rounds} passes; samples per second, higher is better. "
              "`pipeline` is kiln's loop from the TSV file, `stall` its share "
              "of time waiting for the next batch. On N ranks kiln's tables "
              "are split by rows and each batch by examples (one thread per "
              "rank); PyTorch's figure there is its own on N CPUs (threads "
              "of one process). The parser reads ahead on a thread of its "
              "own (read_criteo's prefetch); on the step's CPUs it takes "
              "their time, so `stall` is the parsing's share of them. "
              "`spare CPU` is the same loop with the step's threads as they "
              "are and the parser free to run on a CPU the step does not "
              "use.", ""]
    lines += machine.table_head(["run", "kiln step", "PyTorch step",
                                 "kiln / PyTorch", "kiln pipeline", "stall",
                                 "pipeline, spare CPU", "stall there"])
    for threads, m in rows:
        spare = (f"{m['spare']:,.0f} | {100 * m['spare_stall']:.0f}%"
                 if "spare" in m else "- | -")
        lines.append(f"| {threads} | {m['kiln']:,.0f} | {m['pytorch']:,.0f} | "
                     f"{m['kiln'] / m['pytorch']:.2f} | {m['pipeline']:,.0f} | "
                     f"{100 * m['stall']:.0f}% | {spare} |")
    machine.write_report(lines, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
