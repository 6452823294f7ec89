"""What the benchmark reports say about the machine and the build they ran
on: the CPU's model name and the git revision of the checkout; and the
header and writing of a report."""

import json
import os
import platform
import subprocess
import sys


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else what platform says."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision(path):
    """The short revision of the checkout holding `path`, "" if none."""
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def measured_lines(started, script_path, python="/usr/bin/python3"):
    """The two lines under a report's title: when and where it was measured
    (start time, CPU, cores, revision) and the command that made it (the
    script run by `python`, Debian's python3 unless the benchmark needs the
    bench virtualenv's, on build/python, with this run's arguments)."""
    revision = git_revision(os.path.dirname(os.path.abspath(script_path)))
    return [
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {cpu_model()} "
        f"(`{os.cpu_count()}` CPUs), kiln {revision}, with",
        f"`PYTHONPATH=build/python {python} bench/"
        + os.path.basename(script_path) + " " + " ".join(sys.argv[1:]) + "`.",
    ]


def add_timing_arguments(parser, rounds=15, calls=10):
    """--rounds, --calls, --quick and --markdown, as the benchmarks that
    time interleaved rounds of calls take them; finish_timing_arguments
    applies --quick after parsing."""
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--calls", type=int, default=calls)
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds of 2 calls (a smoke run)")
    parser.add_argument("--markdown", default=None,
                        help="also write the report to this file")


def finish_timing_arguments(args):
    if args.quick:
        args.rounds, args.calls = 3, 2
    return args


def pin_threads(threads=1):
    """Pins this process to its first `threads` CPUs and tells kiln
    (OpenMP), BLAS and XLA to use that many threads. Call it before numpy,
    kiln or jax start a thread pool."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(
        os, "sched_getaffinity") else []
    if cpus and threads <= len(cpus):
        os.sched_setaffinity(0, cpus[:threads])
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ["XLA_FLAGS"] = (
        "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        if threads == 1 else "--xla_cpu_multi_thread_eigen=true")


def block(result):
    """`result`, once it is computed: JAX returns before its arrays are
    (kiln's calls return when done), so timings wait for them."""
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.block_until_ready(result)
    return result


def table_head(columns):
    """The header and rule lines of a markdown table of `columns`."""
    return ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]


def write_report(lines, markdown):
    """Prints the report and, with a path, writes it there too."""
    text = "\n".join(lines) + "\n"
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(text)


def run_worker(script, args, launcher=()):
    """Runs `script` (a benchmark that measures one configuration per
    subprocess, pinning itself) with `args` under this interpreter, started
    by `launcher` if any (mpirun and its options), and returns the JSON
    object its last line prints; None, after copying its stderr, when it
    fails."""
    done = subprocess.run(list(launcher) +
                          [sys.executable, os.path.abspath(script)] +
                          [str(a) for a in args], capture_output=True, text=True)
    if done.returncode:
        print(done.stderr, file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def medians(rates):
    """{name: median} of {name: [values]}."""
    return {k: sorted(v)[len(v) // 2] for k, v in rates.items()}
