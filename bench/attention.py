#!/usr/bin/env python3
"""Scaled dot-product attention: kiln.attention (the fused op) against the
same computation written as kiln ops and compiled with --no-fusion, and
against PyTorch's scaled_dot_product_attention on the CPU; time per call and
peak memory (see bench/README.md, "Attention").

    /work/bench-venv/bin/python bench/attention.py              # N = 1024, 4096, 16384
    /work/bench-venv/bin/python bench/attention.py --quick      # N = 256, 512
    /work/bench-venv/bin/python bench/attention.py --sizes 1024,4096 --threads 2

Shapes: batch 1, 8 heads, head dim 64, f32, q, k and v of [1, 8, N, 64],
scale 1/sqrt(64); non-causal and causal; the forward pass (result and
log-sum-exp) and forward + backward (dq, dk, dv from a given cotangent of
the result).

- kiln fused: `kiln.attention`, and for the backward `kiln.attention_grad`
  on the saved result and lse, compiled by kiln-compile as it is.
- kiln unfused: softmax(q k^T * scale (+ causal mask)) v as kiln ops on
  [8, N, 64] (transpose, batched matmul, mul by the scale broadcast to the
  scores' shape, iota/compare/select with -inf for the causal mask,
  reduce_max, sub, exp, reduce_sum, div, broadcast_in_dim), and its
  backward by hand from the saved softmax, compiled with --no-fusion. The
  scale and -inf are rank-0 arguments (kiln-run literals): as splat
  constants of the scores' shape they would be stored in the .kmod. A function whose
  planned intermediates (kiln-compile --memory-report), or whose largest
  single tensor, exceed --max-gib (default 6) is not run: "does not fit".
- PyTorch: torch.nn.functional.scaled_dot_product_attention(q, k, v,
  is_causal=...) with torch.backends' defaults, under torch.no_grad() for the
  forward, and with requires_grad inputs and .backward(cotangent) for
  forward + backward; run in a child interpreter per measurement.

Every kiln-run and every PyTorch measurement is a fresh process, pinned
with taskset to the first --threads CPUs (OMP_NUM_THREADS for kiln,
torch.set_num_threads for PyTorch); its peak RSS is the high-water mark the
kernel reports for that process (/usr/bin/time's %M, else wait4's rusage). The outputs are
checked (against a float64 numpy reference up to N = --ref-max, beyond it
against PyTorch's, else kiln unfused); then the median of repeated calls
after that first one. kiln-run's time per call includes allocating its
outputs. With --rounds R every system is measured R times, in turn (the
order reversed every other round), and the time is the median of the R
medians: the speed of a shared machine drifts over minutes, and one
measurement after another would charge the drift to whichever came
second.

Environment: KILN_BUILD_DIR (default: build/ beside bench/) for the tools;
the PyTorch child runs KILN_BENCH_PYTHON, else $KILN_BENCH_VENV/bin/python
(default /work/bench-venv), else this interpreter; without torch its
column is left empty.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import fmt_time  # noqa: E402  (the main bench's time format)

HEADS, HEAD_DIM, BATCH = 8, 64, 1
SCALE = 1.0 / np.sqrt(HEAD_DIM)
SEED = 20261123
DEFAULT_SIZES = [1024, 4096, 16384]
QUICK_SIZES = [256, 512]
GIB = 1024.0 ** 3
MIB = 1024.0 ** 2
# Goals: unfused / fused time, fused / torch time, non-causal / causal fused.
GOAL_UNFUSED = 2.0
GOAL_TORCH = 0.8
GOAL_CAUSAL = 1.7
TOL = 2e-3  # max |x - ref| / max |ref|, per output

PASSES = ("fwd", "fwdbwd")
PASS_TITLE = {"fwd": "forward", "fwdbwd": "forward+backward"}
SYSTEMS = ("fused", "unfused", "torch")
SYSTEM_TITLE = {"fused": "kiln fused", "unfused": "kiln unfused (--no-fusion)",
                "torch": "PyTorch SDPA"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=None,
                   help="comma-separated sequence lengths (default 1024,4096,16384; "
                        "--quick: 256,512)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and a short time budget; the report goes to "
                        "BUILD/bench-attention-quick.md")
    p.add_argument("--threads", type=int, default=1, help="threads for every system (default 1)")
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--work-dir", default=None,
                   help="modules, inputs and outputs (default BUILD/bench-attention[-quick])")
    p.add_argument("--output", default=None,
                   help="markdown report (default bench/results-attention.md for the "
                        "default sizes, else BUILD/bench-attention[-quick].md)")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds of timed calls per measurement (default 4, quick 0.5); "
                        "at least 3 and at most 20 calls after the first")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure every system this many times, in turn, the order "
                        "reversed every other round, and report the median of the "
                        "rounds' medians (default 1): a machine whose speed drifts "
                        "then biases no system")
    p.add_argument("--max-gib", type=float, default=6.0,
                   help="skip a kiln function whose planned intermediates exceed this "
                        "(default 6)")
    p.add_argument("--ref-max", type=int, default=1024,
                   help="largest N checked against the float64 numpy reference "
                        "(default 1024)")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help="comma-separated subset of fused,unfused,torch")
    p.add_argument("--torch-worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.torch_worker:
        return args
    if args.threads < 1:
        p.error("--threads must be positive")
    if args.rounds < 1:
        p.error("--rounds must be positive")
    if args.sizes:
        try:
            args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        except ValueError:
            p.error(f"--sizes needs integers like 1024,4096, not {args.sizes!r}")
        if not args.sizes or min(args.sizes) < 1:
            p.error("--sizes needs positive integers")
    else:
        args.sizes = QUICK_SIZES if args.quick else DEFAULT_SIZES
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(args.systems) - set(SYSTEMS)
    if unknown:
        p.error(f"--systems: unknown {', '.join(sorted(unknown))}")
    if args.time_budget is None:
        args.time_budget = 0.5 if args.quick else 4.0
    build = args.build_dir
    if args.work_dir is None:
        args.work_dir = os.path.join(build, "bench-attention" + ("-quick" if args.quick else ""))
    if args.output is None:
        if not args.quick and args.sizes == DEFAULT_SIZES:
            args.output = os.path.join(HERE, "results-attention.md")
        else:
            args.output = os.path.join(build, "bench-attention" +
                                       ("-quick" if args.quick else "") + ".md")
    return args


def fmt_bytes(n):
    if n is None:
        return "-"
    if n >= GIB:
        return f"{n / GIB:.2f} GiB"
    return f"{n / MIB:.0f} MiB" if n >= 10 * MIB else f"{n / MIB:.1f} MiB"


def choose_repeat(first_seconds, budget):
    return int(max(3, min(20, budget / max(first_seconds, 1e-6))))


def pinned(threads):
    """The taskset prefix for `threads` CPUs, where it exists and fits."""
    if shutil.which("taskset") and threads <= (os.cpu_count() or 1):
        return ["taskset", "-c", f"0-{threads - 1}"]
    return []


# Starts the command in a fork of this small interpreter and reports the
# child's own rusage: a process started straight from the benchmark (vfork
# and exec) would count the benchmark's high-water mark as its own.
SPAWNER = """import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(cmd, env):
    """(exit status, stdout+stderr, peak RSS in bytes) of `cmd` as a fresh
    process: /usr/bin/time's %M (as zero_memory.py reads it), or, without
    GNU time, the rusage of a child forked by a small python. Either way the
    measured process is forked from a small one, never from this one."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "maxrss")
        if os.access("/usr/bin/time", os.X_OK):
            wrapped = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd
        else:
            wrapped = [sys.executable, "-c", SPAWNER, rss_file] + cmd
        r = subprocess.run(wrapped, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=env)
        text = r.stdout.decode(errors="replace")
        rss = None
        try:
            with open(rss_file) as f:
                rss = int(f.read().split()[-1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
    return r.returncode, text, rss


def tensor_type(shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


# ---------------------------------------------------------------------------
# The kiln modules
# ---------------------------------------------------------------------------
def function_name(causal, mode):
    return f"attn_{mode}" + ("_causal" if causal else "")


def fused_function(n, causal, mode, dtype="f32"):
    """kiln.attention (and kiln.attention_grad for fwdbwd) on [1, 8, N, 64]
    of `dtype` (the lse f32)."""
    t4 = tensor_type((BATCH, HEADS, n, HEAD_DIM), dtype)
    tl = tensor_type((BATCH, HEADS, n))
    attrs = ("{causal, " if causal else "{") + f"scale = {SCALE:.9e} : f64}}"
    name = function_name(causal, mode)
    lines = []
    if mode == "fwd":
        lines.append(f"func.func @{name}(%q: {t4}, %k: {t4}, %v: {t4}) -> ({t4}, {tl}) {{")
    else:
        lines.append(f"func.func @{name}(%q: {t4}, %k: {t4}, %v: {t4}, %do: {t4})"
                     f" -> ({t4}, {t4}, {t4}) {{")
    lines.append(f"  %o, %lse = kiln.attention %q, %k, %v {attrs} : {t4}, {t4}, {t4}")
    if mode == "fwd":
        lines.append(f"  return %o, %lse : {t4}, {tl}")
    else:
        lines.append(f"  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do "
                     f"{attrs} : {t4}, {t4}, {t4}, {t4}, {tl}")
        lines.append(f"  return %dq, %dk, %dv : {t4}, {t4}, {t4}")
    lines += ["}", ""]
    return "\n".join(lines)


def unfused_scalars(causal, mode):
    """kiln-run literals for the unfused functions' rank-0 arguments."""
    return [f"{SCALE:.9e}"] + (["-inf"] if causal else [])


def unfused_function(n, causal, mode):
    """The same computation as kiln ops on [8, N, 64] (heads as the matmul
    batch); the backward from the saved softmax P:
        dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)) * scale,
        dQ = dS K, dK = dS^T Q."""
    import kiln_ir as K
    shape4 = (BATCH, HEADS, n, HEAD_DIM)
    f = K.Function(function_name(causal, mode))
    q, k, v = (f.arg(x, shape4) for x in ("q", "k", "v"))
    do = f.arg("do", shape4) if mode == "fwdbwd" else None
    # The scale and -inf are rank-0 arguments broadcast to the scores' shape:
    # a splat constant of that shape would be folded into a global, stored
    # in the .kmod with --no-fusion (H * N * N * 4 bytes: 512 MiB at N =
    # 4096, and that much more memory to compile it).
    scale = f.arg("scale", ())
    ninf = f.arg("neg_inf", ()) if causal else None
    b = f.block
    sq = (HEADS, n, n)
    q3, k3, v3 = (b.reshape(x, (HEADS, n, HEAD_DIM)) for x in (q, k, v))
    s = b.matmul(q3, b.transpose(k3, (0, 2, 1)))
    s = b.mul(s, b.broadcast(scale, sq, []))
    if causal:
        rows = b.iota(1, sq, "i64")
        cols = b.iota(2, sq, "i64")
        above = b.compare("gt", cols, rows)
        s = b.select(above, b.broadcast(ninf, sq, []), s)
    mx = b.reduce("max", s, [2])
    e = b.unary("exp", b.sub(s, b.broadcast(mx, sq, [0, 1])))
    total = b.reduce("sum", e, [2])
    p = b.div(e, b.broadcast(total, sq, [0, 1]))
    o3 = b.matmul(p, v3)
    o = b.reshape(o3, shape4)
    if mode == "fwd":
        lse = b.add(mx, b.unary("log", total))
        return f.text([o, b.reshape(lse, (BATCH, HEADS, n))])
    do3 = b.reshape(do, (HEADS, n, HEAD_DIM))
    dv = b.matmul(b.transpose(p, (0, 2, 1)), do3)
    dp = b.matmul(do3, b.transpose(v3, (0, 2, 1)))
    rowdot = b.reduce("sum", b.mul(do3, o3), [2])
    ds = b.mul(p, b.sub(dp, b.broadcast(rowdot, sq, [0, 1])))
    ds = b.mul(ds, b.broadcast(scale, sq, []))
    dq = b.matmul(ds, k3)
    dk = b.matmul(b.transpose(ds, (0, 2, 1)), q3)
    return f.text([b.reshape(x, shape4) for x in (dq, dk, dv)])


def largest_tensor_bytes(text):
    """The bytes of the largest tensor type written in `text`."""
    sizes = {"f32": 4, "f64": 8, "i64": 8, "i32": 4, "i1": 1, "bf16": 2, "f16": 2}
    best = 0
    for dims, dtype in re.findall(r"tensor<((?:\d+x)+)(\w+)>", text):
        count = 1
        for d in dims.rstrip("x").split("x"):
            count *= int(d)
        best = max(best, count * sizes.get(dtype, 4))
    return best


class Kiln:
    def __init__(self, build_dir, work, threads):
        self.bin = os.path.join(build_dir, "bin")
        self.work = work
        self.threads = threads
        missing = [t for t in ("kiln-opt", "kiln-compile", "kiln-run")
                   if not os.access(os.path.join(self.bin, t), os.X_OK)]
        if missing:
            sys.exit(f"attention: {', '.join(missing)} not found in {self.bin}; build "
                     f"them first (ninja -C {build_dir} kiln-opt kiln-compile kiln-run) "
                     f"or point KILN_BUILD_DIR / --build-dir at a build")
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                        MKL_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
        self.decomposed = False  # kiln.attention went through kiln-opt first
        self.knows_attention = None  # whether this kiln-compile parses it

    def tool(self, name, *args, stderr=False):
        cmd = [os.path.join(self.bin, name)] + [str(a) for a in args]
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n"
                               f"{r.stdout[-2000:]}{r.stderr[-4000:]}")
        return (r.stdout, r.stderr) if stderr else r.stdout

    def prepare(self, path):
        """The file to give kiln-compile: `path` itself, or, where this
        kiln-compile does not know kiln.attention yet, `path` rewritten by
        kiln-opt --kiln-decompose-attention (the composition a backend
        without a fused kernel compiles)."""
        with open(path) as f:
            if "kiln.attention" not in f.read():
                return path
        if self.knows_attention is None:
            probe = os.path.join(self.work, "probe.mlir")
            with open(probe, "w") as f:
                f.write(fused_function(16, False, "fwd"))
            try:
                self.tool("kiln-compile", probe, "--emit=mlir", "-o", os.devnull)
                self.knows_attention = True
            except RuntimeError as exc:
                if "'kiln.attention' is unknown" not in str(exc):
                    raise
                self.knows_attention = False
        if self.knows_attention:
            return path
        out = path.rsplit(".mlir", 1)[0] + ".decomposed.mlir"
        self.tool("kiln-opt", path, "--kiln-decompose-attention", "-o", out)
        self.decomposed = True
        return out

    def memory_plan(self, source, fusion):
        """{function: bytes of its intermediates after planning}."""
        _, err = self.tool("kiln-compile", source, "--memory-report", "--emit=obj",
                           "-o", os.devnull, *([] if fusion else ["--no-fusion"]),
                           stderr=True)
        return {f: int(planned) for f, _, planned in re.findall(
            r"memory plan for @(\S+): intermediates (\d+) bytes in total, "
            r"(\d+) bytes after planning", err)}

    def compile(self, source, fusion):
        out = source.rsplit(".mlir", 1)[0] + ".kmod"
        self.tool("kiln-compile", source, "-o", out, *([] if fusion else ["--no-fusion"]))
        return out

    def run(self, module, function, inputs, out_dir, repeat):
        """(outputs, median s, min s, peak RSS bytes) of one kiln-run process."""
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        cmd = pinned(self.threads) + [os.path.join(self.bin, "kiln-run"), module,
                                      "--function", function]
        for p in inputs:
            cmd += ["--input", p]
        cmd += ["--output-dir", out_dir, "--repeat", str(repeat)]
        rc, text, rss = run_measured(cmd, self.env)
        if rc != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({rc}):\n{text[-3000:]}")
        m = re.search(r"time per call: median ([0-9.]+) us \(min ([0-9.]+) us", text)
        if not m:
            raise RuntimeError(f"kiln-run printed no timing:\n{text[-2000:]}")
        saved = re.findall(r"^(.*?): \S+ saved to (.*)$", text, re.M)
        outs = [np.load(path.strip()) for _, path in saved]
        return outs, float(m.group(1)) * 1e-6, float(m.group(2)) * 1e-6, rss


# ---------------------------------------------------------------------------
# PyTorch, in a child interpreter per measurement
# ---------------------------------------------------------------------------
def torch_python():
    """An interpreter that imports torch, or (None, why)."""
    candidates = []
    if os.environ.get("KILN_BENCH_PYTHON"):
        candidates.append(os.environ["KILN_BENCH_PYTHON"])
    venv = os.environ.get("KILN_BENCH_VENV", "/work/bench-venv")
    candidates += [os.path.join(venv, "bin", "python"), sys.executable]
    for python in candidates:
        if not os.access(python, os.X_OK):
            continue
        r = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return python, "torch " + r.stdout.strip()
    return None, "torch not importable (set KILN_BENCH_VENV or KILN_BENCH_PYTHON)"


def torch_worker(config_path):
    """Runs in the child: one measurement of SDPA, results as JSON."""
    with open(config_path) as f:
        cfg = json.load(f)
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(cfg["threads"])
    q, k, v, do = (torch.from_numpy(np.load(p)) for p in cfg["inputs"])
    causal = cfg["causal"]
    if cfg["mode"] == "fwd":
        leaves = [q, k, v]

        def call():
            with torch.no_grad():
                return [F.scaled_dot_product_attention(q, k, v, is_causal=causal)]
    else:
        leaves = [x.clone().requires_grad_(True) for x in (q, k, v)]

        def call():
            for x in leaves:
                x.grad = None
            out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
            out.backward(do)
            return [x.grad for x in leaves]
    backend = "?"
    try:
        from torch.nn.attention import SDPBackend
        backend = SDPBackend(torch._fused_sdp_choice(*leaves, is_causal=causal)).name
    except Exception:  # noqa: BLE001 - the name is informative only
        pass
    import resource
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    outs = call()
    first = time.perf_counter() - start
    for i, o in enumerate(outs):
        np.save(os.path.join(cfg["out_dir"], f"out{i}.npy"), o.detach().numpy())
    repeat = choose_repeat(first, cfg["budget"])
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    result = dict(median=float(np.median(times)), min=float(np.min(times)),
                  repeat=repeat, backend=backend, outputs=len(outs), rss_before=rss_before)
    with open(cfg["result"], "w") as f:
        json.dump(result, f)
    return 0


class Torch:
    def __init__(self, python, threads, work, budget):
        self.python, self.threads, self.work, self.budget = python, threads, work, budget
        self.env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                        MKL_NUM_THREADS=str(threads))

    def run(self, inputs, causal, mode, out_dir):
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.makedirs(out_dir)
        config = os.path.join(out_dir, "config.json")
        result = os.path.join(out_dir, "result.json")
        with open(config, "w") as f:
            json.dump(dict(threads=self.threads, inputs=inputs, causal=causal, mode=mode,
                           out_dir=out_dir, result=result, budget=self.budget), f)
        cmd = pinned(self.threads) + [self.python, os.path.abspath(__file__),
                                      "--torch-worker", config]
        rc, text, rss = run_measured(cmd, self.env)
        if rc != 0 or not os.path.exists(result):
            raise RuntimeError(f"PyTorch child failed ({rc}):\n{text[-3000:]}")
        with open(result) as f:
            r = json.load(f)
        outs = [np.load(os.path.join(out_dir, f"out{i}.npy")) for i in range(r["outputs"])]
        return outs, r["median"], r["min"], rss, r["backend"], r["rss_before"]


# ---------------------------------------------------------------------------
# Reference and checks
# ---------------------------------------------------------------------------
def reference(q, k, v, do, causal, mode):
    """float64 numpy: (o, lse) or (dq, dk, dv), in the kiln outputs' shapes."""
    q, k, v = (x[0].astype(np.float64) for x in (q, k, v))
    s = q @ k.transpose(0, 2, 1) * SCALE
    if causal:
        n = s.shape[-1]
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    p = e / total
    o = p @ v
    if mode == "fwd":
        return [o[None], (m + np.log(total))[None, ..., 0]]
    g = do[0].astype(np.float64)
    dv = p.transpose(0, 2, 1) @ g
    dp = g @ v.transpose(0, 2, 1)
    ds = p * (dp - (g * o).sum(-1, keepdims=True)) * SCALE
    return [(ds @ k)[None], (ds.transpose(0, 2, 1) @ q)[None], dv[None]]


def rel_error(outs, ref):
    """The largest max|x - r| / max|r| over the outputs both have."""
    worst = 0.0
    for x, r in zip(outs, ref):
        x = np.asarray(x, np.float64)
        r = np.asarray(r, np.float64)
        if x.shape != r.shape:
            return float("inf")
        worst = max(worst, float(np.max(np.abs(x - r)) / max(np.max(np.abs(r)), 1e-30)))
    return worst


# ---------------------------------------------------------------------------
def main(argv=None):
    args = parse_args(argv)
    if args.torch_worker:
        return torch_worker(args.torch_worker)
    sys.path.insert(0, HERE)
    import machine

    started = datetime.datetime.now(datetime.timezone.utc)
    kiln = Kiln(args.build_dir, args.work_dir, args.threads)
    if os.path.isdir(args.work_dir):
        shutil.rmtree(args.work_dir)
    os.makedirs(args.work_dir)
    work = args.work_dir
    torch = None
    torch_version = "not run (--systems)"
    if "torch" in args.systems:
        python, torch_version = torch_python()
        if python:
            torch = Torch(python, args.threads, work, args.time_budget)
    limit = args.max_gib * GIB
    available = None
    try:
        with open("/proc/meminfo") as f:
            available = int(re.search(r"MemAvailable:\s+(\d+) kB", f.read()).group(1)) * 1024
    except (OSError, AttributeError):
        pass
    if available:
        limit = min(limit, 0.8 * available)

    results = {}  # (n, causal, mode, system) -> dict
    problems = []
    configs = [(c, m) for m in PASSES for c in (False, True)]
    for n in args.sizes:
        print(f"N = {n}", flush=True)
        rng = np.random.default_rng(SEED + n)
        arrays = [rng.standard_normal((BATCH, HEADS, n, HEAD_DIM)).astype(np.float32)
                  for _ in range(4)]
        paths = []
        for name, a in zip(("q", "k", "v", "do"), arrays):
            paths.append(os.path.join(work, f"{name}.{n}.npy"))
            np.save(paths[-1], a)
        refs = {}
        if n <= args.ref_max:
            for causal, mode in configs:
                refs[(causal, mode)] = reference(*arrays, causal, mode)

        # Modules: one per variant holding the functions that fit.
        modules = {}
        for system in ("fused", "unfused"):
            if system not in args.systems:
                continue
            fusion = system == "fused"
            write = fused_function if fusion else unfused_function
            texts = {function_name(c, m): write(n, c, m) for c, m in configs}
            path = os.path.join(work, f"{system}.{n}.mlir")
            fits, plans = {}, {}
            try:
                with open(path, "w") as f:
                    f.write("\n".join(texts.values()))
                source = kiln.prepare(path)
                with open(source) as f:
                    biggest = largest_tensor_bytes(f.read())
                if biggest > limit:
                    # Not even compiled: one such buffer is already too much.
                    for name in texts:
                        fits[name] = f"does not fit (one {fmt_bytes(biggest)} tensor)"
                else:
                    plans = kiln.memory_plan(source, fusion)
                    for name in texts:
                        planned = plans.get(name)
                        if planned is not None and planned > limit:
                            fits[name] = f"does not fit ({fmt_bytes(planned)} planned)"
                kept = [name for name in texts if name not in fits]
                module = None
                if kept:
                    if len(kept) < len(texts):
                        path = os.path.join(work, f"{system}.{n}.fits.mlir")
                        with open(path, "w") as f:
                            f.write("\n".join(texts[name] for name in kept))
                        source = kiln.prepare(path)
                    module = kiln.compile(source, fusion)
                modules[system] = (module, fits, plans)
            except RuntimeError as exc:
                problems.append(f"{SYSTEM_TITLE[system]}, N = {n}: " +
                                str(exc).splitlines()[0][:300])
                print("   " + "\n   ".join(str(exc).splitlines()[:20]), flush=True)
                modules[system] = (None, {}, {})

        for causal, mode in configs:
            name = function_name(causal, mode)
            inputs = paths if mode == "fwdbwd" else paths[:3]  # the torch child reads all 4
            checked = {}
            medians = {system: [] for system in args.systems}
            repeats = {}
            for rnd in range(args.rounds):
                order = args.systems if rnd % 2 == 0 else args.systems[::-1]
                for system in order:
                    key = (n, causal, mode, system)
                    if rnd == 0:
                        results[key] = dict(time=None, min=None, rss=None, note="",
                                            outs=None)
                    row = results[key]
                    if rnd > 0 and not medians[system]:
                        continue  # not run, or failed, in the first round
                    try:
                        if system == "torch":
                            if torch is None:
                                row["note"] = "absent"
                                continue
                            outs, med, fast, rss, backend, row["rss_before"] = torch.run(
                                paths, causal, mode,
                                os.path.join(work, f"out.torch.{n}.{name}"))
                            row["note"] = backend
                        else:
                            module, fits, plans = modules.get(system, (None, {}, {}))
                            row["plan"] = plans.get(name)
                            if name in fits:
                                row["note"] = fits[name]
                                continue
                            if module is None:
                                row["note"] = "failed to compile"
                                continue
                            out_dir = os.path.join(work, f"out.{system}.{n}.{name}")
                            given = inputs + (unfused_scalars(causal, mode)
                                              if system == "unfused" else [])
                            rss = 0
                            if rnd == 0:
                                outs, first, _, rss = kiln.run(module, name, given,
                                                               out_dir, 1)
                                repeats[system] = choose_repeat(first, args.time_budget)
                            _, med, fast, rss2 = kiln.run(module, name, given, out_dir,
                                                          repeats[system])
                            rss = max(rss, rss2)
                    except RuntimeError as exc:
                        row["note"] = "failed"
                        medians[system] = []
                        problems.append(f"{SYSTEM_TITLE[system]}, N = {n}, {name}: " +
                                        "\n    ".join(str(exc).splitlines()[:12]))
                        continue
                    medians[system].append(med)
                    row.update(min=fast if row["min"] is None else min(row["min"], fast),
                               rss=rss if row["rss"] is None else max(row["rss"], rss))
                    if rnd == 0:
                        row["outs"] = outs
                        checked[system] = outs
            for system in args.systems:
                row = results[(n, causal, mode, system)]
                if medians[system]:
                    row["time"] = float(np.median(medians[system]))
                elif row["note"] == "failed":
                    row["outs"] = None
                    checked.pop(system, None)
            # Checks: against numpy where computed, else against PyTorch's
            # outputs, else against kiln unfused.
            ref, ref_name = refs.get((causal, mode)), "numpy float64"
            if ref is None:
                for other in ("torch", "unfused"):
                    if other in checked:
                        ref, ref_name = checked[other], SYSTEM_TITLE[other]
                        break
            for system in args.systems:
                row = results[(n, causal, mode, system)]
                if row.pop("outs") is None:
                    continue
                if ref is None or ref is checked.get(system):
                    row["check"] = "reference" if ref is not None else "unchecked"
                    continue
                err = rel_error(checked[system], ref)
                row["check"] = f"{err:.1e} vs {ref_name}"
                if not err <= TOL:
                    row["wrong"] = True
                    problems.append(f"{SYSTEM_TITLE[system]}, N = {n}, {name}: max rel. "
                                    f"error {err:.2e} against {ref_name} (tolerance {TOL:g})")
            line = ", ".join(
                f"{s} {fmt_time(results[(n, causal, mode, s)]['time'])}"
                + (f" ({results[(n, causal, mode, s)]['rss'] / MIB:.0f} MiB)"
                   if results[(n, causal, mode, s)]['rss'] else "")
                + (f" [{results[(n, causal, mode, s)]['note']}]"
                   if results[(n, causal, mode, s)]['note'] else "")
                for s in args.systems)
            print(f"   {name}: {line}", flush=True)

    lines = render(args, results, problems, kiln, torch_version, started, machine, limit)
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)
    print(f"attention: wrote {args.output}")
    return 1 if any(r.get("wrong") for r in results.values()) else 0


def render(args, results, problems, kiln, torch_version, started, machine, limit):
    def get(n, causal, mode, system):
        return results.get((n, causal, mode, system), {})

    def timed(row):
        return None if row.get("wrong") else row.get("time")

    def cell(row):
        if row.get("wrong"):
            return "WRONG"
        if row.get("time") is None:
            return row.get("note") or "-"
        return fmt_time(row["time"])

    cmd = "bench/attention.py" + ("" if len(sys.argv) < 2 else " " + " ".join(sys.argv[1:]))
    lines = [
        "# Attention: kiln.attention against the unfused composition and PyTorch",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {machine.cpu_model()} "
        f"({os.cpu_count()} CPUs), kiln {machine.git_revision(HERE) or 'unknown'}, "
        f"{torch_version}, with `{cmd}`; {args.threads} thread(s) per system "
        f"(taskset, OMP_NUM_THREADS, torch.set_num_threads); load average at the end "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min).",
        "",
        f"Batch {BATCH}, {HEADS} heads, head dim {HEAD_DIM}, f32, scale 1/8. Time: the "
        f"median of 3 to 20 calls after a first (warm-up) call in the same process"
        + (f", and of {args.rounds} rounds of that, the systems measured in turn and "
           f"in reverse order every other round" if args.rounds > 1 else "") + "; "
        f"kiln-run's includes allocating the outputs. The forward returns the result "
        f"(and, for kiln, the log-sum-exp); forward+backward returns dq, dk, dv for a "
        f"given cotangent. kiln unfused is the composition compiled with --no-fusion; "
        f"\"does not fit\": its planned intermediates (kiln-compile --memory-report) or "
        f"one of its tensors exceed {limit / GIB:.1f} GiB.",
    ]
    if kiln.decomposed:
        lines += ["", "**kiln fused went through the composition here**: this "
                  "kiln-compile does not know kiln.attention, so the module was "
                  "rewritten with `kiln-opt --kiln-decompose-attention` first and compiled "
                  "with fusion on; its times and memory are not those of a fused kernel."]
    lines += [
        "",
        "## Time per call",
        "",
        f"| N | mask | pass | kiln fused | kiln unfused | PyTorch SDPA | fused / unfused "
        f"(goal <= {1 / GOAL_UNFUSED:g}) | fused / PyTorch (goal <= {GOAL_TORCH:g}) | "
        f"PyTorch backend | check (max rel. error) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    goals = []  # (text, met or None)
    for n in args.sizes:
        for mode in PASSES:
            for causal in (False, True):
                f, u, t = (get(n, causal, mode, s) for s in SYSTEMS)
                tf, tu, tt = timed(f), timed(u), timed(t)
                speed = f"{tf / tu:.2f}" if tf and tu else "-"
                vs = f"{tf / tt:.2f}" if tf and tt else "-"
                what = f"N = {n}, {'causal' if causal else 'no mask'}, {PASS_TITLE[mode]}"
                if "fused" in args.systems and "unfused" in args.systems and u.get("time") is not None:
                    goals.append((f"{what}: fused / unfused {speed}, fused "
                                  f"{f'{tu / tf:.2f}x' if tf and tu else '-'} as fast "
                                  f"(>= {GOAL_UNFUSED:g}x)",
                                  bool(tf and tu and tu / tf >= GOAL_UNFUSED)))
                if "fused" in args.systems and t.get("time") is not None:
                    goals.append((f"{what}: fused / PyTorch {vs} (<= {GOAL_TORCH:g})",
                                  bool(tf and tt and tf / tt <= GOAL_TORCH)))
                checks = "; ".join(f"{s}: {r['check']}" for s, r in
                                   (("fused", f), ("unfused", u), ("torch", t))
                                   if r.get("check"))
                backend = t.get("note", "-") if t.get("time") is not None else "-"
                lines.append(f"| {n} | {'causal' if causal else 'none'} | {PASS_TITLE[mode]} | "
                             f"{cell(f)} | {cell(u)} | {cell(t)} | {speed} | {vs} | "
                             f"{backend} | {checks or '-'} |")
    if "fused" in args.systems:
        lines += [
            "",
            "## Causal against non-causal, kiln fused",
            "",
            f"| N | pass | no mask | causal | speedup (goal >= {GOAL_CAUSAL:g}) | "
            f"PyTorch's speedup |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for n in args.sizes:
            for mode in PASSES:
                a, c = timed(get(n, False, mode, "fused")), timed(get(n, True, mode, "fused"))
                ta, tc = timed(get(n, False, mode, "torch")), timed(get(n, True, mode, "torch"))
                s = a / c if a and c else None
                lines.append(f"| {n} | {PASS_TITLE[mode]} | {fmt_time(a)} | {fmt_time(c)} | "
                             f"{'-' if s is None else f'{s:.2f}x'} | "
                             f"{f'{ta / tc:.2f}x' if ta and tc else '-'} |")
                goals.append((f"N = {n}, {PASS_TITLE[mode]}: causal fused "
                              f"{'-' if s is None else f'{s:.2f}x'} faster than non-causal "
                              f"(>= {GOAL_CAUSAL:g})", bool(s and s >= GOAL_CAUSAL)))
    lines += [
        "",
        "## Peak memory",
        "",
        "Peak RSS: the high-water mark of the measuring process (kiln-run, or the "
        "PyTorch child: the interpreter and libtorch included), the larger of the "
        "checked run and the timed run for kiln. Plan: kiln-compile --memory-report, "
        "the function's intermediates after planning. One score matrix: "
        f"{HEADS} x N x N f32. Growth: against the previous N's row (x{{N ratio}} "
        "for memory linear in N, its square for quadratic).",
        "",
        "| N | mask | pass | kiln fused RSS | plan | kiln unfused RSS | plan | PyTorch RSS | "
        "one score matrix | RSS growth: fused, unfused, PyTorch |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for mode in PASSES:
        for causal in (False, True):
            prev = None
            for n in args.sizes:
                f, u, t = (get(n, causal, mode, s) for s in SYSTEMS)
                growth = "-"
                if prev:
                    pn, prow = prev
                    growth = f"N x{n / pn:g}: " + ", ".join(
                        f"x{cur['rss'] / old['rss']:.2f}" if cur.get("rss") and old.get("rss")
                        else "-" for cur, old in zip((f, u, t), prow))
                torch_rss = fmt_bytes(t.get("rss"))
                if t.get("rss") and t.get("rss_before"):
                    torch_rss += f" ({fmt_bytes(t['rss_before'])} before the first call)"
                lines.append(
                    f"| {n} | {'causal' if causal else 'none'} | {PASS_TITLE[mode]} | "
                    f"{fmt_bytes(f.get('rss')) if f.get('rss') else (f.get('note') or '-')} | "
                    f"{fmt_bytes(f.get('plan'))} | "
                    f"{fmt_bytes(u.get('rss')) if u.get('rss') else (u.get('note') or '-')} | "
                    f"{fmt_bytes(u.get('plan'))} | {torch_rss} | "
                    f"{fmt_bytes(HEADS * n * n * 4)} | {growth} |")
                prev = (n, (f, u, t))
    met = sum(1 for _, ok in goals if ok)
    lines += ["", f"## Goals: {met} of {len(goals)} met", ""]
    lines += [f"- {'met' if ok else 'MISSED'}: {text}" for text, ok in goals]
    if problems:
        lines += ["", "## Problems", ""] + [f"- {p}" for p in problems]
    return lines


if __name__ == "__main__":
    sys.exit(main())
