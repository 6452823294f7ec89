#!/usr/bin/env python3
"""Data-parallel training at 2 ranks: kiln's data-parallel rewrite under
mpirun against PyTorch DistributedDataParallel over gloo, on the MLP
training step of workloads.py (see bench/README.md).

    /work/bench-venv/bin/python bench/ddp.py --build-dir build --markdown bench/results-ddp.md
    /work/bench-venv/bin/python bench/ddp.py --quick

What runs, all on the same initial parameters and data (workloads.py's
inputs, seed 20261122), one thread per rank:
  - kiln, 1 rank: the step IR bench.py builds (kiln-grad + SGD), compiled by
    kiln-compile, `taskset -c 0 kiln-run step.kmod --repeat N`;
  - kiln, R ranks: the same IR rewritten by `kiln-opt --kiln-data-parallel=
    "ranks=R batch-args=6,7 bucket-mb=B"` (x and labels split by rows),
    compiled, and run by `mpirun -n R --bind-to core kiln-run ...
    --shard-input 6=0 --shard-input 7=0 --repeat N`; rank 0 prints the
    median step time;
  - PyTorch, 1 process: nn.Sequential of Linear/ReLU, cross_entropy,
    backward, SGD(lr).step(), pinned to one CPU;
  - PyTorch, R processes: the same model in DistributedDataParallel over
    gloo (torch.multiprocessing.spawn), each process pinned to its own CPU
    with its rows of the batch; rank 0's median step time.
Before anything is timed, one step of each is checked: the updated
parameters of kiln on R ranks against kiln on 1 rank and against PyTorch
DDP (1e-5 relative), and the update p0 - p1 each implies against the float64
reference of workloads.py. Then rounds alternate the four systems (the
order rotated each round); the report gives the median of the rounds'
medians, each round's numbers and the load averages.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench as B  # noqa: E402
import machine  # noqa: E402
import workloads as W  # noqa: E402

SEED = 20261122
# glibc's malloc without heap trimming or mmap for large blocks, so that
# memory freed at the end of a call is reused by the next without page
# faults (a diagnostic row only).
NO_TRIM = {"MALLOC_TRIM_THRESHOLD_": "4000000000", "MALLOC_MMAP_THRESHOLD_": "4000000000"}
PARAM_NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]
PARAM_TOL = 1e-5   # the updated parameters, max abs diff / max abs value
UPDATE_TOL = 2e-3  # the update p0 - p1 (lr * gradient), as workloads.py checks it


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    p.add_argument("--work-dir", default=None,
                   help="modules, inputs and outputs (default BUILD/bench-ddp[-quick])")
    p.add_argument("--markdown", default=None, help="markdown report to write")
    p.add_argument("--quick", action="store_true",
                   help="the small MLP (batch 32, 64-128-128-10), few steps and rounds")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=None, help="default 5 (quick 3)")
    p.add_argument("--steps", type=int, default=None,
                   help="timed steps per measurement (default 50, quick 20)")
    p.add_argument("--warmup", type=int, default=5,
                   help="untimed PyTorch steps first (kiln-run's first call is untimed)")
    p.add_argument("--bucket-mb", type=float, default=25.0,
                   help="kiln-data-parallel's bucket-mb and DDP's bucket_cap_mb (both "
                        "default 25)")
    p.add_argument("--no-fusion", action="store_true",
                   help="compile both kiln steps with kiln-compile --no-fusion")
    p.add_argument("--no-torch", action="store_true", help="kiln only")
    p.add_argument("--torch-worker", default=None, help=argparse.SUPPRESS)
    return p.parse_args()


def loadavg():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def fmt_ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.2f} ms"


# --------------------------------------------------------------------------
# kiln
# --------------------------------------------------------------------------
class Kiln(B.Kiln):
    """bench.py's driver of the kiln tools (one thread per process), with the
    data-parallel rewrite and runs under mpirun."""

    def __init__(self, build_dir, work, compile_flags=()):
        super().__init__(build_dir, work, threads=1)
        self.compile_flags = list(compile_flags)
        self.mpirun = shutil.which("mpirun")
        self.commands = {}  # what was run, for the report

    def step_source(self, wl, stem="step"):
        """The single-device step, exactly as bench.py builds it."""
        path = os.path.join(self.work, f"{stem}.loss.mlir")
        with open(path, "w") as f:
            f.write(wl.mlir())
        fn, options = wl.grad
        text = self.tool("kiln-opt", path, f"--kiln-grad=function={fn} {options}")
        path = os.path.join(self.work, f"{stem}.mlir")
        with open(path, "w") as f:
            f.write(W.sgd_train_step(text, f"{fn}_value_and_grad", wl.lr))
        return path

    def data_parallel(self, source, ranks, batch_args, bucket_mb):
        out = os.path.join(self.work, f"step.dp{ranks}.mlir")
        option = (f"--kiln-data-parallel=ranks={ranks} "
                  f"batch-args={','.join(map(str, batch_args))} bucket-mb={bucket_mb:g}")
        self.tool("kiln-opt", source, option, "-o", out)
        self.commands["rewrite"] = f'kiln-opt step.mlir "{option}" -o {os.path.basename(out)}'
        return out

    def compile(self, source, *flags):
        """The module kiln-compile writes beside `source`, with this
        driver's compile flags and then `flags`."""
        out = source.rsplit(".mlir", 1)[0] + ".kmod"
        self.tool("kiln-compile", source, "-o", out, *self.compile_flags, *flags)
        return out

    def compile_and_plan(self, source):
        """(module, memory plan of @train_step) from one kiln-compile."""
        out = source.rsplit(".mlir", 1)[0] + ".kmod"
        _, err = self.tool("kiln-compile", source, "-o", out, *self.compile_flags,
                           "--memory-report", stderr=True)
        return out, self.train_step_plan(err)

    @staticmethod
    def train_step_plan(report):
        """(bytes in total, bytes after planning) of @train_step's
        intermediates in kiln-compile --memory-report's output, or None."""
        m = re.search(r"memory plan for @train_step: intermediates (\d+) bytes in total, "
                      r"(\d+) bytes after planning", report)
        return (int(m.group(1)), int(m.group(2))) if m else None

    def run_args(self, module, inputs, out_dir, repeat, function=None):
        args = [os.path.join(self.bin, "kiln-run"), module]
        if function:
            args += ["--function", function]
        for p in inputs:
            args += ["--input", p]
        args += ["--output-dir", out_dir]
        if repeat:
            args += ["--repeat", str(repeat)]
        return args

    def mpirun_prefix(self, ranks):
        # One core per rank where there are enough; OpenMPI refuses to bind
        # more ranks than cores.
        bind = "core" if ranks <= len(os.sched_getaffinity(0)) else "none"
        return [self.mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
                "--bind-to", bind, "-x", "OMP_NUM_THREADS"]

    def run(self, module, inputs, out_dir, repeat, ranks=1, shards=(), maxrss=False,
            env=None, mesh=None, function=None, stats=False, profile=None,
            comm="mpi"):
        """(outputs saved by rank 0, (median s, min s) or None, max RSS per rank in KiB).
        `mesh` (NAME=SIZE,...) is kiln-run's --mesh, for shards NAME:DIM:AXIS;
        `function` the module's function to run (kiln-run's default without).
        With `stats`, self.peaks holds each rank's peak bytes of the code's
        buffers during the calls (kiln-run --stats). With `profile` (a path
        P.json, for a module compiled with --profile), each rank r writes the
        trace of its timed calls to P.rank<r>.json. `comm` "gloo" starts the
        ranks with kiln-launch (Gloo, the elastic runs' communicator) instead
        of mpirun."""
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        args = self.run_args(module, inputs, out_dir, repeat, function)
        if stats or profile:
            args += ["--all-ranks-write"]
        if stats:
            args += ["--stats"]
        if profile:
            args += ["--profile-trace", profile]
        if mesh:
            args += ["--mesh", mesh]
        for s in shards:
            args += ["--shard-input", s]
        rss_prefix = os.path.join(self.work, "maxrss")
        if maxrss:
            for stale in glob.glob(rss_prefix + ".*"):
                os.remove(stale)
            # One file per rank: the ranks' stderr lines may interleave.
            args = ["sh", "-c", 'exec /usr/bin/time -f "%M" -o "$0.${OMPI_COMM_WORLD_RANK:-${KILN_RANK:-0}}" "$@"',
                    rss_prefix] + args
        if ranks > 1 and comm == "gloo":
            cmd = [os.path.join(self.bin, "kiln-launch"), "--nproc", str(ranks),
                   "--"] + args
        elif ranks > 1:
            if not self.mpirun:
                raise RuntimeError("mpirun not found (OpenMPI)")
            cmd = self.mpirun_prefix(ranks)
            for name in env or {}:
                cmd += ["-x", name]
            cmd += args
        else:
            cmd = ["taskset", "-c", str(sorted(os.sched_getaffinity(0))[0])] + args
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(self.env, **(env or {})))
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n"
                               f"{r.stdout[-2000:]}{r.stderr[-3000:]}")
        t = None
        if repeat:
            m = re.search(r"time per call: median ([0-9.]+) us \(min ([0-9.]+) us", r.stdout)
            if not m:
                raise RuntimeError(f"kiln-run printed no timing:\n{r.stdout[-2000:]}")
            t = (float(m.group(1)) * 1e-6, float(m.group(2)) * 1e-6)
        saved = re.findall(r"^(.*?): \S+ saved to (.*)$", r.stdout, re.M)
        outs = [np.load(path) for name, path in saved
                if not name.startswith("rank ") or name.startswith("rank 0: ")]
        if stats:
            found = dict((int(rank), int(peak)) for rank, peak in re.findall(
                r"^rank (\d+): memory: peak (\d+) bytes", r.stdout, re.M))
            if sorted(found) != list(range(ranks)):
                raise RuntimeError(f"kiln-run --stats printed no memory line for every rank:\n"
                                   f"{r.stdout[-2000:]}")
            self.peaks = [found[rank] for rank in range(ranks)]
        rss = []
        for rank in range(ranks if maxrss else 0):
            with open(f"{rss_prefix}.{rank}") as f:
                rss.append(int(f.read().split()[-1]))
        return outs, t, rss


def mpi_bench_parser(doc, default_work, quick_help):
    """The command line every MPI benchmark takes: --build-dir, --work-dir
    (default BUILD/`default_work`), --markdown and --quick."""
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=os.path.join(os.path.dirname(here), "build"))
    p.add_argument("--work-dir", default=None,
                   help=f"scratch directory (default BUILD/{default_work})")
    p.add_argument("--markdown", default=None, help="markdown report to write")
    p.add_argument("--quick", action="store_true", help=quick_help)
    return p


def start_mpi_bench(args, default_work, name):
    """(Kiln driver, work directory, start time) of a benchmark that runs
    under mpirun: the work directory (args.work_dir, or `default_work`
    under args.build_dir) made afresh. Exits naming `name` without mpirun."""
    work = args.work_dir or os.path.join(args.build_dir, default_work)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    started = datetime.datetime.now(datetime.timezone.utc)
    kiln = Kiln(args.build_dir, work)
    if not kiln.mpirun:
        sys.exit(f"{name}: mpirun not found (apt-get install openmpi-bin)")
    return kiln, work, started


def all_reduce_source(path, elements, ranks):
    """A function that only all-reduces (sum) an f32[elements] over the ranks."""
    ty = f"tensor<{elements}xf32>"
    group = ", ".join(map(str, range(ranks)))
    with open(path, "w") as f:
        f.write("module {\n"
                f"  func.func @all_reduce(%x: {ty}) -> {ty} {{\n"
                f"    %p = kiln.all_reduce_start %x, kind = sum, groups = [[{group}]] : "
                f"({ty}) -> {ty}\n"
                f"    %r = kiln.collective_wait %p, %x : {ty}, {ty}\n"
                f"    return %r : {ty}\n  }}\n}}\n")
    return path


def collectives_of(path):
    """[(op, kind, elements, bytes)] of every collective (synchronous or a
    start) in an IR file."""
    sizes = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8}
    found = []
    with open(path) as f:
        for line in f:
            m = re.search(r"kiln\.(all_reduce|all_gather|reduce_scatter|all_to_all|"
                          r"collective_broadcast|collective_permute)(_start)?\b(.*)", line)
            if not m:
                continue
            kind = re.search(r"kind = (\w+)", m.group(3))
            ty = re.search(r":\s*\(?tensor<((?:\d+x)*)(\w+)>", m.group(3))
            if not ty:
                continue
            dims = [int(d) for d in ty.group(1).split("x") if d]
            n = int(np.prod(dims)) if dims else 1
            found.append((m.group(1) + (m.group(2) or ""), kind.group(1) if kind else "",
                          n, n * sizes.get(ty.group(2), 4)))
    return found


# --------------------------------------------------------------------------
# PyTorch (run in a fresh interpreter per measurement: --torch-worker)
# --------------------------------------------------------------------------
def torch_rank(rank, cfg):
    import resource

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    world = cfg["world"]
    os.sched_setaffinity(0, {cfg["cpus"][rank % len(cfg["cpus"])]})
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    if world > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{cfg['port']}",
                                rank=rank, world_size=world)
    ins = [np.load(p) for p in cfg["inputs"]]
    dims = cfg["dims"]
    layers = []
    for i in range(3):
        lin = torch.nn.Linear(dims[i], dims[i + 1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(ins[2 * i].T.copy()))
            lin.bias.copy_(torch.from_numpy(ins[2 * i + 1]))
        layers += [lin] + ([torch.nn.ReLU()] if i < 2 else [])
    model = torch.nn.Sequential(*layers)
    hooked = {"bytes": 0, "buckets": 0}
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(
            model, bucket_cap_mb=cfg["bucket_mb"])
        if cfg["check"]:
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

            def counting(state, bucket):
                buf = bucket.buffer()
                state["bytes"] += buf.numel() * buf.element_size()
                state["buckets"] += 1
                return default_hooks.allreduce_hook(None, bucket)
            model.register_comm_hook(hooked, counting)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    batch = ins[6].shape[0]
    lo, hi = rank * batch // world, (rank + 1) * batch // world
    x = torch.from_numpy(ins[6][lo:hi].copy())
    y = torch.from_numpy(ins[7][lo:hi].astype(np.int64))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    result = {}
    if cfg["check"]:
        loss = step().detach()
        if world > 1:
            dist.all_reduce(loss)
            loss /= world
        net = model.module if world > 1 else model
        lins = [m for m in net if isinstance(m, torch.nn.Linear)]
        params = []
        for lin in lins:
            params += [lin.weight.detach().numpy().T.copy(), lin.bias.detach().numpy().copy()]
        if rank == 0:
            np.save(os.path.join(cfg["out"], "loss.npy"), loss.numpy())
            for name, v in zip(PARAM_NAMES, params):
                np.save(os.path.join(cfg["out"], f"{name}.npy"), v)
        result.update(allreduce_bytes=hooked["bytes"], buckets=hooked["buckets"])
    else:
        for _ in range(cfg["warmup"]):
            step()
        times = []
        for _ in range(cfg["steps"]):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        result.update(median=float(np.median(times)), min=float(np.min(times)))
        if world > 1 and cfg.get("allreduce_elems"):
            buf = torch.zeros(cfg["allreduce_elems"])
            for _ in range(3):
                dist.all_reduce(buf)
            times = []
            for _ in range(cfg["steps"]):
                start = time.perf_counter()
                dist.all_reduce(buf)
                times.append(time.perf_counter() - start)
            result.update(allreduce_median=float(np.median(times)),
                          allreduce_min=float(np.min(times)))
    result["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if world > 1:
        gathered = [None] * world
        dist.all_gather_object(gathered, result)
    else:
        gathered = [result]
    if rank == 0:
        with open(os.path.join(cfg["out"], "result.json"), "w") as f:
            json.dump({"ranks": gathered, "torch": torch.__version__}, f)
    if world > 1:
        # Tearing gloo down (destroy_process_group, or the interpreter's
        # exit) sometimes aborts in a C++ destructor ("terminate called
        # without an active exception"); everything is written by now.
        dist.barrier()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def torch_worker(config_path):
    with open(config_path) as f:
        cfg = json.load(f)
    if cfg["world"] == 1:
        torch_rank(0, cfg)
    else:
        import torch.multiprocessing as mp
        mp.spawn(torch_rank, args=(cfg,), nprocs=cfg["world"], join=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Torch:
    def __init__(self, work, wl, inputs, args):
        self.work, self.wl, self.inputs, self.args = work, wl, inputs, args
        self.cpus = sorted(os.sched_getaffinity(0))

    def run(self, world, check, steps=0, allreduce_elems=0):
        out = tempfile.mkdtemp(prefix=f"torch{world}.", dir=self.work)
        cfg = dict(world=world, check=check, steps=steps, warmup=self.args.warmup,
                   inputs=self.inputs, dims=self.wl.dims, lr=self.wl.lr, out=out,
                   cpus=self.cpus, port=free_port(), bucket_mb=self.args.bucket_mb,
                   allreduce_elems=allreduce_elems)
        path = os.path.join(out, "config.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", path],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"PyTorch ({world} process{'es' if world > 1 else ''}) "
                               f"failed ({r.returncode}):\n{r.stderr[-3000:]}")
        with open(os.path.join(out, "result.json")) as f:
            result = json.load(f)
        outs = None
        if check:
            outs = [np.load(os.path.join(out, "loss.npy"))] + [
                np.load(os.path.join(out, f"{n}.npy")) for n in PARAM_NAMES]
        shutil.rmtree(out)
        return outs, result


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------
def compare(outs, ref, p0, lr):
    """(max rel. error of the loss and updated parameters, max rel. error of
    the updates p0 - p1 / lr) of `outs` against `ref`, both
    [loss, w1, b1, ...]."""
    p_err = max(W.rel_error(o, r) for o, r in zip(outs, ref))
    u_err = max(W.rel_error((p.astype(np.float64) - o) / lr, (p.astype(np.float64) - r) / lr)
                for p, o, r in zip(p0, outs[1:], ref[1:]))
    return p_err, u_err


def check_rejects_wrong(ref, p0, lr):
    """Both measures must flag an output with one element moved: a parameter
    by 5% of its tensor's largest value, an update by 5% of its largest."""
    for i in range(1, len(ref)):
        wrong = [np.array(r, dtype=np.float64, copy=True) for r in ref]
        flat = wrong[i].reshape(-1)
        flat[flat.size // 2] += 0.05 * float(np.max(np.abs(ref[i])))
        if compare(wrong, ref, p0, lr)[0] <= PARAM_TOL:
            sys.exit(f"ddp: the parameter check accepts a wrong output {i}")
        wrong = [np.array(r, dtype=np.float64, copy=True) for r in ref]
        upd = (p0[i - 1].astype(np.float64) - ref[i]).reshape(-1)
        flat = wrong[i].reshape(-1)
        flat[flat.size // 2] -= 0.05 * float(np.max(np.abs(upd)))
        if compare(wrong, ref, p0, lr)[1] <= UPDATE_TOL:
            sys.exit(f"ddp: the update check accepts a wrong output {i}")


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------
def machine_lines(args, torch_version, kiln_bin):
    cpu = machine.cpu_model()
    rev = machine.git_revision(HERE) or "unknown"
    mpi = "absent"
    if shutil.which("mpirun"):
        v = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
        mpi = v.splitlines()[0] if v else "present"
    return [f"- CPU: {cpu}; {os.cpu_count()} logical CPUs on the host, "
            f"{len(os.sched_getaffinity(0))} usable by this run",
            f"- kiln: git {rev}, tools from {kiln_bin}; {mpi}",
            f"- {torch_version or 'PyTorch absent'}; python {platform.python_version()}, "
            f"numpy {np.__version__}"]


def median_or_none(values):
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def main():
    args = parse_args()
    if args.torch_worker:
        torch_worker(args.torch_worker)
        return 0
    rounds = args.rounds or (3 if args.quick else 5)
    steps = args.steps or (20 if args.quick else 50)
    R = args.ranks
    work = args.work_dir or os.path.join(args.build_dir,
                                         "bench-ddp-quick" if args.quick else "bench-ddp")
    os.makedirs(work, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    loads = [("start", loadavg())]
    problems = []

    wl = W.MlpTrain(args.quick)
    ins = wl.inputs(np.random.default_rng(SEED))
    if wl.batch % R:
        sys.exit(f"ddp: batch {wl.batch} is not divisible by {R} ranks")
    paths = []
    for i, v in enumerate(ins):
        p = os.path.join(work, f"in{i}.npy")
        np.save(p, v)
        paths.append(p)
    expected = [np.asarray(e) for e in wl.reference(ins)]
    p0 = ins[:6]
    check_rejects_wrong(expected, p0, wl.lr)

    kiln = Kiln(args.build_dir, work, ["--no-fusion"] if args.no_fusion else [])
    source = kiln.step_source(wl)
    dp_source = kiln.data_parallel(source, R, [6, 7], args.bucket_mb)
    module, plan = kiln.compile_and_plan(source)
    dp_module, dp_plan = kiln.compile_and_plan(dp_source)
    shards = ["6=0", "7=0"]
    plans = {1: plan, R: dp_plan}
    collectives = collectives_of(dp_source)
    grad_elems = sum(int(np.prod(v.shape)) for v in ins[:6])
    # Where the time goes: one rank's share of the work alone (the step on
    # batch / R rows, no communication), and the gradients' all-reduce alone.
    half = W.MlpTrain(args.quick)
    half.batch = wl.batch // R
    half_module = kiln.compile(kiln.step_source(half, f"step.batch{half.batch}"))
    half_paths = paths[:6]
    for i in (6, 7):
        p = os.path.join(work, f"in{i}.rows{half.batch}.npy")
        np.save(p, ins[i][:half.batch])
        half_paths.append(p)
    ar_elems = sum(n for op, kind, n, b in collectives if op.startswith("all_reduce")) \
        or grad_elems
    ar_module = kiln.compile(all_reduce_source(
        os.path.join(work, f"all_reduce{R}.mlir"), ar_elems, R))
    ar_path = os.path.join(work, "all_reduce.in.npy")
    np.save(ar_path, np.zeros(ar_elems, np.float32))

    torch = None
    if not args.no_torch:
        try:
            import torch as _t  # noqa: F401  (only to know it is there)
            torch = Torch(work, wl, paths, args)
        except ImportError as exc:
            problems.append(f"PyTorch absent ({exc}); its rows are left out")

    # ---- one step of each, checked
    print(f"== check: one step of kiln (1 and {R} ranks) and PyTorch (1 and {R})",
          flush=True)
    outs, checks, rss, torch_version, torch_bytes = {}, [], {}, None, None
    try:
        outs["kiln1"], _, rss["kiln1"] = kiln.run(module, paths, os.path.join(work, "out1"),
                                                  0, maxrss=True)
    except RuntimeError as exc:
        problems.append(f"kiln, 1 rank: {exc}")
    try:
        outs["kilnR"], _, rss["kilnR"] = kiln.run(dp_module, paths,
                                                  os.path.join(work, f"out{R}"), 0,
                                                  ranks=R, shards=shards, maxrss=True)
    except RuntimeError as exc:
        problems.append(f"kiln, {R} ranks: {exc}")
    try:
        outs["kilnRg"], _, rss["kilnRg"] = kiln.run(
            dp_module, paths, os.path.join(work, f"out{R}g"), 0, ranks=R,
            shards=shards, maxrss=True, comm="gloo")
    except RuntimeError as exc:
        problems.append(f"kiln, {R} ranks over Gloo: {exc}")
    if torch:
        for key, world in (("torch1", 1), ("torchR", R)):
            try:
                outs[key], res = torch.run(world, check=True)
                torch_version = f"torch {res['torch']} (gloo)"
                if world > 1:
                    torch_bytes = (res["ranks"][0]["allreduce_bytes"],
                                   res["ranks"][0]["buckets"])
            except RuntimeError as exc:
                problems.append(str(exc))
    names = {"kiln1": "kiln, 1 rank", "kilnR": f"kiln, {R} ranks (kiln-data-parallel)",
             "kilnRg": f"kiln, {R} ranks over Gloo (kiln-launch; elastic runs' "
                       "communicator)",
             "torch1": "PyTorch, 1 process", "torchR": f"PyTorch DDP, {R} processes"}
    ok = {}
    for key in names:
        if key not in outs:
            continue
        err, ok[key] = wl.check([np.asarray(o) for o in outs[key]], expected, ins)
        checks.append((names[key], "float64 reference (workloads.py's check: the loss and "
                       "the gradients, 2e-3)", None, err, ok[key]))
    pairs = [("kilnR", "kiln1"), ("kilnRg", "kilnR"), ("kilnR", "torchR"),
             ("torchR", "torch1"),
             ("kiln1", "torch1")]
    for a, b in pairs:
        if a in outs and b in outs:
            p_err, u_err = compare([np.asarray(o, np.float64) for o in outs[a]],
                                   [np.asarray(o, np.float64) for o in outs[b]], p0, wl.lr)
            good = p_err <= PARAM_TOL and u_err <= UPDATE_TOL
            checks.append((names[a], names[b], p_err, u_err, good))
            if a == "kilnR" and not good:
                problems.append(f"{names[a]} disagrees with {names[b]}: parameters "
                                f"{p_err:.2e}, updates {u_err:.2e}")
            ok[(a, b)] = good
    for key in ("kiln1", "kilnR", "kilnRg", "torch1", "torchR"):
        if key in outs and not ok.get(key):
            problems.append(f"{names[key]} disagrees with the float64 reference; not timed")
    loads.append(("after the checks", loadavg()))

    # ---- rounds
    timed = [k for k in ("kilnR", "kilnRg", "torchR", "kiln1", "torch1") if ok.get(k)]
    samples = {k: [] for k in timed}
    samples.update(kilnHalf=[], kilnAR=[])
    if "kilnR" in timed:
        samples["kilnRnt"] = []
    if "torchR" in timed:
        samples["torchAR"] = []
    names.update(kilnHalf=f"kiln, 1 rank, {half.batch} rows (one rank's share, no "
                          "communication)",
                 kilnAR=f"kiln all-reduce alone ({ar_elems:,} f32, {R} ranks, MPI)",
                 kilnRnt=f"kiln, {R} ranks, with glibc malloc's trimming and mmap off "
                         "(" + ", ".join(f"{k}={v}" for k, v in NO_TRIM.items()) + ")",
                 torchAR=f"PyTorch dist.all_reduce alone ({grad_elems:,} f32, {R} "
                         "processes, gloo)")
    round_loads = []
    torch_rss = {}
    for r in range(rounds):
        order = timed[r % len(timed):] + timed[:r % len(timed)] if timed else []
        round_loads.append(loadavg())
        print(f"== round {r + 1}/{rounds} (load {round_loads[-1]}): {', '.join(order)}",
              flush=True)
        for key in order + [k for k in ("kilnHalf", "kilnAR", "kilnRnt") if k in samples]:
            try:
                if key == "kilnRnt":
                    _, t, _ = kiln.run(dp_module, paths, os.path.join(work, f"time{R}"),
                                       steps, ranks=R, shards=shards, env=NO_TRIM)
                elif key == "kilnHalf":
                    _, t, _ = kiln.run(half_module, half_paths, os.path.join(work, "timeh"),
                                       steps)
                elif key == "kilnAR":
                    _, t, _ = kiln.run(ar_module, [ar_path], os.path.join(work, "timear"),
                                       steps, ranks=R)
                elif key == "kiln1":
                    _, t, _ = kiln.run(module, paths, os.path.join(work, "time1"), steps)
                elif key == "kilnR":
                    _, t, _ = kiln.run(dp_module, paths, os.path.join(work, f"time{R}"),
                                       steps, ranks=R, shards=shards)
                elif key == "kilnRg":
                    _, t, _ = kiln.run(dp_module, paths, os.path.join(work, f"time{R}g"),
                                       steps, ranks=R, shards=shards, comm="gloo")
                else:
                    _, res = torch.run(1 if key == "torch1" else R, check=False, steps=steps,
                                       allreduce_elems=grad_elems)
                    t = (res["ranks"][0]["median"], res["ranks"][0]["min"])
                    if "allreduce_median" in res["ranks"][0]:
                        samples["torchAR"].append(res["ranks"][0]["allreduce_median"])
                    torch_rss[key] = [x["maxrss_kib"] for x in res["ranks"]]
            except RuntimeError as exc:
                problems.append(f"round {r + 1}, {names[key]}: " +
                                "\n".join(str(exc).splitlines()[-12:]))
                samples[key].append(None)
                if key == "torchR" and "torchAR" in samples:
                    samples["torchAR"].append(None)
                continue
            samples[key].append(t[0])
            print(f"   {names[key]}: {fmt_ms(t[0])} (min {fmt_ms(t[1])})", flush=True)
    loads.append(("end", loadavg()))
    med = {k: median_or_none(v) for k, v in samples.items()}

    # ---- report
    kiln_bin = kiln.bin
    nf = " --no-fusion" if args.no_fusion else ""
    cmd_k1 = ("OMP_NUM_THREADS=1 taskset -c 0 kiln-run step.kmod --input in0.npy ... "
              f"--input in7.npy --output-dir DIR --repeat {steps}")
    cmd_kR = (f"OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe -n {R} "
              f"--bind-to core -x OMP_NUM_THREADS kiln-run step.dp{R}.kmod --input in0.npy "
              f"... --input in7.npy --shard-input 6=0 --shard-input 7=0 --output-dir DIR "
              f"--repeat {steps}")
    out = [f"# Data-parallel MLP training step: kiln vs PyTorch DDP "
           f"({'quick' if args.quick else 'full'}, {R} ranks)", ""]
    out += machine_lines(args, torch_version, kiln_bin)
    out += [f"- date: {started:%Y-%m-%d %H:%M} UTC; load averages (1, 5, 15 min): " +
            "; ".join(f"{w} {l}" for w, l in loads),
            f"- workload: {wl.title}, {wl.desc} (lr {wl.lr}), global batch {wl.batch}; "
            f"each of the {R} ranks gets {wl.batch // R} rows; one thread per rank "
            f"(OMP_NUM_THREADS=1, torch.set_num_threads(1)), each rank on its own CPU "
            f"(mpirun --bind-to core; os.sched_setaffinity in each PyTorch process); "
            f"the 1-rank runs on CPU 0",
            f"- command: `/work/bench-venv/bin/python bench/ddp.py --build-dir "
            f"{os.path.relpath(args.build_dir, os.path.dirname(HERE))}"
            f"{' --quick' if args.quick else ''}{nf}"
            f"{' --markdown ' + os.path.relpath(args.markdown, os.path.dirname(HERE)) if args.markdown else ''}`"
            f"; {rounds} rounds of {steps} timed steps per system",
            "", "kiln is run as", "",
            f"    {kiln.commands.get('rewrite', '')}",
            f"    kiln-compile step.mlir -o step.kmod{nf}; "
            f"kiln-compile step.dp{R}.mlir -o step.dp{R}.kmod{nf}",
            f"    {cmd_k1}", f"    {cmd_kR}", "",
            "and times the median of kiln-run's `--repeat` calls (rank 0's, after an untimed "
            "first call; each call allocates its outputs). PyTorch: "
            f"`DistributedDataParallel(model, bucket_cap_mb={args.bucket_mb:g})` over gloo "
            "(torch.multiprocessing.spawn), a step is `zero_grad(); cross_entropy(model(x), "
            f"y).backward(); SGD.step()`, {args.warmup} warm-up steps, then rank 0's median; "
            "the 1-process run is the same model without DDP on the whole batch.", ""]

    out += ["## Correctness (one step from the same parameters and data)", "",
            "parameters: max abs. difference / max abs. value over the loss and the six "
            f"updated parameters (goal <= {PARAM_TOL:g}); updates: the same measure on "
            f"(p0 - p1) / lr, i.e. the gradients each step applied (<= {UPDATE_TOL:g}, the "
            "tolerance bench.py uses against the float64 reference). Both checks were first "
            "shown to reject an output with one element moved by 5%.", "",
            "| system | against | parameters | updates | status |", "|---|---|---|---|---|"]
    for a, b, p_err, u_err, good in checks:
        p = "-" if p_err is None else f"{p_err:.2e}"
        out.append(f"| {a} | {b} | {p} | {u_err:.2e} | {'ok' if good else '**WRONG**'} |")
    if not checks:
        out.append("| - | - | - | - | nothing ran |")

    out += ["", "## Step time", "",
            f"Median over {rounds} rounds of each round's median step time (min: the "
            "fastest round's median); throughput = global batch / step time.", "",
            "| system | ranks x threads | step time | min | samples/s |", "|---|---|---|---|---|"]
    for key, rt in (("kilnR", f"{R} x 1"), ("kilnRg", f"{R} x 1"), ("torchR", f"{R} x 1"),
                    ("kiln1", "1 x 1"), ("torch1", "1 x 1")):
        m = med.get(key)
        mins = [v for v in samples.get(key, []) if v is not None]
        thr = f"{wl.batch / m:,.0f}" if m else "-"
        note = "" if key in med else " (not timed: see Problems)"
        out.append(f"| {names[key]}{note} | {rt} | {fmt_ms(m)} | "
                   f"{fmt_ms(min(mins)) if mins else '-'} | {thr} |")
    diag = [k for k in ("kilnHalf", "kilnAR", "torchAR", "kilnRnt") if med.get(k)]
    if diag:
        why = ""
        if "kilnRnt" in diag:
            why = (f" The last row is the {R}-rank run again with glibc's malloc told to keep "
                   "freed memory (no heap trimming, no mmap for large blocks), so that the "
                   "buffers each call allocates (its outputs, its arena of intermediates) are "
                   "reused by the next call without page faults: a diagnostic, not the goal's "
                   "number.")
        out += ["", "Where the time goes (the same rounds, medians)." + why, "",
                "| measurement | time |", "|---|---|"]
        for key in diag:
            if key == "kilnRnt" and med.get("kilnR") and med.get("kilnHalf") and \
                    med.get("kilnAR"):
                rest = med["kilnR"] - med["kilnHalf"] - med["kilnAR"]
                out.append(f"| {names['kilnR']} minus the first two rows (derived: the "
                           "rewrite's extra ops, allocation, waiting on the slower rank) | "
                           f"{fmt_ms(rest)} |")
            out.append(f"| {names[key]} | {fmt_ms(med[key])} |")
    short = {"kilnR": f"kiln {R} ranks", "kilnRg": f"kiln {R} ranks Gloo",
             "torchR": f"PyTorch DDP {R}", "kiln1": "kiln 1 rank",
             "torch1": "PyTorch 1", "kilnHalf": f"kiln 1 rank, {half.batch} rows",
             "kilnAR": "kiln all-reduce", "torchAR": "gloo all_reduce",
             "kilnRnt": f"kiln {R} ranks, no trimming"}
    out += ["", "Each round (order rotated; load average at its start):", "",
            "| round | load | " + " | ".join(short[k] for k in timed + diag) + " |",
            "|---|---|" + "---|" * len(timed + diag)]
    for r in range(rounds):
        cells = [fmt_ms(samples[k][r]) if r < len(samples[k]) else "-" for k in timed + diag]
        out.append(f"| {r + 1} | {round_loads[r]} | " + " | ".join(cells) + " |")

    # bytes
    grad_bytes = 4 * grad_elems
    out += ["", "## Bytes all-reduced per step", ""]
    reduce_bytes = sum(b for op, kind, n, b in collectives if op.startswith("all_reduce"))
    if collectives:
        out += [f"Counted from the rewritten IR (`step.dp{R}.mlir`): its collectives, one "
                "row per start op (static: every step runs each once).", "",
                "| op | kind | elements | bytes |", "|---|---|---|---|"]
        for op, kind, n, b in collectives:
            out.append(f"| kiln.{op} | {kind} | {n:,} | {b:,} |")
    else:
        out.append("The rewritten IR has no collectives.")
    ring = 2 * (R - 1) / R
    out += ["", f"- the gradients: {grad_elems:,} f32 = {grad_bytes:,} bytes per rank "
            "(from the parameter shapes)",
            f"- kiln all-reduces {reduce_bytes:,} bytes per rank per step (counted in the IR; "
            f"{reduce_bytes - grad_bytes:+,} bytes against the gradients: the loss, a partial "
            "sum of the ranks, rides in the same bucket)"]
    if torch_bytes:
        out.append(f"- PyTorch DDP all-reduces {torch_bytes[0]:,} bytes per rank per step in "
                   f"{torch_bytes[1]} bucket{'s' if torch_bytes[1] != 1 else ''} (measured: a "
                   "comm hook summing its buckets' sizes during the checked step; the loss is "
                   "not in it)")
    out.append(f"- a ring all-reduce of P bytes sends and receives 2(N-1)/N x P = {ring:g} x P "
               f"per rank at N = {R} (derived, not measured): {ring * reduce_bytes:,.0f} "
               f"bytes for kiln's payload, {ring * grad_bytes:,.0f} for the gradients alone. "
               "OpenMPI picks its own algorithm for MPI_Iallreduce; no byte counter of the "
               "runtime or MPI is read here")

    # memory
    out += ["", "## Memory per rank", "",
            "This run measures data parallelism without sharding (kiln-zero's ZeRO "
            "stages are not benchmarked here): every rank holds all parameters, "
            "gradients and outputs. Measured for reference:", ""]
    for n, plan in sorted(plans.items()):
        if plan:
            out.append(f"- kiln-compile --memory-report, step for {n} rank{'s' if n > 1 else ''}: "
                       f"intermediates {plan[0]:,} bytes summed, {plan[1]:,} bytes after "
                       "planning (the arena each call allocates)")
    for key in ("kiln1", "kilnR"):
        if rss.get(key):
            out.append(f"- {names[key]}: peak RSS per rank (checked run, /usr/bin/time): "
                       + ", ".join(f"{v / 1024:.0f} MiB" for v in rss[key]))
    for key in ("torch1", "torchR"):
        if torch_rss.get(key):
            out.append(f"- {names[key]}: peak RSS per process (last timed round, "
                       "ru_maxrss, the interpreter and libtorch included): "
                       + ", ".join(f"{v / 1024:.0f} MiB" for v in torch_rss[key]))

    # goals: one that kiln could not be measured for is missed, not n/a
    kiln_failed = "kilnR" not in outs or not ok.get("kilnR")
    unmeasured = (f"no measurement: kiln on {R} ranks "
                  f"{'did not run' if 'kilnR' not in outs else 'gave wrong results'}"
                  " (see Problems)") if kiln_failed else "no measurement"

    def status(value, good):
        if value is None:
            return "**missed**" if kiln_failed else "n/a"
        return "met" if good else "**missed**"
    out += ["", "## Goals", "", "| goal | measured | status |", "|---|---|---|"]
    k, t = med.get("kilnR"), med.get("torchR")
    ratio = k / t if k and t else None
    out.append(f"| kiln DDP step <= 0.8x PyTorch DDP (gloo), {R} ranks | " +
               (f"{fmt_ms(k)} / {fmt_ms(t)} = {ratio:.2f}x" if ratio else unmeasured) +
               f" | {status(ratio, ratio is not None and ratio <= 0.8)}"
               + (f" (by {ratio / 0.8 - 1:.0%})" if ratio and ratio > 0.8 else "") + " |")
    k1 = med.get("kiln1")
    scale = k1 / k if k and k1 else None
    out.append(f"| kiln {R} ranks x 1 thread >= 1.8x the throughput of 1 rank x 1 thread | " +
               (f"{fmt_ms(k1)} / {fmt_ms(k)} = {scale:.2f}x" if scale else unmeasured) +
               f" | {status(scale, scale is not None and scale >= 1.8)}"
               + (f" ({1 - scale / 1.8:.0%} short)" if scale and scale < 1.8 else "") + " |")
    t1 = med.get("torch1")
    tscale = t1 / t if t and t1 else None
    out.append(f"| (reference) PyTorch {R} processes vs 1 | " +
               (f"{fmt_ms(t1)} / {fmt_ms(t)} = {tscale:.2f}x" if tscale else "no measurement") +
               " | - |")
    kr = ok.get(("kilnR", "kiln1")), ok.get(("kilnR", "torchR"))
    out.append(f"| kiln DDP's updated parameters = kiln 1 rank and PyTorch DDP within "
               f"{PARAM_TOL:g} | " +
               ("see Correctness" if None not in kr else
                unmeasured.replace("no measurement", "not compared")) + " | " +
               (status(None, False) if None in kr else ("met" if all(kr) else "**missed**"))
               + " |")
    if problems:
        out += ["", "## Problems", ""] + [
            "- " + p.replace("\n", "\n  ") for p in problems]
    out.append("")
    text = "\n".join(out)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print()
    print(text)
    return 1 if any(p.startswith("kiln") for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
