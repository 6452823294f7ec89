#!/usr/bin/env python3
"""Scaled dot-product attention on an NVIDIA GPU: kiln.attention compiled with
--target=cuda against the same attention as separate kiln ops (--no-fusion)
and against PyTorch's scaled_dot_product_attention on the same GPU; time per
call, device memory and the error of each result.

    python3 bench/attention_cuda.py                          # N = 1024, 4096, 16384
    python3 bench/attention_cuda.py --sizes 1024 --output FILE
    python3 bench/attention_cuda.py --dtype bf16             # tensor cores

Shapes as bench/attention.py: batch 1, 8 heads, head dim 64, f32, scale
1/sqrt(64); non-causal and causal; the forward pass, and forward + backward
(dq, dk, dv from a given cotangent) up to N = --backward-max. The modules
are those of bench/attention.py, compiled here with `kiln-compile
--target=cuda --cuda-arch=ARCH` (ARCH from the GPU, at most sm_90): the
forward is one kernel, the backward a block reduction and one kernel that
adds dq with atomics (kiln-cuda-flash-attention); "deterministic" is the
backward compiled with --cuda-deterministic, its two kernels summing in a
fixed order; the unfused composition, up to N = --unfused-max, keeps its
N x N scores in device memory.

- kiln: one kiln-run process per measurement (`--device cuda --repeat R
  --stats --device-resident`). Its first call copies the inputs in and the
  outputs out (those outputs are checked); its time per call is the median
  of the calls after it, on inputs already in device memory and leaving
  their outputs there, so that it is the function's work on the device as
  PyTorch's first time is; the memory column is kiln-run's "largest device
  buffer" (the function's arena of intermediates).
- PyTorch: timed twice, on tensors already on the GPU (CUDA events around
  each call), and "with copies": from host arrays to the GPU, the call, the
  results back to the host (wall clock, synchronized), for comparison
  with a call from host arrays. Its memory column is the peak of
  torch.cuda.max_memory_allocated during one call beyond the inputs.
- Every result is checked against PyTorch's in float64 on the GPU:
  max |x - ref| / max |ref| <= 2e-3 (1e-2 in bf16).

With --dtype bf16 the operands and results are bf16 (the lse f32): kiln's
forward and backward are its tensor-core kernels (the backward, at head
dim 64, one kernel that adds dq with atomics, and "deterministic" its
two kernels summing in a fixed order); PyTorch runs scaled_dot_product_attention on bf16 tensors (its
FlashAttention kernels); the inputs are the f32 draws rounded to bf16, the
reference float64 on those; no unfused composition. In bf16 kiln's
default ("fused") builds the forward and the backward each as a tuned
call site of kiln's tensor-core kernels and a call of cuDNN's fused
attention through kiln's runtime, the runtime keeping the faster at the
first call (the report lists both times); "kiln kernels" (bf16 only) is
the same module compiled with --no-cuda-cudnn-attention, kiln's
tensor-core kernels alone.
"3xTF32" (f32 only) is the module compiled with --cuda-attention-3xtf32:
the forward and the backward on tensor cores in 3xTF32 products (each f32
operand split into two TF32 words, three products each, f32's accuracy,
as PyTorch's f32 SDPA computes on sm_80 and later), the backward on
sm_90 one kernel that adds dq with atomics, and "3xTF32 deterministic"
the same with --cuda-deterministic, the backward's two kernels. In f32 on
sm_80 and later, kiln's default ("fused") builds each attention as a tuned
call site carrying both the f32 kernels and the 3xTF32 ones (and, for a
backward of one kernel with atomics, its two kernels): the runtime times
them at the first call and keeps the fastest, which the report lists with
each variant's time; "f32 kernels" is
the module compiled with --no-cuda-attention-tuning, the f32 kernels alone.

Needs a CUDA GPU with its driver, PyTorch built with CUDA in this
interpreter, and kiln's tools in KILN_BUILD_DIR (default build/ beside
bench/) or --build-dir. For a GPU machine without kiln-compile (or
LLVM), `--emit-modules DIR --arch sm_90` compiles the modules of the same
--sizes, --backward-max, --unfused-max and --dtype into DIR on any
machine with kiln built (no GPU or PyTorch), and `--modules-from DIR`
then runs those with kiln-run alone (--build-dir naming a folder with
bin/kiln-run and lib/kiln/'s plug-ins). The report goes to --output (default
BUILD/bench-attention-cuda.md) and to stdout.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import attention as A  # noqa: E402  (the modules and shapes of the CPU bench)
import prebuilt  # noqa: E402

TOL = {"f32": 2e-3, "bf16": 1e-2}
ARCHES = (70, 75, 80, 86, 89, 90)  # kiln-compile --cuda-arch


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1024,4096,16384",
                   help="comma-separated sequence lengths (default 1024,4096,16384)")
    p.add_argument("--backward-max", type=int, default=16384,
                   help="largest N with a forward+backward measurement (default 16384)")
    p.add_argument("--unfused-max", type=int, default=4096,
                   help="largest N with the unfused composition (default 4096)")
    p.add_argument("--repeat", type=int, default=20, help="timed calls after the first")
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32",
                   help="operand and result type (default f32)")
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--output", default=None,
                   help="markdown report (default BUILD/bench-attention-cuda.md, "
                   "-bf16.md for --dtype bf16)")
    prebuilt.add_options(p)
    args = p.parse_args(argv)
    prebuilt.check_options(p, args)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes needs integers like 1024,4096, not {args.sizes!r}")
    if not args.sizes or min(args.sizes) < 1 or args.repeat < 1:
        p.error("--sizes and --repeat need positive integers")
    if args.output is None:
        suffix = "" if args.dtype == "f32" else "-" + args.dtype
        args.output = os.path.join(args.build_dir, f"bench-attention-cuda{suffix}.md")
    return args


def cuda_torch(script):
    """PyTorch with a CUDA device and its f32 products true f32, or None
    after saying on stderr why `script` cannot run (exit status 77)."""
    try:
        import torch
    except ImportError:
        print(f"{script}: needs PyTorch in this interpreter", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA device for PyTorch", file=sys.stderr)
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def cuda_arch(torch):
    major, minor = torch.cuda.get_device_capability()
    have = major * 10 + minor
    return "sm_%d" % max([a for a in ARCHES if a <= have] or [ARCHES[0]])


SYSTEMS = ("fused", "f32-kernels", "deterministic", "kiln-kernels", "3xtf32",
           "3xtf32-deterministic", "unfused")
SYSTEM_FLAGS = {"fused": [], "f32-kernels": ["--no-cuda-attention-tuning"],
                "deterministic": ["--cuda-deterministic"],
                "kiln-kernels": ["--no-cuda-cudnn-attention"],
                "3xtf32": ["--cuda-attention-3xtf32"],
                "3xtf32-deterministic": ["--cuda-attention-3xtf32",
                                         "--cuda-deterministic"],
                "unfused": ["--no-fusion"]}
# The report's name of each system.
SYSTEM_TITLES = {"fused": "fused", "f32-kernels": "f32 kernels",
                 "deterministic": "deterministic",
                 "kiln-kernels": "kiln kernels", "3xtf32": "3xTF32",
                 "3xtf32-deterministic": "3xTF32 deterministic",
                 "unfused": "unfused"}


def systems(args, n, mode):
    """The kiln systems measured at `n` in `mode` for --dtype."""
    for system in SYSTEMS:
        if system == "unfused" and (n > args.unfused_max or args.dtype != "f32"):
            continue
        if system == "kiln-kernels" and args.dtype != "bf16":
            continue
        if (system.startswith("3xtf32") or system == "f32-kernels") and \
                args.dtype != "f32":
            continue
        if system.endswith("deterministic") and mode != "fwdbwd":
            continue
        yield system


def cells(args):
    """(n, mode, causal) of every measurement, in the report's order."""
    for n in args.sizes:
        for mode in ("fwd", "fwdbwd"):
            if mode == "fwdbwd" and n > args.backward_max:
                continue
            for causal in (False, True):
                yield n, mode, causal


def module_name(args, system, n, fn):
    return f"{args.dtype}.{system}.{n}.{fn}"


def compile_module(tools, args, arch, system, n, causal, mode, directory):
    """Compiles one module into `directory`: its path, or raises with
    kiln-compile's output."""
    fn = A.function_name(causal, mode)
    text = (A.unfused_function(n, causal, mode) if system == "unfused"
            else A.fused_function(n, causal, mode, args.dtype))
    source = os.path.join(directory, module_name(args, system, n, fn) + ".mlir")
    module = source[:-5] + ".kmod"
    with open(source, "w") as f:
        f.write(text)
    host = prebuilt.HOST_FLAGS if args.emit_modules else []
    c = subprocess.run([os.path.join(tools, "kiln-compile"), source,
                        "--target=cuda", f"--cuda-arch={arch}", "-o", module]
                       + host + SYSTEM_FLAGS[system], capture_output=True, text=True)
    if c.returncode != 0:
        raise RuntimeError(f"kiln-compile failed: {c.stderr.strip()[-300:]}")
    return module


def emit_modules(args):
    """--emit-modules: every module of the run, compiled for --arch."""
    prebuilt.start(args.emit_modules, args.arch)
    tools = os.path.join(args.build_dir, "bin")
    failed = 0
    for n, mode, causal in cells(args):
        for system in systems(args, n, mode):
            try:
                module = compile_module(tools, args, args.arch, system, n,
                                        causal, mode, args.emit_modules)
                print(module, flush=True)
            except RuntimeError as e:
                print(f"{system} N={n} {mode} causal={causal}: {e}",
                      file=sys.stderr)
                failed += 1
    return 1 if failed else 0


def run_kiln(tools, module, function, inputs, out_dir, repeat):
    """(median seconds, largest device buffer in bytes, outputs, the
    runtime's lines on its tuned call sites) of one kiln-run process, or
    raises with its output."""
    cmd = [os.path.join(tools, "kiln-run"), module, "--device", "cuda",
           "--function", function, "--output-dir", out_dir,
           "--repeat", str(repeat), "--stats", "--device-resident"]
    for x in inputs:
        cmd += ["--input", x]
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, KILN_CUDA_TUNE_LOG="1"))
    text = r.stdout + r.stderr
    median = re.search(r"median ([0-9.]+) us", text)
    if r.returncode != 0 or not median:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{text[-2000:]}")
    largest = re.search(r"largest device buffer (\d+) bytes", text)
    names = sorted(f for f in os.listdir(out_dir) if f.endswith(".npy"))
    outputs = [np.load(os.path.join(out_dir, f)) for f in names]
    tuned = re.findall(r"kiln: tuned call site \d+: (.*)", text)
    return (float(median.group(1)) * 1e-6,
            int(largest.group(1)) if largest else None, outputs, tuned)


def torch_times(torch, arrays, causal, mode, repeat, dtype):
    """(seconds on device, seconds with copies, peak extra bytes), on
    tensors of torch dtype `dtype`."""
    F = torch.nn.functional
    dev = [torch.from_numpy(a).cuda().to(dtype) for a in arrays]

    def call(q, k, v, do=None):
        if mode == "fwd":
            with torch.no_grad():
                return [F.scaled_dot_product_attention(q, k, v, is_causal=causal)]
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(do)
        return [q.grad, k.grad, v.grad]

    for _ in range(3):
        call(*dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    call(*dev)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    on_device = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call(*dev)
        end.record()
        torch.cuda.synchronize()
        on_device.append(start.elapsed_time(end) * 1e-3)
    with_copies = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        outs = call(*[torch.from_numpy(a).cuda().to(dtype) for a in arrays])
        [o.cpu() for o in outs]
        torch.cuda.synchronize()
        with_copies.append(time.perf_counter() - t0)
    return float(np.median(on_device)), float(np.median(with_copies)), peak


def reference(torch, arrays, causal, mode):
    q, k, v, do = (torch.from_numpy(a).cuda().double() for a in arrays)
    if mode == "fwd":
        with torch.no_grad():
            return [torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=causal).cpu().numpy()]
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(do)
    return [t.grad.cpu().numpy() for t in (q, k, v)]


def fmt_ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def fmt_mib(n):
    return "-" if n is None else f"{n / 2**20:.1f}"


def main(argv=None):
    args = parse_args(argv)
    if args.emit_modules:
        return emit_modules(args)
    if args.modules_from and not prebuilt.complete(
            "attention_cuda.py", args.modules_from, [
                module_name(args, system, n, A.function_name(causal, mode))
                for n, mode, causal in cells(args)
                for system in systems(args, n, mode)]):
        return 2
    torch = cuda_torch("attention_cuda.py")
    if torch is None:
        return 77
    tools = os.path.join(args.build_dir, "bin")
    arch = prebuilt.arch_of(args.modules_from) if args.modules_from else \
        cuda_arch(torch)
    rng = np.random.default_rng(A.SEED)
    rows, problems, choices = [], [], []
    work = tempfile.mkdtemp(prefix="kiln-attention-cuda-")
    started = datetime.datetime.now(datetime.timezone.utc)
    paths, arrays = {}, {}
    for n, mode, causal in cells(args):
        if n not in paths:
            shape = (A.BATCH, A.HEADS, n, A.HEAD_DIM)
            draws = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
            if args.dtype == "bf16":
                draws = [torch.from_numpy(a).bfloat16().float().numpy() for a in draws]
            arrays[n] = draws
            paths[n] = []
            for name, a in zip("qkvd", draws):
                paths[n].append(os.path.join(work, f"{name}{n}.npy"))
                np.save(paths[n][-1], a)
        fn = A.function_name(causal, mode)
        ref = reference(torch, arrays[n], causal, mode)
        row = {"n": n, "causal": causal, "mode": mode}
        row["torch"], row["torch_copies"], row["torch_mem"] = torch_times(
            torch, arrays[n], causal, mode, args.repeat,
            torch.bfloat16 if args.dtype == "bf16" else torch.float32)
        ins = paths[n][:4] if mode == "fwdbwd" else paths[n][:3]
        for system in systems(args, n, mode):
            try:
                if args.modules_from:
                    module = prebuilt.module(args.modules_from,
                                             module_name(args, system, n, fn))
                else:
                    module = compile_module(tools, args, arch, system, n, causal,
                                            mode, work)
                extra = A.unfused_scalars(causal, mode) if system == "unfused" else []
                out_dir = os.path.join(work, f"out.{system}.{n}.{fn}")
                seconds, largest, outputs, tuned = run_kiln(
                    tools, module, fn, ins + extra, out_dir, args.repeat)
                choices += [f"{SYSTEM_TITLES[system]} {fn} N={n}: {t}"
                            for t in tuned]
            except RuntimeError as e:
                problems.append(f"{system} {fn} N={n}: {e}")
                continue
            got = outputs[:1] if mode == "fwd" else outputs[:3]
            err = A.rel_error(got, ref)
            if not err <= TOL[args.dtype]:
                problems.append(f"{system} {fn} N={n}: error {err:.2e} > "
                                f"{TOL[args.dtype]}")
            row[system], row[system + "_mem"], row[system + "_err"] = seconds, largest, err
        rows.append(row)
        print(f"N={n} {fn}: " + ", ".join(
                  f"{SYSTEM_TITLES[system]} {fmt_ms(row.get(system))} ms"
                  for system in SYSTEMS) + f", torch {fmt_ms(row['torch'])} ms "
              f"({fmt_ms(row['torch_copies'])} ms with copies)", flush=True)

    props = torch.cuda.get_device_properties(0)
    lines = [
        "# Attention on a CUDA GPU: kiln.attention against the composition and PyTorch",
        "",
        f"Made by `bench/attention_cuda.py` on {started:%Y-%m-%d %H:%M} UTC: "
        f"{props.name} ({props.multi_processor_count} SMs, "
        f"{props.total_memory / 2**30:.0f} GiB), PyTorch {torch.__version__}, "
        f"modules for {arch}. Batch 1, 8 heads, head dim 64, {args.dtype}. Times in ms per "
        "call on device-resident inputs and outputs (kiln-run "
        "--device-resident); PyTorch's also with the copies in and out "
        "(from and to host arrays), for comparison. Memory: kiln's largest device buffer, PyTorch's peak "
        "allocation beyond its inputs (MiB). Error: max |x - ref| / max |ref| "
        "against PyTorch in float64.",
        "",
    ]
    # Every system's time, its ratio to PyTorch on device and its error
    # (the unfused composition's ratio to the fused kernels instead).
    fused = [system for system in SYSTEMS if system != "unfused"]
    header = (["N", "causal", "pass"]
              + [f"kiln {SYSTEM_TITLES[system]}" for system in SYSTEMS]
              + ["PyTorch on device", "PyTorch with copies"]
              + [f"{SYSTEM_TITLES[system]} / PyTorch on device" for system in fused]
              + ["unfused / fused", "memory fused", "memory unfused",
                 "memory PyTorch"]
              + [f"error {SYSTEM_TITLES[system]}" for system in fused])
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        row_cells = ([str(r["n"]), "yes" if r["causal"] else "no",
                   A.PASS_TITLE[r["mode"]]]
                  + [fmt_ms(r.get(system)) for system in SYSTEMS]
                  + [fmt_ms(r["torch"]), fmt_ms(r["torch_copies"])]
                  + [f"{r[system] / r['torch']:.2f}" if r.get(system) else "-"
                     for system in fused]
                  + [f"{r['unfused'] / r['fused']:.2f}"
                     if r.get("fused") and r.get("unfused") else "-",
                     fmt_mib(r.get("fused_mem")), fmt_mib(r.get("unfused_mem")),
                     fmt_mib(r["torch_mem"])]
                  + [f"{r[system + '_err']:.1e}"
                     if r.get(system + "_err") is not None else "-"
                     for system in fused])
        lines.append("| " + " | ".join(row_cells) + " |")
    if choices:
        lines += ["", "The tuned call sites' choices at their first call "
                  "(KILN_CUDA_TUNE_LOG=1: the variant kept, each variant's "
                  "time per run):", ""] + [f"- {c}" for c in choices]
    if problems:
        lines += ["", "Problems:", ""] + [f"- {p}" for p in problems]
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(report)
    print(report)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
