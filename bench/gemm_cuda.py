#!/usr/bin/env python3
"""Matrix products on an NVIDIA GPU: kiln's compiled products (cuBLASLt
through the runtime, and kiln's own tiled kernel with --no-cublas) against
cuBLAS called directly (PyTorch's torch.matmul) on the same GPU.

    python3 bench/gemm_cuda.py                     # N = 4096, f32 and bf16
    python3 bench/gemm_cuda.py --sizes 1024,4096 --output FILE

Each module is one function that multiplies R products in a chain,
x_1 = a b, x_i = a x_(i-1), returning x_R; kiln-run times the whole call,
which copies a and b in and x_R out. The time of one product is the
difference between the chain of R and the chain of 1, divided by R - 1, so
the copies cancel. PyTorch's products are timed on device-resident tensors
with CUDA events around the same chain (its f32 products are true f32:
torch.backends.cuda.matmul.allow_tf32 stays False, as kiln's f32 products
are unless compiled with --cuda-tf32). a has entries uniform in
[-sqrt(3/N), sqrt(3/N)], so the chain neither grows nor vanishes; every
result is checked against the chain computed by PyTorch in float64.

Needs a CUDA GPU with its driver, PyTorch built with CUDA in this
interpreter, and kiln's tools in KILN_BUILD_DIR (default build/ beside
bench/) or --build-dir. For a GPU machine without kiln-compile (or LLVM),
`--emit-modules DIR --arch sm_90` compiles the modules of the same
--sizes, --dtypes, --chain and --kernel-max into DIR on any machine with
kiln built (no GPU or PyTorch), and `--modules-from DIR` runs those with
kiln-run alone. The report goes to --output (default
BUILD/bench-gemm-cuda.md) and to stdout.
"""

import argparse
import datetime
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import prebuilt  # noqa: E402
from attention_cuda import cuda_arch, cuda_torch, run_kiln  # noqa: E402
TOL = {"f32": 1e-4, "bf16": 5e-2}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="4096",
                   help="comma-separated N of the N x N x N products (default 4096)")
    p.add_argument("--dtypes", default="f32,bf16", help="f32 and/or bf16")
    p.add_argument("--chain", type=int, default=11,
                   help="products in the long chain (default 11)")
    p.add_argument("--repeat", type=int, default=10, help="timed calls after the first")
    p.add_argument("--kernel-max", type=int, default=4096,
                   help="largest N timed with kiln's own kernel (--no-cublas)")
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--output", default=None,
                   help="markdown report (default BUILD/bench-gemm-cuda.md)")
    prebuilt.add_options(p)
    args = p.parse_args(argv)
    prebuilt.check_options(p, args)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes needs integers like 1024,4096, not {args.sizes!r}")
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    if not args.sizes or min(args.sizes) < 1 or args.repeat < 1 or args.chain < 2:
        p.error("--sizes and --repeat need positive integers, --chain at least 2")
    if any(d not in TOL for d in args.dtypes):
        p.error(f"--dtypes takes f32 and bf16, not {args.dtypes}")
    if args.output is None:
        args.output = os.path.join(args.build_dir, "bench-gemm-cuda.md")
    return args


def chain_module(n, dtype, length):
    """MLIR text of @chain(a, b) -> x_length."""
    t = f"tensor<{n}x{n}x{dtype}>"
    lines = [f"func.func @chain(%a: {t}, %b: {t}) -> {t} {{",
             f"  %x1 = kiln.matmul %a, %b : {t}, {t}"]
    for i in range(2, length + 1):
        lines.append(f"  %x{i} = kiln.matmul %a, %x{i - 1} : {t}, {t}")
    lines += [f"  return %x{length} : {t}", "}", ""]
    return "\n".join(lines)


def flavours(args, n):
    """(name, through cuBLASLt) of kiln's products timed at N = n."""
    return [("cublas", True)] + ([("kernel", False)] if n <= args.kernel_max
                                 else [])


def module_name(n, dtype, flavour, length):
    return f"chain_{n}_{dtype}_{flavour}_{length}"


def emit_modules(args, folder, arch, host=()):
    """Every module of the run, compiled for `arch` into `folder`."""
    prebuilt.start(folder, arch)
    tools = os.path.join(args.build_dir, "bin")
    for n in args.sizes:
        for dtype in args.dtypes:
            for flavour, library in flavours(args, n):
                for length in (1, args.chain):
                    name = module_name(n, dtype, flavour, length)
                    src = os.path.join(folder, name + ".mlir")
                    with open(src, "w") as f:
                        f.write(chain_module(n, dtype, length))
                    cmd = [os.path.join(tools, "kiln-compile"), src,
                           "--target=cuda", f"--cuda-arch={arch}", "-o",
                           os.path.join(folder, name + ".kmod"), *host]
                    if not library:
                        cmd.append("--no-cublas")
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    if r.returncode != 0:
                        raise RuntimeError(f"{' '.join(cmd)} failed:\n"
                                           f"{r.stdout}{r.stderr}")


def torch_product_time(torch, a, b, length, repeat):
    """Median seconds of one product in a chain of `length` on device."""
    def chain():
        x = torch.matmul(a, b)
        for _ in range(length - 1):
            x = torch.matmul(a, x)
        return x

    for _ in range(3):
        chain()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        chain()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / length)
    return float(np.median(times))


def rel_error(x, ref):
    return float(np.max(np.abs(x.astype(np.float64) - ref)) / max(np.max(np.abs(ref)), 1e-30))


def main(argv=None):
    args = parse_args(argv)
    if args.emit_modules:
        emit_modules(args, args.emit_modules, args.arch, prebuilt.HOST_FLAGS)
        return 0
    if args.modules_from and not prebuilt.complete(
            "gemm_cuda.py", args.modules_from, [
                module_name(n, dtype, flavour, length) for n in args.sizes
                for dtype in args.dtypes for flavour, _ in flavours(args, n)
                for length in (1, args.chain)]):
        return 2
    torch = cuda_torch("gemm_cuda.py")
    if torch is None:
        return 77
    tools = os.path.join(args.build_dir, "bin")
    props = torch.cuda.get_device_properties(0)
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        modules = args.modules_from or tmp
        if args.modules_from:
            arch = prebuilt.arch_of(modules)
        else:
            arch = cuda_arch(torch)
            emit_modules(args, modules, arch)
        for n in args.sizes:
            bound = np.sqrt(3.0 / n)
            a = rng.uniform(-bound, bound, (n, n)).astype(np.float32)
            b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            for dtype in args.dtypes:
                tdtype = torch.float32 if dtype == "f32" else torch.bfloat16
                ta, tb = (torch.from_numpy(x).cuda().to(tdtype) for x in (a, b))
                # The inputs as the GPU sees them (bf16-rounded for bf16).
                ra, rb = ta.double(), tb.double()
                ref = rb
                for _ in range(args.chain):
                    ref = ra @ ref
                ref = ref.cpu().numpy()
                paths = []
                for name, x in (("a", ta), ("b", tb)):
                    path = os.path.join(tmp, f"{name}_{n}_{dtype}.npy")
                    np.save(path, x.float().cpu().numpy())
                    paths.append(path)
                row = {"n": n, "dtype": dtype}
                row["torch"] = torch_product_time(torch, ta, tb, args.chain, args.repeat)
                for flavour, _ in flavours(args, n):
                    times = {}
                    for length in (1, args.chain):
                        module = prebuilt.module(
                            modules, module_name(n, dtype, flavour, length))
                        out = os.path.join(tmp, f"out_{flavour}_{length}")
                        os.makedirs(out, exist_ok=True)
                        times[length], _, outputs, _ = run_kiln(
                            tools, module, "chain", paths, out, args.repeat)
                        result = outputs[0]
                        if length == args.chain:
                            error = rel_error(result, ref)
                            if error > TOL[dtype]:
                                raise RuntimeError(
                                    f"{flavour} {dtype} N={n}: error {error:.2e} against "
                                    f"PyTorch in float64 exceeds {TOL[dtype]}")
                            row[flavour + "_error"] = error
                    row[flavour] = (times[args.chain] - times[1]) / (args.chain - 1)
                    row[flavour + "_call1"] = times[1]
                rows.append(row)
                print(row, flush=True)

    def tflops(n, seconds):
        return 2.0 * n ** 3 / seconds / 1e12

    lines = [
        "# Matrix products on a CUDA GPU: kiln against cuBLAS called directly",
        "",
        f"Made by `bench/gemm_cuda.py` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: "
        f"{props.name} ({props.multi_processor_count} SMs), PyTorch {torch.__version__}, "
        f"modules for {arch}. N x N x N products; ms per product, TFLOP/s in brackets. "
        f"kiln: (time of a chain of {args.chain} products - time of one) / "
        f"{args.chain - 1}, from kiln-run's median over {args.repeat} calls; cuBLAS: "
        f"torch.matmul on device-resident tensors, CUDA events around a chain of "
        f"{args.chain}. f32 is true f32 on both sides (no TF32). Error: max |x - ref| / "
        f"max |ref| of the chain's result against PyTorch in float64.",
        "",
        "| N | dtype | cuBLAS (torch.matmul) | kiln, cuBLASLt | kiln's speed / cuBLAS's | "
        "kiln, own kernel (--no-cublas) | own kernel's speed / cuBLAS's | "
        "error cuBLASLt | error own kernel |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        n = r["n"]

        def cell(seconds):
            return f"{seconds * 1e3:.3f} ({tflops(n, seconds):.0f})"

        kernel = r.get("kernel")
        kernel_cells = ["-", "-", "-"]
        if kernel:
            kernel_cells = [cell(kernel), f"{r['torch'] / kernel:.3f}",
                            f"{r['kernel_error']:.1e}"]
        lines.append(
            f"| {n} | {r['dtype']} | {cell(r['torch'])} | {cell(r['cublas'])} | "
            f"{r['torch'] / r['cublas']:.2f} | {kernel_cells[0]} | {kernel_cells[1]} | "
            f"{r['cublas_error']:.1e} | {kernel_cells[2]} |")
    report = "\n".join(lines) + "\n"
    with open(args.output, "w") as f:
        f.write(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
