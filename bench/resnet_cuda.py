#!/usr/bin/env python3
"""ResNet-50 and its convolutions on an NVIDIA GPU: kiln against PyTorch
eager, on the same GPU and the same inputs.

    python3 bench/resnet_cuda.py
    python3 bench/resnet_cuda.py --emit-modules DIR --arch sm_90   # no GPU
    python3 bench/resnet_cuda.py --modules-from DIR                # no kiln-compile

The workloads, at batch 32, f32 NCHW:

- every distinct convolution of ResNet-50 (workloads.RESNET50_CONVS) on
  its own: kiln.conv against torch.nn.functional.conv2d;
- ResNet-50 inference (torchvision's v1.5 layout: 7x7/2 stem, 3x3/2 max
  pool, bottlenecks [3, 4, 6, 3] with the stride on the 3x3, global
  average pool, 1000-way linear), with batch norm folded into the
  convolutions' biases, as an exported inference model has it;
- its training step: the loss sum(logits * dy) (dy a given cotangent) and
  its gradient with respect to every parameter, kiln's derived by
  `kiln-opt --kiln-grad`, PyTorch's by autograd. Batch norm stays folded
  on both sides (kiln has no batch-norm op to train), so this is the
  network's convolutions, activations and pooling forward and backward.

Each runs twice: "f32" (kiln's default, f32 products and convolutions
exact; PyTorch with allow_tf32 off for cuBLAS and cuDNN) and "tf32" (kiln
compiled with --cuda-tf32; PyTorch with TF32 allowed, its default for
convolutions). kiln's modules are compiled with `kiln-compile
--target=cuda` and timed by kiln-run with --device-resident (inputs copied
to the device once, outputs left there): its median time per call.
PyTorch's tensors are on the device and each call is synchronized. Every
output is checked against PyTorch in float64 on the same GPU before it is
timed (largest absolute error over the largest reference magnitude: at
most 2e-3 for f32, 3e-2 for TF32; for the training step's gradients 1e-2
and 0.3, since its bias gradients sum tens of thousands of terms that
largely cancel: with TF32 both systems' come out about 15% off); a system
that disagrees is reported WRONG.

--emit-modules DIR writes the modules' MLIR and compiles them for --arch
into DIR without a GPU or PyTorch; --modules-from DIR then takes them
from there, so that the machine with the GPU needs only kiln-run. The
report goes to --output (default BUILD/bench-resnet-cuda.md) and stdout.
"""

import argparse
import datetime
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402
import prebuilt  # noqa: E402
import workloads as W  # noqa: E402
from kiln_ir import Function  # noqa: E402

BATCH = 32
STAGES = ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2))
VARIANTS = ("f32", "tf32")
TOLERANCE = {"f32": 2e-3, "tf32": 3e-2}
TRAIN_TOLERANCE = {"f32": 1e-2, "tf32": 0.3}


def resnet50_params():
    """[(name, shape, conv stride, conv padding)] in argument order; the
    stride and padding are None for biases and the linear layer."""
    params = [("stem.w", (64, 3, 7, 7), 2, 3), ("stem.b", (64,), None, None)]
    cin = 64
    for stage, (blocks, width, stride) in enumerate(STAGES):
        for block in range(blocks):
            s = stride if block == 0 else 1
            name = f"s{stage}b{block}"
            params += [(f"{name}.c1.w", (width, cin, 1, 1), 1, 0),
                       (f"{name}.c1.b", (width,), None, None),
                       (f"{name}.c2.w", (width, width, 3, 3), s, 1),
                       (f"{name}.c2.b", (width,), None, None),
                       (f"{name}.c3.w", (4 * width, width, 1, 1), 1, 0),
                       (f"{name}.c3.b", (4 * width,), None, None)]
            if block == 0:
                params += [(f"{name}.down.w", (4 * width, cin, 1, 1), s, 0),
                           (f"{name}.down.b", (4 * width,), None, None)]
            cin = 4 * width
    params += [("fc.w", (2048, 1000), None, None), ("fc.b", (1000,), None, None)]
    return params


PARAMS = resnet50_params()


def conv_ir(blk, x, w, b, stride, pad):
    n, _, h, _ = x.shape
    o, _, k, _ = w.shape
    e = (h + 2 * pad - k) // stride + 1
    y = blk._new((n, o, e, e), "f32",
                 f"kiln.conv {x.name}, {w.name}, strides = [{stride}, {stride}], "
                 f"padding_low = [{pad}, {pad}], padding_high = [{pad}, {pad}], "
                 f"lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : "
                 f"{x.type}, {w.type}")
    return blk.add(y, blk.broadcast(b, y.shape, [1]))


def resnet50_ir(fn, x, args):
    """The logits of ResNet-50 on x, the parameters by name in `args`."""
    blk = fn.block
    spec = {name: (stride, pad) for name, _, stride, pad in PARAMS}

    def conv(v, prefix):
        return conv_ir(blk, v, args[prefix + ".w"], args[prefix + ".b"],
                       *spec[prefix + ".w"])

    h = blk.unary("relu", conv(x, "stem"))
    n, c, s, _ = h.shape
    e = (s + 2 - 3) // 2 + 1
    h = blk._new((n, c, e, e), "f32",
                 f"kiln.reduce_window {h.name}, kind = max, window = [1, 1, 3, 3], "
                 f"strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], "
                 f"padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : {h.type}")
    for stage, (blocks, _, _) in enumerate(STAGES):
        for block in range(blocks):
            name = f"s{stage}b{block}"
            y = blk.unary("relu", conv(h, name + ".c1"))
            y = blk.unary("relu", conv(y, name + ".c2"))
            y = conv(y, name + ".c3")
            shortcut = conv(h, name + ".down") if block == 0 else h
            h = blk.unary("relu", blk.add(y, shortcut))
    pooled = blk.scale(blk.reduce("sum", h, [2, 3]), 1.0 / (h.shape[2] * h.shape[3]))
    logits = blk.matmul(pooled, args["fc.w"])
    return blk.add(logits, blk.broadcast(args["fc.b"], logits.shape, [1]))


def resnet50_module(train):
    fn = Function("resnet50_loss" if train else "resnet50")
    x = fn.arg("x", (BATCH, 3, 224, 224))
    args = {name: fn.arg(name.replace(".", "_"), shape) for name, shape, _, _ in PARAMS}
    logits = resnet50_ir(fn, x, args)
    if not train:
        return fn.text([logits])
    dy = fn.arg("dy", logits.shape)
    return fn.text([fn.block.reduce("sum", fn.block.mul(logits, dy), [0, 1])])


def resnet50_inputs(rng, train):
    """x, the parameters (He-scaled weights, small biases) and, for the
    training step, dy."""
    ins = [rng.standard_normal((BATCH, 3, 224, 224), dtype=np.float32)]
    for _, shape, _, _ in PARAMS:
        if len(shape) == 1:
            v = 0.1 * rng.standard_normal(shape, dtype=np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
            v = rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))
        ins.append(v.astype(np.float32))
    if train:
        ins.append(rng.standard_normal((BATCH, 1000), dtype=np.float32) / np.float32(BATCH))
    return ins


def torch_resnet50(torch, t, train):
    """A zero-argument callable running the workload on the tensors t."""
    F = torch.nn.functional
    names = [name for name, _, _, _ in PARAMS]
    spec = {name: (stride, pad) for name, _, stride, pad in PARAMS}

    def forward(x, p):
        def conv(v, prefix):
            stride, pad = spec[prefix + ".w"]
            return F.conv2d(v, p[prefix + ".w"], p[prefix + ".b"], stride, pad)
        h = F.max_pool2d(torch.relu(conv(x, "stem")), 3, 2, 1)
        for stage, (blocks, _, _) in enumerate(STAGES):
            for block in range(blocks):
                name = f"s{stage}b{block}"
                y = torch.relu(conv(h, name + ".c1"))
                y = torch.relu(conv(y, name + ".c2"))
                y = conv(y, name + ".c3")
                h = torch.relu(y + (conv(h, name + ".down") if block == 0 else h))
        return h.mean((2, 3)) @ p["fc.w"] + p["fc.b"]

    if not train:
        p = dict(zip(names, t[1:]))

        def run():
            with torch.no_grad():
                return [forward(t[0], p)]
        return run

    def step():
        params = [v.detach().requires_grad_(True) for v in t[1:-1]]
        loss = (forward(t[0], dict(zip(names, params))) * t[-1]).sum()
        return [loss.detach()] + list(torch.autograd.grad(loss, params))
    return step


class Workload:
    """What bench.Kiln.run needs: the function's name."""

    def __init__(self, name, function, title, desc, mlir, inputs, torch_fn):
        self.name, self.function, self.title, self.desc = name, function, title, desc
        self.mlir, self.inputs, self.torch_fn = mlir, inputs, torch_fn
        self.grad = None


def workloads():
    wls = []
    for i, shape in enumerate(W.RESNET50_CONVS):
        conv = W.Conv(i, BATCH, *shape)

        def torch_conv(torch, t, conv=conv):
            F = torch.nn.functional
            return lambda: [F.conv2d(t[0], t[1], None, conv.stride, conv.pad)]
        wls.append(Workload(f"conv{i}", "conv", conv.title, conv.desc, conv.mlir,
                            conv.inputs, torch_conv))
    wls.append(Workload("resnet50", "resnet50", "ResNet-50 inference",
                        f"batch {BATCH}, 224x224, batch norm folded",
                        lambda: resnet50_module(False),
                        lambda rng: resnet50_inputs(rng, False),
                        lambda torch, t: torch_resnet50(torch, t, False)))
    wls.append(Workload("resnet50_train", "resnet50_loss_value_and_grad",
                        "ResNet-50 training step",
                        f"batch {BATCH}, loss and the gradient of all {len(PARAMS)} "
                        "parameters",
                        lambda: resnet50_module(True),
                        lambda rng: resnet50_inputs(rng, True),
                        lambda torch, t: torch_resnet50(torch, t, True)))
    return wls


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--work-dir", default=None,
                   help="modules and .npy files (default BUILD/bench-work-resnet)")
    p.add_argument("--only", default=None,
                   help="comma-separated workloads (conv0..conv19, resnet50, resnet50_train)")
    p.add_argument("--variants", default=",".join(VARIANTS))
    prebuilt.add_options(p)
    p.add_argument("--time-budget", type=float, default=1.0,
                   help="seconds of timed calls per measurement (default 1)")
    p.add_argument("--output", default=None)
    args = p.parse_args(argv)
    args.variants = [v for v in args.variants.split(",") if v]
    if any(v not in VARIANTS for v in args.variants):
        p.error(f"--variants takes some of {', '.join(VARIANTS)}")
    if args.work_dir is None:
        args.work_dir = os.path.join(args.build_dir, "bench-work-resnet")
    if args.output is None:
        args.output = os.path.join(args.build_dir, "bench-resnet-cuda.md")
    prebuilt.check_options(p, args)
    return args


def emit_modules(args, wls, host=prebuilt.HOST_FLAGS):
    """Writes NAME.mlir and NAME.VARIANT.kmod for every workload into DIR,
    their host code for `host` (kiln-compile flags; by default any
    x86-64-v3, for another machine)."""
    prebuilt.start(args.emit_modules, args.arch)
    kiln = B.Kiln(args.build_dir, args.emit_modules, 1)
    for wl in wls:
        path = os.path.join(args.emit_modules, f"{wl.name}.mlir")
        with open(path, "w") as f:
            f.write(wl.mlir())
        if wl.name == "resnet50_train":
            wrt = ",".join(str(i) for i in range(1, 1 + len(PARAMS)))
            text = kiln.tool("kiln-opt", path, "--kiln-grad=function=resnet50_loss "
                             f"value-and-grad=true wrt={wrt}")
            with open(path, "w") as f:
                f.write(W.only_function(text, wl.function))
        for variant in args.variants:
            out = os.path.join(args.emit_modules, f"{wl.name}.{variant}.kmod")
            extra = ["--cuda-tf32"] if variant == "tf32" else []
            kiln.tool("kiln-compile", path, "-o", out, "--target=cuda",
                      f"--cuda-arch={args.arch}", *extra, *host)
            print(f"{out}", flush=True)
    return 0


def main(argv=None):
    args = parse_args(argv)
    wls = workloads()
    if args.only:
        only = set(args.only.split(","))
        wls = [w for w in wls if w.name in only]
    if args.emit_modules:
        return emit_modules(args, wls)
    if args.modules_from and not prebuilt.complete(
            "resnet_cuda.py", args.modules_from,
            [f"{wl.name}.{variant}" for wl in wls for variant in args.variants]):
        return 2
    from attention_cuda import cuda_arch, cuda_torch
    torch = cuda_torch("resnet_cuda.py")
    if torch is None:
        return 77
    arch = prebuilt.arch_of(args.modules_from) if args.modules_from else \
        cuda_arch(torch)
    props = torch.cuda.get_device_properties(0)
    os.makedirs(args.work_dir, exist_ok=True)
    tools = ("kiln-run",) if args.modules_from else ("kiln-opt", "kiln-compile", "kiln-run")
    kiln = B.Kiln(args.build_dir, args.work_dir, 1, run_args=["--device", "cuda"],
                  tools=tools)
    if not args.modules_from:
        emit_args = argparse.Namespace(**vars(args))
        emit_args.emit_modules, emit_args.arch = args.work_dir, arch
        emit_modules(emit_args, wls, host=())
    module_dir = args.modules_from or args.work_dir

    rows, failures = [], []
    for wl in wls:
        ins = wl.inputs(np.random.default_rng(20261126))
        paths = []
        for i, v in enumerate(ins):
            path = os.path.join(args.work_dir, f"{wl.name}.in{i}.npy")
            np.save(path, v)
            paths.append(path)
        t64 = [torch.from_numpy(v).cuda().double() for v in ins]
        expected = [o.cpu().numpy() for o in wl.torch_fn(torch, t64)()]
        del t64
        t = [torch.from_numpy(v).cuda() for v in ins]
        for variant in args.variants:
            title = f"{wl.title}, {variant} ({wl.desc})"
            print(f"== {title}", flush=True)
            tol = (TRAIN_TOLERANCE if wl.name == "resnet50_train" else TOLERANCE)[variant]
            module = os.path.join(module_dir, f"{wl.name}.{variant}.kmod")
            out_dir = os.path.join(args.work_dir, f"{wl.name}.out")
            try:
                outs, (once, _) = kiln.run(module, wl, paths, out_dir, 1,
                                           ["--device-resident"])
                err = max(W.rel_error(g, w) for g, w in zip(outs, expected))
                if len(outs) != len(expected) or err > tol:
                    raise RuntimeError(f"WRONG (max rel. error {err:.2e})")
                repeat = max(B.choose_repeat(once, args.time_budget, False), 5)
                _, (median, fastest) = kiln.run(module, wl, paths, out_dir, repeat,
                                                ["--device-resident"])
                rows.append((title, "kiln (CUDA)", median,
                             f"err {err:.1e}; min {B.fmt_time(fastest)}"))
                print(f"   kiln: {B.fmt_time(median)} (err {err:.1e})", flush=True)
            except RuntimeError as exc:
                failures.append(f"kiln {wl.name} {variant}: {exc}")
                rows.append((title, "kiln (CUDA)", None,
                             "failed: " + str(exc).splitlines()[0][:150]))
            tf32 = variant == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            run = wl.torch_fn(torch, t)
            got = [o.cpu().numpy() for o in run()]
            err = max(W.rel_error(g, w) for g, w in zip(got, expected))
            if err > tol:
                rows.append((title, "PyTorch eager", None, f"WRONG (max rel. error {err:.2e})"))
                continue
            median, fastest = B.timed(lambda: (run(), torch.cuda.synchronize()),
                                      args.time_budget, False)
            rows.append((title, "PyTorch eager", median,
                         f"err {err:.1e}; min {B.fmt_time(fastest)}"))
            print(f"   PyTorch eager: {B.fmt_time(median)} (err {err:.1e})", flush=True)
        del t
        torch.cuda.empty_cache()

    lines = [
        "# ResNet-50 and its convolutions on a CUDA GPU: kiln and PyTorch",
        "",
        f"Made by `bench/resnet_cuda.py` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: "
        f"{props.name} ({props.multi_processor_count} SMs), torch {torch.__version__} "
        f"(cuDNN {torch.backends.cudnn.version()}), kiln modules for {arch}, at "
        f"{B.machine.git_revision(ROOT)}. Median time per call, both on device; "
        "the ratio column is kiln's time over PyTorch's (above 1: kiln is "
        "slower).",
        "",
        "| workload | system | time | kiln / PyTorch | note |",
        "|---|---|---|---|---|",
    ]
    lines += B.ratio_rows(rows, lambda title, system: title)
    return B.finish_report(lines, args.output, failures, "resnet_cuda.py")


if __name__ == "__main__":
    sys.exit(main())
