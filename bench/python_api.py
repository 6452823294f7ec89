#!/usr/bin/env python3
"""The Python front end (kiln.jit) measured against kiln-run and jax.jit.

Three parts, each in its own table of the markdown report:

  1. dispatch: the time of a cached kiln.jit call from Python (f(x, y) =
     x + y on float32[4]) against jax.jit's (with .block_until_ready()),
     interleaved in the same process: rounds of many calls each, the median
     and 10th/90th percentiles of the rounds' per-call times; the same with a
     non-contiguous input (kiln copies it) and with a Python float
     argument; and the zero-copy check: f(x) = x[0:1] * 2 on a 1 KiB and a
     64 MiB C-contiguous float32 input (a copy of 64 MiB would show).
  2. workloads: the MLP training step, transformer layer, RNN
     forward+backward and while-loop solver of workloads.py, written in
     Python once over a small namespace (kiln.numpy/kiln.value_and_grad/
     kiln.scan/kiln.while_loop, or jax.numpy/jax.value_and_grad/lax.scan/
     lax.while_loop), checked against workloads.py's float64 numpy
     reference, then timed through kiln.jit, through kiln-run on the
     workload's own IR (compiled by kiln-compile, as bench.py does), through
     kiln-run on the IR the Python tracer produced, and through jax.jit.
  3. compile: the first call of the MLP training step from Python (trace +
     compile + load + run; kiln.jit's last_trace_seconds and
     last_compile_seconds), against JAX's first call of the same function.

Run it with the benchmark virtualenv (jax is optional; without it the JAX
columns read "absent"):

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/python_api.py \
      --markdown bench/results-python.md
  ... bench/python_api.py --quick          # small sizes, few rounds

The process pins itself to the first --threads CPUs it may use (default 1)
and sets OMP_NUM_THREADS and XLA's thread flags before kiln or jax load.
"""

import argparse
import datetime
import gc
import itertools
import math
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1,
                   help="threads for kiln and JAX; the process is pinned to "
                        "that many CPUs (default 1)")
    p.add_argument("--quick", action="store_true",
                   help="small workload sizes, few rounds and calls")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--work-dir", default=None,
                   help="modules, .npy files and IR dumps (default "
                        "BUILD/bench-python[-quick])")
    p.add_argument("--markdown", default=None, help="markdown file to write")
    p.add_argument("--only", default="dispatch,workloads,compile",
                   help="comma-separated parts: dispatch, workloads, compile "
                        "(default all)")
    p.add_argument("--workloads", default="mlp_train,transformer,rnn_grad,"
                   "rnn_grad_fori,while_solver",
                   help="comma-separated workload names (rnn_grad_fori: the RNN "
                        "written with fori_loop and xs[i] instead of scan)")
    p.add_argument("--rounds", type=int, default=None,
                   help="dispatch rounds (default 20, quick 5)")
    p.add_argument("--calls", type=int, default=None,
                   help="calls per dispatch round (default 10000, quick 1000)")
    p.add_argument("--workload-rounds", type=int, default=None,
                   help="interleaved rounds per workload (default 11, quick 2)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of calls per system per workload round "
                        "(default 0.6, quick 0.2)")
    p.add_argument("--no-jax", action="store_true", help="leave JAX out")
    return p.parse_args()


ARGS = parse_args()

# Threads and CPUs before anything starts a thread pool.
sys.path.insert(0, HERE)
import machine  # noqa: E402

machine.pin_threads(ARGS.threads)
LOAD_START = os.getloadavg()
DATE_START = datetime.datetime.now(datetime.timezone.utc)

import numpy as np  # noqa: E402

try:
    import kiln  # noqa: E402
except ImportError:
    sys.path.insert(0, os.path.join(ARGS.build_dir, "python"))
    import kiln  # noqa: E402
import kiln.nn  # noqa: E402
import kiln.numpy as knp  # noqa: E402

import bench as B  # noqa: E402  (Kiln: kiln-opt/compile/run as bench.py drives them)
import workloads as W  # noqa: E402

jax = None
if not ARGS.no_jax:
    try:
        import jax  # noqa: E402
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp  # noqa: E402
        from jax import lax  # noqa: E402
    except Exception as exc:  # noqa: BLE001 - absent JAX is reported, not fatal
        JAX_ABSENT = f"{type(exc).__name__}: {exc}"
        jax = None
    else:
        JAX_ABSENT = None
else:
    JAX_ABSENT = "--no-jax"

SEED = 20261122
NOTES = []  # problems and workarounds, printed under the tables


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
def fmt(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def pct(values, q):
    return float(np.percentile(values, q)) if values else None


def as_list(outs):
    return list(outs) if isinstance(outs, (tuple, list)) else [outs]


def loadavg():
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------------------
# 1. Dispatch overhead and zero-copy
# ---------------------------------------------------------------------------
def add(x, y):
    return x + y


def first_times_two(x):
    return x[0:1] * 2.0


def loop_timer(fn, args, block):
    """A function of n: seconds per call over n calls of fn(*args) (with
    .block_until_ready() on the result for JAX)."""
    a = tuple(args)
    if block:
        def run(n):
            f = fn
            start = time.perf_counter()
            for _ in itertools.repeat(None, n):
                f(*a).block_until_ready()
            return (time.perf_counter() - start) / n
    elif len(a) == 2:
        def run(n):
            f, x, y = fn, a[0], a[1]
            start = time.perf_counter()
            for _ in itertools.repeat(None, n):
                f(x, y)
            return (time.perf_counter() - start) / n
    else:
        def run(n):
            f = fn
            start = time.perf_counter()
            for _ in itertools.repeat(None, n):
                f(*a)
            return (time.perf_counter() - start) / n
    return run


def interleave(cases, rounds, calls):
    """{name: [seconds per call, one per round]}: every round runs every
    case (calls[name] calls), in an order rotated each round."""
    times = {name: [] for name, _ in cases}
    for r in range(rounds):
        gc.collect()
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for name, run in order:
            times[name].append(run(calls[name]))
    return times


def dispatch_part(report):
    rounds = ARGS.rounds or (5 if ARGS.quick else 20)
    calls = ARGS.calls or (1000 if ARGS.quick else 10000)
    x = np.arange(4, dtype=np.float32)
    y = np.full(4, 0.5, dtype=np.float32)
    strided = np.arange(8, dtype=np.float32)[::2]  # float32[4], stride 8 bytes
    assert not strided.flags.c_contiguous

    kf = kiln.jit(add)
    cases = [("kiln", "f(x, y): float32[4] numpy arrays", kf, (x, y), False)]
    cases.append(("kiln", "f(x_strided, y): x non-contiguous (copied)", kf,
                  (strided, y), False))
    cases.append(("kiln", "f(x, 2.0): Python float argument", kf, (x, 2.0), False))
    cases.append(("kiln", "f(1.0, 2.0): two Python floats", kf, (1.0, 2.0), False))
    # The cost per argument: the same kind of call with one and four arrays.
    cases.append(("kiln", "g(x) = x * 2: one float32[4] array",
                  kiln.jit(lambda a: a * 2.0, name="one_arg"), (x,), False))
    cases.append(("kiln", "h(x, y, x, y) = sum of four float32[4] arrays",
                  kiln.jit(lambda a, b, c, d: a + b + c + d, name="four_args"),
                  (x, y, x, y), False))
    if jax:
        jf = jax.jit(add)
        jx, jy = jax.device_put(x), jax.device_put(y)
        cases.append(("jax.jit", "f(x, y): float32[4] jax arrays (on device)", jf,
                      (jx, jy), True))
        cases.append(("jax.jit", "f(x, y): float32[4] numpy arrays", jf, (x, y), True))
        cases.append(("jax.jit", "f(x_strided, y): x non-contiguous numpy", jf,
                      (strided, y), True))
        cases.append(("jax.jit", "f(x, 2.0): Python float argument", jf,
                      (jx, 2.0), True))
        cases.append(("jax.jit", "f(1.0, 2.0): two Python floats", jf, (1.0, 2.0),
                      True))
    cases.append(("numpy", "np.add(x, y) (for scale)", np.add, (x, y), False))
    cases.append(("Python", "a no-op Python function g(x, y) (loop floor)",
                  lambda a, b: None, (x, y), False))

    # Warm up (traces and compiles every signature) and check the results.
    want = {(x.ctypes.data, y.ctypes.data): x + y}
    for system, label, fn, args, block in cases:
        out = fn(*args)
        if system in ("kiln", "jax.jit"):
            if block:
                out.block_until_ready()
            got = np.asarray(out)
            vals = [np.asarray(a, np.float32) for a in args]
            exp = vals[0] * 2 if len(vals) == 1 else sum(vals[1:], vals[0])
            if not np.array_equal(got, exp):
                NOTES.append(f"dispatch case `{label}` ({system}) returned {got}, "
                             f"expected {exp}")
    del want
    timers = [(f"{s}|{label}", loop_timer(fn, args, block))
              for s, label, fn, args, block in cases]
    print(f"== dispatch: {rounds} rounds x {calls} calls", flush=True)
    times = interleave(timers, rounds, {name: calls for name, _ in timers})
    rows = []
    for name, _ in timers:
        system, label = name.split("|", 1)
        t = times[name]
        rows.append((system, label, pct(t, 50), pct(t, 10), pct(t, 90)))
        print(f"   {system:8s} {label}: median {fmt(pct(t, 50))}", flush=True)
    report["dispatch"] = {"rows": rows, "rounds": rounds, "calls": calls}

    # Zero copy: the call time on a 64 MiB input against a 1 KiB one.
    small = np.arange(256, dtype=np.float32)
    big = np.arange(16 << 20, dtype=np.float32)
    backing = np.arange(32 << 20, dtype=np.float32)
    big_strided = backing[::2]  # float32[16M], not contiguous: kiln copies it
    for a in (small, big):
        assert a.flags.c_contiguous and a.flags.aligned
    kz = kiln.jit(first_times_two)
    zcases = [("kiln", "1 KiB (float32[256])", kz, (small,), False, 5000),
              ("kiln", "64 MiB (float32[16M])", kz, (big,), False, 5000),
              ("kiln", "64 MiB, non-contiguous (every 2nd of 128 MiB)", kz,
               (big_strided,), False, 5)]
    if jax:
        jz = jax.jit(first_times_two)
        zcases += [("jax.jit", "1 KiB numpy", jz, (small,), True, 5000),
                   ("jax.jit", "64 MiB numpy", jz, (big,), True, 50),
                   ("jax.jit", "64 MiB jax array (on device)", jz,
                    (jax.device_put(big),), True, 5000)]
    copy_dst = np.empty_like(big)
    zcases.append(("numpy", "np.copyto of 64 MiB (what a copy costs)",
                   np.copyto, (copy_dst, big), False, 20))
    for system, label, fn, args, block, _ in zcases:
        out = fn(*args)
        if system in ("kiln", "jax.jit"):
            if block:
                out.block_until_ready()
            got = np.asarray(out)
            if not np.array_equal(got, np.asarray(args[0][0:1]) * 2):
                NOTES.append(f"zero-copy case `{label}` ({system}) returned {got}")
    ztimers = [(f"{s}|{label}", loop_timer(fn, args, block))
               for s, label, fn, args, block, _ in zcases]
    zcalls = {f"{s}|{label}": n for s, label, _, _, _, n in zcases}
    zrounds = max(3, rounds // 2)
    print(f"== zero-copy: {zrounds} rounds", flush=True)
    ztimes = interleave(ztimers, zrounds, zcalls)
    zrows = []
    for name, _ in ztimers:
        system, label = name.split("|", 1)
        t = ztimes[name]
        zrows.append((system, label, pct(t, 50), pct(t, 10), pct(t, 90), zcalls[name]))
        print(f"   {system:8s} {label}: median {fmt(pct(t, 50))}", flush=True)
    report["zero_copy"] = {"rows": zrows, "rounds": zrounds}


# ---------------------------------------------------------------------------
# 2. The workloads, written once over a namespace of numpy-like functions
# ---------------------------------------------------------------------------
class Namespace:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def kiln_ns():
    return Namespace(name="kiln", np=knp, jit=kiln.jit,
                     value_and_grad=kiln.value_and_grad, scan=kiln.scan,
                     while_loop=kiln.while_loop, fori_loop=kiln.fori_loop,
                     layer_norm=kiln.nn.layer_norm,
                     relu=kiln.nn.relu)


def jax_ns():
    def layer_norm(x, gamma, beta, eps=1e-5):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        var = jnp.mean(centered * centered, axis=-1, keepdims=True)
        return centered * lax.rsqrt(var + eps) * gamma + beta
    return Namespace(name="jax", np=jnp, jit=jax.jit,
                     value_and_grad=jax.value_and_grad, scan=lax.scan,
                     while_loop=lax.while_loop, fori_loop=lax.fori_loop,
                     layer_norm=layer_norm,
                     relu=jax.nn.relu)


def mlp_step_fn(ns, wl):
    """One SGD step: loss and the updated parameters (the workload's
    train_step: ReLU MLP, softmax cross-entropy with a one-hot mask)."""
    np_, lr = ns.np, wl.lr

    def loss_fn(params, x, labels):
        w1, b1, w2, b2, w3, b3 = params
        h = ns.relu(x @ w1 + b1)
        h = ns.relu(h @ w2 + b2)
        z = h @ w3 + b3
        zc = z - np_.max(z, axis=1, keepdims=True)
        logp = zc - np_.log(np_.sum(np_.exp(zc), axis=1, keepdims=True))
        onehot = (np_.arange(z.shape[1]) == labels[:, None]).astype(np_.float32)
        return -np_.sum(onehot * logp) * (1.0 / x.shape[0])

    def train_step(w1, b1, w2, b2, w3, b3, x, labels):
        params = (w1, b1, w2, b2, w3, b3)
        loss, grads = ns.value_and_grad(loss_fn)(params, x, labels)
        return (loss,) + tuple(p - lr * g for p, g in zip(params, grads))
    return train_step


def transformer_fn(ns, wl):
    np_ = ns.np
    Bn, S, D, H = wl.b, wl.s, wl.d, wl.h
    hd = D // H

    def encoder_layer(x, wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2, b2,
                      g2, be2):
        x2 = x.reshape(Bn * S, D)

        def heads(v):  # [rows, D] -> [B*H, S, hd]
            return v.reshape(Bn, S, H, hd).transpose(0, 2, 1, 3).reshape(Bn * H, S, hd)
        q, k, v = heads(x2 @ wq + bq), heads(x2 @ wk + bk), heads(x2 @ wv + bv)
        s = (q @ k.transpose(0, 2, 1)) * (1.0 / math.sqrt(hd))
        e = np_.exp(s - np_.max(s, axis=2, keepdims=True))
        a = e / np_.sum(e, axis=2, keepdims=True)
        ctx = (a @ v).reshape(Bn, H, S, hd).transpose(0, 2, 1, 3).reshape(Bn * S, D)
        h1 = ns.layer_norm(x2 + (ctx @ wo + bo), g1, be1)
        ff = ns.relu(h1 @ w1 + b1) @ w2 + b2
        return ns.layer_norm(h1 + ff, g2, be2).reshape(Bn, S, D)
    return encoder_layer


def _rnn_value_and_grads(ns, loss_fn):
    """(wx, wh, b, xs, h0) -> (loss, dwx, dwh, db): the workload's
    signature around value_and_grad of loss_fn((wx, wh, b), xs, h0)."""
    def rnn_loss_value_and_grad(wx, wh, b, xs, h0):
        loss, grads = ns.value_and_grad(loss_fn)((wx, wh, b), xs, h0)
        return (loss,) + tuple(grads)
    return rnn_loss_value_and_grad


def rnn_fn(ns, wl):
    """Loss and d(loss)/d(wx, wh, b) of the tanh RNN, the steps by scan."""
    np_ = ns.np
    scale = 1.0 / (wl.t * wl.batch * wl.hdim)

    def loss_fn(params, xs, h0):
        wx, wh, b = params

        def step(carry, x):
            h, acc = carry
            h = np_.tanh(x @ wx + h @ wh + b)
            return (h, acc + np_.sum(h * h)), None
        (_, acc), _ = ns.scan(step, (h0, np_.zeros((), np_.float32)), xs)
        return acc * scale
    return _rnn_value_and_grads(ns, loss_fn)


def rnn_fori_fn(ns, wl):
    """The same RNN with the steps by fori_loop and xs[i] (a traced
    index), as the workload IR's kiln.for with a dynamic_slice."""
    np_ = ns.np
    scale = 1.0 / (wl.t * wl.batch * wl.hdim)

    def loss_fn(params, xs, h0):
        wx, wh, b = params

        def body(i, carry):
            h, acc = carry
            h = np_.tanh(xs[i] @ wx + h @ wh + b)
            return h, acc + np_.sum(h * h)
        _, acc = ns.fori_loop(0, wl.t, body, (h0, np_.zeros((), np_.float32)))
        return acc * scale
    return _rnn_value_and_grads(ns, loss_fn)


def while_fn(ns, wl):
    np_ = ns.np

    def fixed_point(x0, c):
        def residual(x):
            return c * np_.cos(x) - x

        def cond(state):
            x, it = state
            return (np_.max(np_.abs(residual(x))) >= wl.tol_residual) & \
                (it < wl.max_iters)

        def body(state):
            x, it = state
            return x + wl.step * residual(x), it + 1
        return ns.while_loop(cond, body, (x0, np_.zeros((), np_.int32)))
    return fixed_point


# name: (workload, Python function, how the Python version is written)
PY_FUNCTIONS = {"mlp_train": ("mlp_train", mlp_step_fn, ""),
                "transformer": ("transformer", transformer_fn, ""),
                "rnn_grad": ("rnn_grad", rnn_fn, "Python: scan"),
                "rnn_grad_fori": ("rnn_grad", rnn_fori_fn,
                                  "Python: fori_loop, xs[i]"),
                "while_solver": ("while_solver", while_fn, "")}


def op_histogram(text):
    """{op name: count} of the kiln and func ops in an IR text."""
    counts = {}
    for op in re.findall(r"=\s*\"?((?:kiln|arith|tensor|scf)\.[a-z_]+)", text):
        counts[op] = counts.get(op, 0) + 1
    return counts


def ir_difference(workload_text, python_text):
    a, b = op_histogram(workload_text), op_histogram(python_text)
    diffs = []
    for op in sorted(set(a) | set(b)):
        if a.get(op, 0) != b.get(op, 0):
            diffs.append(f"{op} {a.get(op, 0)}->{b.get(op, 0)}")
    total = (sum(a.values()), sum(b.values()))
    return total, diffs


FOLD = "kiln-run (Python IR, keepdims folded)"
_ELEMENTWISE = {"add", "sub", "mul", "div", "max", "min", "neg", "exp", "log",
                "rsqrt", "sqrt", "tanh", "abs"}


def fold_unit_reshapes(text):
    """A diagnostic rewrite of the Python tracer's IR: numpy's keepdims
    reductions trace as reduce -> reshape [S] to [S, 1] -> (elementwise ops
    on [S, 1]) -> broadcast_in_dim, where the workload IR broadcasts the
    reduced [S] value directly. This rewrites each such chain into the
    workload IR's form (the ops on [S] values, broadcast_in_dim without the
    unit dimension) and returns (text, chains folded); (text, 0) when a
    unit-dimension value has another kind of use."""
    lines = text.split("\n")
    reshape = re.compile(r"^\s*(%\w+) = kiln\.reshape (%\w+) : "
                         r"\(tensor<([\dx]+)x(\w+)>\) -> tensor<\3x1x\4>$")
    alias, folded, units = {}, set(), {}
    for line in lines:
        m = reshape.match(line)
        if m:
            alias[m.group(1)] = m.group(2)
            folded.add(m.group(1))
            units[f"tensor<{m.group(3)}x1x{m.group(4)}>"] = \
                f"tensor<{m.group(3)}x{m.group(4)}>"
    if not folded:
        return text, 0
    out, chains = [], 0
    for line in lines:
        if reshape.match(line):
            out.append(line)
            continue
        m = re.match(r"^(\s*)(%\w+) = kiln\.(\w+) (.*) : (.*)$", line)
        uses = set(re.findall(r"%\w+", line.split("=", 1)[1])) if m else set()
        if m and m.group(3) == "constant" and m.group(5) in units and \
                "[" not in m.group(4):
            out.append(line.replace(m.group(5), units[m.group(5)]))
            folded.add(m.group(2))
            continue
        if not uses & (folded | set(alias)):
            out.append(line)
            continue
        if not m:
            return text, 0
        indent, result, op, operands, types = m.groups()
        for old, new in alias.items():
            operands = re.sub(re.escape(old) + r"\b", new, operands)
        back = re.match(r"^\((tensor<[^>]+>)\) -> (tensor<[^>]+>)$", types)
        if op == "reshape" and back and units.get(back.group(1)) == back.group(2) \
                and uses <= folded:
            alias[result] = operands.strip()  # [S, 1] back to [S]: the value itself
            continue
        if not uses & folded:
            out.append(f"{indent}{result} = kiln.{op} {operands} : {types}")
            continue
        if op == "broadcast_in_dim":
            d = re.match(r"^(%\w+), dims = \[([\d, ]*)\]$", operands)
            t = re.match(r"^\((tensor<[^>]+>)\) -> (tensor<[^>]+>)$", types)
            if not d or not t or t.group(1) not in units:
                return text, 0
            dims = [int(v) for v in d.group(2).split(",")]
            if dims != list(range(len(dims))):
                return text, 0
            out.append(f"{indent}{result} = kiln.broadcast_in_dim {d.group(1)}, "
                       f"dims = [{', '.join(map(str, dims[:-1]))}] : "
                       f"({units[t.group(1)]}) -> {t.group(2)}")
            chains += 1
        elif op in _ELEMENTWISE and types in units and uses <= folded:
            out.append(f"{indent}{result} = kiln.{op} {operands} : {units[types]}")
            folded.add(result)
        else:
            return text, 0
    return "\n".join(out), chains


def time_calls(fn, args, n, block=False):
    """Median and min seconds of n single calls (after the warm-up the
    caller did)."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        out = fn(*args)
        if block:
            jax.block_until_ready(out)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), float(np.min(times))


class RetryingKiln(B.Kiln):
    """bench.py's driver of the kiln tools, waiting out a rebuild: on a
    shared checkout a tool can be missing or half-written for a while."""

    def tool(self, name, *args, stderr=False):
        for attempt in range(5):
            try:
                return super().tool(name, *args, stderr=stderr)
            except (OSError, RuntimeError) as exc:
                if attempt == 4:
                    raise
                print(f"   {name} failed ({str(exc).splitlines()[0][:100]}); "
                      f"retrying in 30 s", flush=True)
                time.sleep(30)


def workloads_part(report):
    work = ARGS.work_dir or os.path.join(
        ARGS.build_dir, "bench-python-quick" if ARGS.quick else "bench-python")
    os.makedirs(work, exist_ok=True)
    tools = RetryingKiln(ARGS.build_dir, work, ARGS.threads)
    # Many short rounds rather than a few long ones: on a shared host the
    # other processes' load then falls on every system alike.
    rounds = ARGS.workload_rounds or (2 if ARGS.quick else 11)
    budget = ARGS.budget or (0.2 if ARGS.quick else 0.6)
    wanted = ARGS.workloads.split(",")
    all_wls = {w.name: w for w in W.all_workloads(ARGS.quick)}
    rows, irs, compile_info = [], [], {}
    for name in wanted:
        wl_name, builder, how = PY_FUNCTIONS[name]
        wl = all_wls[wl_name]
        print(f"== {wl.title}: {wl.desc} {how}", flush=True)
        ins = wl.inputs(np.random.default_rng(SEED))
        expected = wl.reference(ins)
        B.check_rejects_wrong_outputs(wl, expected, ins)
        paths = []
        for i, v in enumerate(ins):
            paths.append(os.path.join(work, f"{wl.name}.in{i}.npy"))
            np.save(paths[-1], v)
        title = wl.title + (f" [{how}]" if how else "")
        row = {"title": f"{title} ({wl.desc})", "short": title, "name": name}

        # kiln-run on the workload's IR, as bench.py runs it.
        source = tools.source(wl)
        module, (cwall, _) = tools.compile(source, True)
        compile_info[wl.name] = cwall
        outs, _ = tools.run(module, wl, paths, os.path.join(work, f"{wl.name}.out"), 1)
        err, ok = B.check(wl, outs, expected, ins)
        row["kiln-run check"] = (err, ok)

        # kiln.jit on the Python function.
        fn = builder(kiln_ns(), wl)
        jitted = kiln.jit(fn)
        py_text = jitted.lower(*ins).as_text()
        start = time.perf_counter()
        outs = as_list(jitted(*ins))
        row["kiln.jit first call"] = time.perf_counter() - start
        row["trace"], row["compile"] = jitted.last_trace_seconds, jitted.last_compile_seconds
        err, ok = B.check(wl, [np.asarray(o) for o in outs], expected, ins)
        row["kiln.jit check"] = (err, ok)

        # kiln-run on the Python tracer's IR (same compiler, same options as
        # kiln.jit): separates what the IR costs from what the call path costs.
        py_path = os.path.join(work, f"{name}.python.mlir")
        with open(py_path, "w") as f:
            f.write(py_text)
        py_fn = re.search(r"func\.func @([\w$.]+)\(", py_text).group(1)
        py_module, _ = tools.compile(py_path, True)

        class PyWl:
            function = py_fn
        outs, _ = tools.run(py_module, PyWl, paths, os.path.join(work, f"{wl.name}.pyout"), 1)
        err, ok = B.check(wl, outs, expected, ins)
        row["kiln-run (Python IR) check"] = (err, ok)
        with open(source) as f:
            wl_text = f.read()
        # The diagnostic: the Python IR with its keepdims chains in the
        # workload IR's form (fold_unit_reshapes), when it has any.
        folded_text, chains = fold_unit_reshapes(py_text)
        fold_module = None
        if chains:
            fold_path = os.path.join(work, f"{name}.python-folded.mlir")
            with open(fold_path, "w") as f:
                f.write(folded_text)
            fold_module, _ = tools.compile(fold_path, True)
            outs, _ = tools.run(fold_module, PyWl, paths,
                                os.path.join(work, f"{wl.name}.foldout"), 1)
            err, ok = B.check(wl, outs, expected, ins)
            row[FOLD + " check"] = (err, ok)
            if not ok:
                fold_module = None
        irs.append((title, os.path.relpath(source, ROOT), os.path.relpath(py_path, ROOT),
                    *ir_difference(wl_text, py_text), chains))

        # JAX on the same Python function.
        jfn = jargs = None
        if jax:
            jfn = jax.jit(builder(jax_ns(), wl))
            jargs = [jax.device_put(v) for v in ins]
            jouts = jfn(*jargs)
            jax.block_until_ready(jouts)
            err, ok = B.check(wl, [np.asarray(o) for o in as_list(jouts)], expected, ins)
            row["jax check"] = (err, ok)
            if not ok:
                jfn = None

        # Interleaved rounds: kiln-run --repeat N, N kiln.jit calls, N JAX calls.
        start = time.perf_counter()
        jitted(*ins)
        first = time.perf_counter() - start
        n = int(max(5, min(200, budget / max(first, 1e-6))))
        systems = ["kiln-run (workload IR)", "kiln-run (Python IR)", "kiln.jit"]
        if fold_module:
            systems.insert(2, FOLD)
        if jfn is not None:
            systems.append("jax.jit")
        samples = {s: [] for s in systems}
        mins = {s: [] for s in systems}
        for r in range(rounds):
            for s in systems[r % len(systems):] + systems[:r % len(systems)]:
                if s == "kiln-run (workload IR)":
                    _, (med, low) = tools.run(module, wl, paths,
                                              os.path.join(work, f"{wl.name}.out"), n)
                elif s == "kiln-run (Python IR)":
                    _, (med, low) = tools.run(py_module, PyWl, paths,
                                              os.path.join(work, f"{wl.name}.pyout"), n)
                elif s == FOLD:
                    _, (med, low) = tools.run(fold_module, PyWl, paths,
                                              os.path.join(work, f"{wl.name}.foldout"), n)
                elif s == "kiln.jit":
                    gc.collect()
                    med, low = time_calls(jitted, ins, n)
                else:
                    gc.collect()
                    jfn(*jargs)
                    med, low = time_calls(jfn, jargs, n, block=True)
                samples[s].append(med)
                mins[s].append(low)
        row["calls"] = n
        row["rounds"] = rounds
        row["times"] = {s: (float(np.median(samples[s])), float(np.min(mins[s])),
                            samples[s]) for s in systems}
        base = row["times"]["kiln-run (workload IR)"][0]
        for s in systems:
            print(f"   {s}: {fmt(row['times'][s][0])} "
                  f"(x{row['times'][s][0] / base:.3f} of kiln-run; fastest "
                  f"{fmt(row['times'][s][1])}; rounds "
                  f"{', '.join(fmt(x) for x in samples[s])})", flush=True)
        rows.append(row)
    report["workloads"] = {"rows": rows, "irs": irs, "compile": compile_info,
                           "work": os.path.relpath(work, ROOT)}


# ---------------------------------------------------------------------------
# 3. Trace + compile time of the MLP training step
# ---------------------------------------------------------------------------
def compile_part(report):
    wl = W.MlpTrain(ARGS.quick)
    ins = wl.inputs(np.random.default_rng(SEED))
    rounds = 2 if ARGS.quick else 5
    rows = {k: [] for k in ("kiln first call", "kiln trace", "kiln compile",
                            "kiln rest", "jax first call", "jax trace+lower",
                            "jax compile")}
    print(f"== compile: MLP train step, {rounds} rounds", flush=True)
    for r in range(rounds):
        order = ["kiln", "jax"] if r % 2 == 0 else ["jax", "kiln"]
        for system in order:
            gc.collect()
            if system == "kiln":
                jitted = kiln.jit(mlp_step_fn(kiln_ns(), wl))  # a fresh cache
                start = time.perf_counter()
                outs = as_list(jitted(*ins))
                total = time.perf_counter() - start
                rows["kiln first call"].append(total)
                rows["kiln trace"].append(jitted.last_trace_seconds)
                rows["kiln compile"].append(jitted.last_compile_seconds)
                rows["kiln rest"].append(total - jitted.last_trace_seconds -
                                         jitted.last_compile_seconds)
            elif jax:
                jax.clear_caches()
                f = jax.jit(mlp_step_fn(jax_ns(), wl))
                start = time.perf_counter()
                outs = f(*ins)
                jax.block_until_ready(outs)
                rows["jax first call"].append(time.perf_counter() - start)
                jax.clear_caches()
                f = jax.jit(mlp_step_fn(jax_ns(), wl))
                start = time.perf_counter()
                lowered = f.lower(*ins)
                mid = time.perf_counter()
                lowered.compile()
                rows["jax trace+lower"].append(mid - start)
                rows["jax compile"].append(time.perf_counter() - mid)
    report["compile"] = {k: v for k, v in rows.items() if v}
    report["compile_rounds"] = rounds
    for k, v in report["compile"].items():
        print(f"   {k}: {fmt(float(np.median(v)))}", flush=True)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
def render(report, command):
    out = [f"# kiln's Python API against kiln-run and JAX "
           f"({'quick' if ARGS.quick else 'full'}, {ARGS.threads} thread"
           f"{'s' if ARGS.threads > 1 else ''})", ""]
    cpu = machine.cpu_model()
    rev = machine.git_revision(ROOT)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--",
                            "compiler", "runtime"], capture_output=True,
                           text=True).stdout.strip()
    out += [f"- command: `{command}`",
            f"- date: {DATE_START:%Y-%m-%d %H:%M} UTC (start) to "
            f"{datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC (end)",
            f"- CPU: {cpu}, {os.cpu_count()} logical CPUs on the host; this process "
            f"pinned to CPU(s) {sorted(os.sched_getaffinity(0))}, {ARGS.threads} "
            f"thread(s) for kiln (OMP_NUM_THREADS) and XLA (XLA_FLAGS)",
            f"- load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in LOAD_START)} "
            f"at the start, {loadavg()} at the end (the host is shared)",
            f"- kiln: git {rev}{' with uncommitted changes under compiler/ or runtime/' if dirty else ''}; "
            f"kiln module from {os.path.dirname(kiln.__file__)}; tools from "
            f"{os.path.join(ARGS.build_dir, 'bin')}",
            f"- python {platform.python_version()}, numpy {np.__version__}, "
            + (f"jax {jax.__version__}" if jax else f"jax absent ({JAX_ABSENT})"), ""]

    if "dispatch" in report:
        d = report["dispatch"]
        out += ["## 1. Dispatch overhead of a cached call", "",
                f"`f = kiln.jit(lambda x, y: x + y)` against `jax.jit` of the same "
                f"function (JAX's result `.block_until_ready()`), both compiled and "
                f"warm; {d['rounds']} rounds of {d['calls']} calls each, every case in "
                f"every round (the order rotated each round). Time per call = the "
                f"round's wall time / calls (the Python loop included); median, 10th "
                f"and 90th percentile over the rounds.", "",
                "| system | call | median | p10 | p90 |", "|---|---|---|---|---|"]
        for system, label, med, p10, p90 in d["rows"]:
            out.append(f"| {system} | {label} | {fmt(med)} | {fmt(p10)} | {fmt(p90)} |")
        k = next((r[2] for r in d["rows"] if r[0] == "kiln"), None)
        j = next((r[2] for r in d["rows"] if r[0] == "jax.jit"), None)
        out.append("")
        if k is not None:
            out.append(f"Goal kiln <= 3 us: {fmt(k)} - "
                       f"{'met' if k <= 3e-6 else '**missed**'}"
                       + (f"; jax.jit (device arrays) {fmt(j)}, "
                          f"kiln/jax = {k / j:.2f}." if j else "."))
        out.append("")
    if "zero_copy" in report:
        z = report["zero_copy"]
        out += ["### Zero-copy inputs", "",
                f"`kiln.jit(lambda x: x[0:1] * 2.0)` on a 1 KiB and a 64 MiB "
                f"C-contiguous, aligned float32 input: the computation reads one "
                f"element, so a call time that does not grow with the input means "
                f"the input was not copied. The non-contiguous 64 MiB input (every "
                f"second element of a 128 MiB array) must be copied and shows what a "
                f"copy would cost. {z['rounds']} interleaved rounds; calls per round "
                f"in the last column.", "",
                "| system | input | median per call | p10 | p90 | calls/round |",
                "|---|---|---|---|---|---|"]
        for system, label, med, p10, p90, n in z["rows"]:
            out.append(f"| {system} | {label} | {fmt(med)} | {fmt(p10)} | {fmt(p90)} | {n} |")
        rows = {(r[0], r[1]): r[2] for r in z["rows"]}
        s, b = rows.get(("kiln", "1 KiB (float32[256])")), rows.get(("kiln", "64 MiB (float32[16M])"))
        c = rows.get(("numpy", "np.copyto of 64 MiB (what a copy costs)"))
        if s and b:
            out += ["", f"kiln 64 MiB / 1 KiB = {b / s:.2f} ({fmt(b)} against {fmt(s)}; "
                    f"one copy of 64 MiB takes {fmt(c)}): "
                    f"{'zero-copy confirmed' if b < s + 0.1 * (c or 1) else '**the input appears to be copied**'}."]
        out.append("")
    if "workloads" in report:
        wk = report["workloads"]
        out += ["## 2. Workloads: kiln.jit against kiln-run and jax.jit", "",
                "Each workload of `workloads.py` written in Python once "
                "(`python_api.py`: `mlp_step_fn`, `transformer_fn`, `rnn_fn`, "
                "`while_fn`) over kiln.numpy/kiln.value_and_grad/kiln.scan/"
                "kiln.while_loop and, for JAX, the same code over jax.numpy/"
                "jax.value_and_grad/lax.scan/lax.while_loop; every output checked "
                "against the workload's float64 numpy reference (`check`: err = max "
                "abs. error / max abs. reference) before anything is timed.", "",
                "- **kiln-run (workload IR)**: the workload's own kiln IR (gradients by "
                "`kiln-opt --kiln-grad`), `kiln-compile` (fusion on, -O2), "
                "`kiln-run --repeat N`'s printed median, as `bench.py` measures kiln;",
                "- **kiln-run (Python IR)**: the IR `kiln.jit(f).lower(...).as_text()` "
                "gives, through the same two tools (separates IR from call path);",
                f"- **{FOLD}**: where the Python IR has numpy keepdims chains (reduce, "
                "reshape [S] to [S, 1], elementwise ops on [S, 1], broadcast_in_dim), "
                "the same IR with each chain rewritten into the workload IR's form "
                "(ops on [S], broadcast_in_dim of the reduced value; "
                "`fold_unit_reshapes`), checked and timed the same way: the cost of "
                "that difference alone;",
                "- **kiln.jit**: the cached call `f(*numpy_arrays)` from Python, median "
                "of N single calls timed with `time.perf_counter()` (outputs are fresh "
                "numpy arrays, as kiln-run allocates its outputs per call);",
                "- **jax.jit**: the same Python function over jax.numpy, arguments "
                "already on the device, `block_until_ready`, median of N calls.", "",
                "Per workload: rounds x (one kiln-run process with --repeat N, N kiln.jit "
                "calls, N JAX calls, order rotated each round); the median of the "
                "rounds' medians, and the fastest single call in brackets. ratio = "
                "time / kiln-run (workload IR) time.", "",
                "| workload | system | median (fastest) | ratio to kiln-run | check |",
                "|---|---|---|---|---|"]
        for row in wk["rows"]:
            base = row["times"]["kiln-run (workload IR)"][0]
            checks = {"kiln-run (workload IR)": row["kiln-run check"],
                      "kiln-run (Python IR)": row["kiln-run (Python IR) check"],
                      FOLD: row.get(FOLD + " check"),
                      "kiln.jit": row["kiln.jit check"],
                      "jax.jit": row.get("jax check")}
            for i, (s, (med, low, _)) in enumerate(row["times"].items()):
                err, ok = checks[s] or (float("nan"), False)
                label = (f"{row['title']}; N={row['calls']}, {row['rounds']} rounds"
                         if i == 0 else "")
                out.append(f"| {label} | "
                           f"{s} | {fmt(med)} ({fmt(low)}) | {med / base:.3f} | "
                           f"{'ok' if ok else 'WRONG'}, err {err:.1e} |")
            jc = row.get("jax check")
            if jc and not jc[1]:
                out.append(f"| {row['title']} | jax.jit | - | - | WRONG, err {jc[0]:.1e} |")
        out += ["", "Goal: kiln.jit within 5% of kiln-run (workload IR). Ratios of the "
                "medians; in brackets the ratios of the fastest calls, which the "
                "other processes on a shared host disturb least.", "",
                "| workload | kiln.jit / kiln-run | kiln-run (Python IR) / kiln-run | "
                "keepdims folded / kiln-run | "
                "kiln.jit / kiln-run (Python IR) | jax.jit / kiln.jit | goal |",
                "|---|---|---|---|---|---|---|"]
        for row in wk["rows"]:
            t = {s: v[0] for s, v in row["times"].items()}
            m = {s: v[1] for s, v in row["times"].items()}
            base, pyir, kj = t["kiln-run (workload IR)"], t["kiln-run (Python IR)"], t["kiln.jit"]
            mbase, mpyir, mkj = (m["kiln-run (workload IR)"], m["kiln-run (Python IR)"],
                                 m["kiln.jit"])
            jr = (f"{t['jax.jit'] / kj:.2f} ({m['jax.jit'] / mkj:.2f})"
                  if "jax.jit" in t else "-")
            fr = (f"{t[FOLD] / base:.3f} ({m[FOLD] / mbase:.3f})" if FOLD in t else "-")
            out.append(f"| {row['short']} | {kj / base:.3f} ({mkj / mbase:.3f}) | "
                       f"{pyir / base:.3f} ({mpyir / mbase:.3f}) | {fr} | "
                       f"{kj / pyir:.3f} ({mkj / mpyir:.3f}) | {jr} | "
                       f"{'met' if kj <= 1.05 * base else '**missed**'} |")
        chains_of = {ir[0]: ir[-1] for ir in wk["irs"]}
        analysis = []
        for row in wk["rows"]:
            t = {s: v[0] for s, v in row["times"].items()}
            base, pyir, kj = t["kiln-run (workload IR)"], t["kiln-run (Python IR)"], t["kiln.jit"]
            if kj <= 1.05 * base:
                continue
            why = []
            if pyir > 1.05 * base:
                why.append(f"the Python IR is {100 * (pyir / base - 1):.0f}% slower than "
                           f"the workload IR through the same kiln-compile and kiln-run")
                if FOLD in t and t[FOLD] <= 1.05 * base:
                    why.append(f"with its {chains_of.get(row['short'], '?')} keepdims "
                               f"chains folded into the workload IR's form it is within "
                               f"{100 * (t[FOLD] / base - 1):.1f}% of the workload IR, so the "
                               f"tracer's keepdims lowering (reduce, reshape to [S, 1], "
                               f"broadcast_in_dim) is what costs")
            if kj > 1.05 * pyir:
                why.append(f"the same IR is {100 * (kj / pyir - 1):.1f}% slower called "
                           f"through kiln.jit than through kiln-run; a cached call's "
                           f"dispatch costs microseconds (part 1), so the difference is "
                           f"time spent inside the compiled call in this process")
            elif pyir <= 1.05 * base:
                why.append("neither the IR nor the call path alone is 5% slower")
            analysis.append(f"- {row['short']}: kiln.jit {100 * (kj / base - 1):.1f}% "
                            f"slower than kiln-run: " + "; ".join(why) + ".")
        if analysis:
            out += ["", "Where the goal is missed:", ""] + analysis
        out += ["", "### The IR the Python tracer produces against the workload's", "",
                "Op counts (kiln, arith, tensor, scf ops) of the workload's module "
                "(after kiln-opt's gradient, for the MLP step and the RNN) and of "
                "the Python tracer's; the ops whose counts differ.", "",
                "| workload | workload IR | Python IR | ops total | differing op counts "
                "(workload->Python) | keepdims chains |",
                "|---|---|---|---|---|---|"]
        for title, a, b, (na, nb), diffs, chains in wk["irs"]:
            out.append(f"| {title} | `{a}` | `{b}` | {na} -> {nb} | "
                       f"{', '.join(diffs) if diffs else 'none'} | {chains} |")
        out.append("")
    if "compile" in report:
        c = report["compile"]
        med = {k: float(np.median(v)) for k, v in c.items()}
        wl = W.MlpTrain(ARGS.quick)
        out += ["## 3. Trace and compile time: MLP training step from Python", "",
                f"{wl.desc}. The first call of a fresh `kiln.jit(train_step)` (trace, "
                f"compile, load, run: wall time), with `last_trace_seconds` and "
                f"`last_compile_seconds`; against the first call of a fresh "
                f"`jax.jit(train_step)` (`jax.clear_caches()` before; trace, lower, "
                f"compile, run, `block_until_ready`), and separately JAX's "
                f"`.lower()` and `.compile()`. Medians of {report['compile_rounds']} "
                f"alternating rounds (min, max in brackets).", "",
                "| system | what | median (min, max) |", "|---|---|---|"]
        labels = {"kiln first call": ("kiln.jit", "first call, total"),
                  "kiln trace": ("kiln.jit", "trace (last_trace_seconds)"),
                  "kiln compile": ("kiln.jit", "compile (last_compile_seconds)"),
                  "kiln rest": ("kiln.jit", "rest: signature, load, run"),
                  "jax first call": ("jax.jit", "first call, total"),
                  "jax trace+lower": ("jax.jit", ".lower() (trace + StableHLO)"),
                  "jax compile": ("jax.jit", ".compile() (XLA)")}
        for k, v in c.items():
            system, what = labels[k]
            out.append(f"| {system} | {what} | {fmt(med[k])} ({fmt(min(v))}, {fmt(max(v))}) |")
        cw = report.get("workloads", {}).get("compile", {}).get("mlp_train")
        if cw:
            out.append(f"| kiln-compile | the workload's .mlir, wall (one run, part 2) | {fmt(cw)} |")
        if "jax first call" in med:
            out += ["", f"kiln first call / JAX first call = "
                    f"{med['kiln first call'] / med['jax first call']:.2f}."]
        out.append("")
    if NOTES:
        out += ["## Problems found", ""] + [f"- {n}" for n in NOTES] + [""]
    return "\n".join(out)


def main():
    pythonpath = os.environ.get("PYTHONPATH")
    command = " ".join(([f"PYTHONPATH={os.path.relpath(pythonpath, ROOT)}"] if pythonpath else [])
                       + [sys.executable, os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    parts = ARGS.only.split(",")
    report = {}
    if "dispatch" in parts:
        dispatch_part(report)
    if "workloads" in parts:
        workloads_part(report)
    if "compile" in parts:
        compile_part(report)
    text = render(report, command)
    if ARGS.markdown:
        with open(ARGS.markdown, "w") as f:
            f.write(text)
    print()
    print(text)
    bad = [r["name"] for r in report.get("workloads", {}).get("rows", [])
           if not (r["kiln.jit check"][1] and r["kiln-run check"][1])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
