#!/usr/bin/env python3
"""The bench's training and control-flow workloads on an NVIDIA GPU: kiln
modules compiled with --target=cuda against PyTorch (eager and
torch.compile) and, for the data-dependent while loop, JAX, all on the same
GPU and the same inputs.

    python3 bench/workloads_cuda.py
    python3 bench/workloads_cuda.py --only mlp_train,while_solver --no-compile-anchor

The workloads are bench/workloads.py's at full size: the MLP training step
(784-1024-1024-10, batch 256, SGD), the transformer encoder layer's
forward pass and (here only) its forward and backward pass, the RNN's loss
and gradient, and the damped fixed point whose trip count depends on the
data (a kiln.while). Their kiln modules are made
as bench.py makes them (kiln-opt --kiln-grad for the gradients) and
compiled with `kiln-compile --target=cuda --cuda-arch=ARCH`, f32 throughout.

- kiln: kiln-run's median time per call (`--device cuda`), twice: "on
  device" with `--device-resident` (inputs copied to the device once, the
  outputs left there: kiln_function_call_on_device), and "with copies",
  each call copying every input to the device and every output back.
- PyTorch and JAX are timed twice: "on device", inputs already on the GPU
  and the outputs left there (synchronized after each call), and "with
  copies", from host arrays in and back to host arrays, which is what
  kiln-run's time covers.
- Every system's outputs are checked against the float64 numpy reference
  of workloads.py before it is timed; one that disagrees is reported WRONG.

--sources-from DIR takes each workload's module from DIR/NAME.mlir (a work
directory of an earlier run) instead of deriving it, so that kiln-opt need
not be present. For a GPU machine without kiln-compile (or LLVM),
`--emit-modules DIR --arch sm_90` derives and compiles the modules of the
--only workloads into DIR on any machine with kiln built (no GPU or
PyTorch), and `--modules-from DIR` runs those with kiln-run alone. Needs a CUDA GPU, PyTorch with CUDA in this interpreter
and kiln's tools in --build-dir. The report goes to --output (default
BUILD/bench-workloads-cuda.md) and to stdout.
"""

import argparse
import datetime
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import anchors as A  # noqa: E402
import bench as B  # noqa: E402
import workloads as W  # noqa: E402
from attention_cuda import cuda_arch, cuda_torch  # noqa: E402
import prebuilt  # noqa: E402
from kiln_ir import Function  # noqa: E402

class TransformerTrain(W.Transformer):
    """The transformer encoder layer, forward and backward: the gradient of
    sum(layer(x) * dy) with respect to its parameters (dy a given
    cotangent), and that sum. The reference is PyTorch's autograd in
    float64 on the CPU."""
    name = "transformer_train"
    title = "Transformer encoder layer fwd+bwd"
    function = "transformer_loss_value_and_grad"
    tol = 2e-3

    # The key bias is left out: its gradient is zero (softmax ignores a
    # shift of a row's scores), so its float noise has no scale to be
    # checked against.
    WRT = [n for n in W.Transformer.PARAMS if n != "bk"]

    def __init__(self, quick):
        super().__init__(quick)
        self.grad = ("transformer_loss", "value-and-grad=true wrt=" +
                     ",".join(str(1 + self.PARAMS.index(n)) for n in self.WRT))

    def mlir(self):
        fn = Function("transformer_loss")
        y = self.layer(fn)
        dy = fn.arg("dy", y.shape)
        blk = fn.block
        return fn.text([blk.reduce("sum", blk.mul(y, dy), [0, 1, 2])])

    def inputs(self, rng):
        ins = super().inputs(rng)
        return ins + [rng.standard_normal((self.b, self.s, self.d), dtype=np.float32)]

    def reference(self, ins):
        import torch
        return [o.numpy() for o in self.torch_step(torch)(
            [torch.from_numpy(v).double() for v in ins])]

    def torch_step(self, torch, compiled=False):
        """step(tensors) -> [loss, grads...] in PyTorch."""
        anchor = A.Torch(1, False)
        anchor.torch = torch
        layer = anchor.transformer_layer(self)
        layer = torch.compile(layer) if compiled else layer

        def step(t):
            params = {n: v.detach().requires_grad_(True)
                      for n, v in zip(self.PARAMS, t[1:-1])}
            loss = (layer(t[0], params) * t[-1]).sum()
            grads = torch.autograd.grad(loss, [params[n] for n in self.WRT])
            return [loss.detach()] + list(grads)
        return step


class TorchTransformerTrain(A.Torch):
    """The PyTorch anchor of TransformerTrain, eager or compiled like
    `anchor`."""

    def __init__(self, anchor):
        super().__init__(anchor.threads, anchor.compiled, anchor.device)
        self.torch = anchor.torch

    def on_device(self, wl, t):
        step = wl.torch_step(self.torch, compiled=self.compiled)
        return lambda: step(t)


NAMES = ("mlp_train", "transformer", "transformer_train", "rnn_grad", "while_solver")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default=",".join(NAMES),
                   help=f"comma-separated workloads (default {','.join(NAMES)})")
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--work-dir", default=None,
                   help="modules and .npy files (default BUILD/bench-work-cuda)")
    p.add_argument("--sources-from", default=None,
                   help="directory holding NAME.mlir for each workload (skips kiln-opt)")
    p.add_argument("--no-compile-anchor", action="store_true",
                   help="leave out torch.compile (its compilation takes minutes)")
    p.add_argument("--no-jax", action="store_true", help="leave out JAX")
    p.add_argument("--time-budget", type=float, default=1.0,
                   help="seconds of timed calls per measurement (default 1)")
    p.add_argument("--output", default=None,
                   help="markdown report (default BUILD/bench-workloads-cuda.md)")
    prebuilt.add_options(p)
    args = p.parse_args(argv)
    prebuilt.check_options(p, args)
    if args.sources_from and (args.emit_modules or args.modules_from):
        p.error("--sources-from goes without --emit-modules and --modules-from")
    args.only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in args.only if n not in NAMES]
    if unknown or not args.only:
        p.error(f"--only takes some of {', '.join(NAMES)}, not {unknown or 'nothing'}")
    if args.work_dir is None:
        args.work_dir = os.path.join(args.build_dir, "bench-work-cuda")
    if args.output is None:
        args.output = os.path.join(args.build_dir, "bench-workloads-cuda.md")
    return args


def synchronized(torch, jax, fn):
    """fn, waiting for the device after each call so that a call's time is
    its work and not only its launches."""
    if jax is not None:
        return lambda: jax.block_until_ready(fn())
    return lambda: (fn(), torch.cuda.synchronize())


def measure(label, make, wl, ins, expected, budget):
    """[(label, median or None, note)] for one anchor's two timings."""
    try:
        checked, on_device, copying = make()
        err, ok = B.check(wl, checked(), expected, ins)
    except A.Unsupported as exc:
        return [(label, None, f"skipped: {exc}")]
    except Exception as exc:  # noqa: BLE001 - report any anchor failure, keep going
        return [(label, None, f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")]
    if not ok:
        return [(label, None, f"WRONG (max rel. error {err:.2e})")]
    rows = []
    for suffix, fn in ((", on device", on_device), (", with copies", copying)):
        median, fastest = B.timed(fn, budget, False)
        rows.append((label + suffix, median, f"err {err:.1e}; min {B.fmt_time(fastest)}"))
        print(f"   {label + suffix}: {B.fmt_time(median)}", flush=True)
    return rows


def torch_maker(torch, anchor, wl, ins):
    def make():
        t = [torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in ins]
        on_device = anchor.on_device(wl, t)
        return (anchor.prepare(wl, ins), synchronized(torch, None, on_device),
                anchor.prepare_copying(wl, ins))
    return make


def jax_maker(anchor, wl, ins):
    def make():
        jax = anchor.jax
        f = anchor.function(wl)
        args = [jax.device_put(v) for v in ins]
        return (anchor.prepare(wl, ins), synchronized(None, jax, lambda: f(*args)),
                anchor.prepare(wl, ins))
    return make


def selected(args):
    """The --only workloads, in NAMES' order."""
    wls = [w for w in W.all_workloads(False) + [TransformerTrain(False)]
           if w.name in args.only]
    wls.sort(key=lambda w: NAMES.index(w.name))
    return wls


def emit_modules(args):
    """--emit-modules: NAME.mlir (the derived source) and NAME.kmod of each
    --only workload, compiled for --arch."""
    prebuilt.start(args.emit_modules, args.arch)
    kiln = B.Kiln(args.build_dir, args.emit_modules, 1, compile_args=[
        "--target=cuda", f"--cuda-arch={args.arch}", *prebuilt.HOST_FLAGS],
        tools=("kiln-opt", "kiln-compile"))
    for wl in selected(args):
        source = kiln.source(wl)
        module, _ = kiln.compile(source, True)
        os.replace(module, os.path.join(args.emit_modules, wl.name + ".kmod"))
        print(os.path.join(args.emit_modules, wl.name + ".kmod"), flush=True)
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.emit_modules:
        return emit_modules(args)
    if args.modules_from and not prebuilt.complete(
            "workloads_cuda.py", args.modules_from,
            [wl.name for wl in selected(args)]):
        return 2
    torch = cuda_torch("workloads_cuda.py")
    if torch is None:
        return 77
    arch = prebuilt.arch_of(args.modules_from) if args.modules_from else \
        cuda_arch(torch)
    props = torch.cuda.get_device_properties(0)
    os.makedirs(args.work_dir, exist_ok=True)
    tools = ("kiln-run",) if args.modules_from else \
        ("kiln-compile", "kiln-run") if args.sources_from else \
        ("kiln-opt", "kiln-compile", "kiln-run")
    kiln = B.Kiln(args.build_dir, args.work_dir, 1, compile_args=[
        "--target=cuda", f"--cuda-arch={arch}"], run_args=["--device", "cuda"], tools=tools)

    anchors = [A.Torch(1, False, "cuda")]
    if not args.no_compile_anchor:
        anchors.append(A.Torch(1, True, "cuda"))
    jax = None
    if not args.no_jax:
        candidate = A.Jax(1, "cuda")
        why = candidate.available()
        jax = None if why else candidate
        if why:
            print(f"JAX absent: {why}", flush=True)
    versions = [f"torch {torch.__version__}"] + ([jax.version()] if jax else [])
    for anchor in anchors:
        anchor.available()

    rows, failures = [], []
    for wl in selected(args):
        print(f"== {wl.title}: {wl.desc}", flush=True)
        title = f"{wl.title} ({wl.desc})"
        ins = wl.inputs(np.random.default_rng(20261122))
        expected = wl.reference(ins)
        B.check_rejects_wrong_outputs(wl, expected, ins)
        paths = []
        for i, v in enumerate(ins):
            path = os.path.join(args.work_dir, f"{wl.name}.in{i}.npy")
            np.save(path, v)
            paths.append(path)
        out_dir = os.path.join(args.work_dir, f"{wl.name}.out")
        try:
            if args.modules_from:
                module = prebuilt.module(args.modules_from, wl.name)
                compiled = "compiled elsewhere"
            else:
                if args.sources_from:
                    source = os.path.join(args.work_dir, f"{wl.name}.cuda.mlir")
                    name = f"{wl.name}.grad.mlir" if wl.grad else f"{wl.name}.mlir"
                    shutil.copyfile(os.path.join(args.sources_from, name), source)
                else:
                    source = kiln.source(wl)
                module, (compile_wall, _) = kiln.compile(source, True)
                compiled = f"compiled in {compile_wall:.1f} s"
            # The first run's outputs are checked; its one timed call sizes
            # the timed runs, as bench.py does.
            outs, (once, _) = kiln.run(module, wl, paths, out_dir, 1)
            err, ok = B.check(wl, outs, expected, ins)
            if not ok:
                raise RuntimeError(f"WRONG (max rel. error {err:.2e})")
            repeat = B.choose_repeat(once, args.time_budget, False)
            _, (median, fastest) = kiln.run(module, wl, paths, out_dir, max(repeat, 3))
            _, (resident, resident_min) = kiln.run(module, wl, paths, out_dir,
                                                   max(repeat, 3), ["--device-resident"])
            rows.append((title, "kiln (CUDA), on device", resident,
                         f"err {err:.1e}; min {B.fmt_time(resident_min)}; "
                         f"{compiled}"))
            rows.append((title, "kiln (CUDA), with copies", median,
                         f"err {err:.1e}; min {B.fmt_time(fastest)}"))
            print(f"   kiln: {B.fmt_time(resident)} on device, {B.fmt_time(median)} "
                  f"with copies (err {err:.1e})", flush=True)
        except RuntimeError as exc:
            failures.append(f"kiln {wl.name}: {exc}")
            rows.append((title, "kiln (CUDA)", None,
                         "failed: " + str(exc).splitlines()[0][:150]))
        for anchor in anchors:
            if isinstance(wl, TransformerTrain):
                anchor = TorchTransformerTrain(anchor)
            rows += [(title,) + r for r in measure(
                anchor.name, torch_maker(torch, anchor, wl, ins), wl, ins, expected,
                args.time_budget)]
        if jax is not None and isinstance(wl, W.WhileSolver):
            rows += [(title,) + r for r in measure(
                "JAX", jax_maker(jax, wl, ins), wl, ins, expected, args.time_budget)]

    lines = [
        "# The bench's workloads on a CUDA GPU: kiln, PyTorch and JAX",
        "",
        f"Made by `bench/workloads_cuda.py` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: "
        f"{props.name} ({props.multi_processor_count} SMs), {', '.join(versions)}, "
        f"kiln modules for {arch}, at {B.machine.git_revision(ROOT)}. "
        "f32 everywhere, no TF32. Median time per call; the ratio column is "
        "kiln's time over each system's, measured the same way (above 1: kiln "
        "is slower).",
        "",
        "| workload | system | time | kiln / system | note |",
        "|---|---|---|---|---|",
    ]
    # Each system against kiln measured the same way: on device against
    # kiln's device-resident calls, with copies against kiln-run's plain
    # calls.
    lines += B.ratio_rows(rows, lambda title, system: (title, system.split(", ")[-1]))
    return B.finish_report(lines, args.output, failures, "workloads_cuda.py")


if __name__ == "__main__":
    sys.exit(main())
