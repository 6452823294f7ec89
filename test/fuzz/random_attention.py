#!/usr/bin/env python3
"""Random attentions and their gradients through kiln, against numpy in float64.

    python3 test/fuzz/random_attention.py --build-dir build --seeds 0:40
    python3 test/fuzz/random_attention.py --build-dir build --seeds 0:8 \\
        --targets cpu,cuda-on-cpu,cuda-on-cpu-deterministic
    python3 test/fuzz/random_attention.py --build-dir build --seeds 0:40 \\
        --dtype bf16 --targets cpu,cuda-on-cpu

Each seed draws one kiln.attention and its kiln.attention_grad: head dims
of 64 (those of the register-tiled CUDA kernels) or, one seed in four, 8,
16 or 32 (the lanes' kernels); 0 to 2 leading dims; 1 to 199 queries and
keys, so that tiles are partial and causal blocks walk few tiles; causal
or not; an additive mask or not, broadcast along the leading dims or not,
with -inf entries (never on key 0, which every row then sees, so that no
row is left without a finite score); scores scaled by 0.5 to 4. The
program returns o, lse, dq, dk and dv; each target compiles it with
kiln-compile and runs it with kiln-run, and every result must be finite
and within 1e-4 of numpy's: max |x - ref| over the largest sum of the
absolute values of a result's terms (its rounding errors' scale, which
stays that of the operands where the terms cancel).

--dtype bf16 or f16 draws the operands and results in that type (the lse
f32), the inputs rounded to it and numpy computing on the rounded values:
on CUDA the forward is then the tensor-core kernel where the head dims
fit (multiples of 8 up to 128), which rounds the softmax weights to the type
before their product with the values, and so is the gradient, which
rounds p and ds before theirs. The tolerance is then two roundings of
the type (8e-3 in bf16, 2e-3 in f16): the result's own, and the
weights' or the forward result's that the gradient reads. The tensor-core
gradient must also match that algorithm computed by numpy (p = exp(s -
lse) and ds from the target's own o and lse, both rounded to the type)
to within two roundings of each result, four of its largest weight's
roundings that may go the other way (an f32 p or ds within 1e-7 of a
rounding midpoint rounds either way; thousands of them make a few such),
and 1e-5 of its terms' scale (the f32 sums' order): a gradient that
dropped or doubled a key's terms would pass the first check where keys
are many, not this one.

Targets: cpu, cuda-on-cpu (the CUDA backend's kernels run on the host:
the gradient's one kernel that adds dq with atomics), and
cuda-on-cpu-deterministic (--cuda-deterministic: the gradient's two
kernels), cuda (on a GPU, the default flags: half-precision attention
that both cuDNN and the tensor-core kernels take is a tuned call site of
the two, the result the variant the runtime keeps; checked against numpy
only, not against the tensor-core kernels' own algorithm), cuda-kiln (on
a GPU, --no-cuda-cudnn-attention: kiln's kernels alone, also checked
against their algorithm), cuda-cudnn-only (--no-cuda-attention-tuning:
cuDNN's fused attention alone where it takes the attention), cuda-3xtf32
(on a GPU) and
cuda-on-cpu-3xtf32 (--cuda-attention-3xtf32: the f32 forward and
gradient on tensor cores in 3xTF32 products, held to f32's tolerance),
cuda-on-cpu-3xtf32-sm90 (the same kernels as compiled for sm_90, whose
shared memory lets the gradient take one kernel with atomics up to head
dims of 64, where sm_80's takes it up to 32) and
cuda-on-cpu-3xtf32-deterministic (the gradient's two kernels). In f32
from sm_80 on, cuda is a tuned call site of the f32 kernels and the 3xTF32
ones (the result is the variant the runtime keeps, timed at the first
call), and cuda-f32-kernels (--no-cuda-attention-tuning) the f32 kernels
alone; cuda-on-cpu runs every variant, the f32 kernels' result last.
--head-dims fixes the head dims drawn (seed by seed from the list). A
failing seed's program and inputs stay in --keep. --jobs N checks N seeds
at once, reported in the seeds' order. Exit status 1 if any seed fails.

For a GPU machine without kiln-compile (or LLVM), `--emit-modules DIR
--arch sm_90` compiles the seeds' programs for the given --targets,
--dtype and --head-dims into DIR on any machine with kiln built, and
`--modules-from DIR` with the same arguments then runs those modules
with kiln-run alone (--build-dir naming a folder with bin/kiln-run and
lib/kiln/'s plug-ins); the draws, inputs and numpy's references are made
again from the seeds there, and each program must be the one DIR holds.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# The --emit-modules / --modules-from options the CUDA benches share.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "bench"))
import prebuilt  # noqa: E402

TOLERANCE = {"f32": 1e-4, "bf16": 8e-3, "f16": 2e-3}
# The tensor-core gradient against its own algorithm: the bits of the
# type's significand, and the tolerance beyond two roundings of a result.
SIGNIFICAND = {"bf16": 8, "f16": 11}
ALGORITHM_TOLERANCE = 1e-5
FLIPS = 4
CUDA_TARGETS = ("cuda-kiln", "cuda-on-cpu", "cuda-on-cpu-deterministic")
# The emulated kernels compile at -O1: -O2 takes LLVM about twice as long
# on their unrolled phases and changes nothing they compute.
TARGET_FLAGS = {
    "cpu": ["--target=cpu"],
    "cuda": ["--target=cuda"],
    "cuda-kiln": ["--target=cuda", "--no-cuda-cudnn-attention"],
    "cuda-cudnn-only": ["--target=cuda", "--no-cuda-attention-tuning"],
    "cuda-on-cpu": ["--target=cuda-on-cpu", "-O1"],
    "cuda-on-cpu-deterministic": ["--target=cuda-on-cpu", "-O1",
                                  "--cuda-deterministic"],
    "cuda-3xtf32": ["--target=cuda", "--cuda-attention-3xtf32"],
    "cuda-f32-kernels": ["--target=cuda", "--no-cuda-attention-tuning"],
    "cuda-on-cpu-3xtf32": ["--target=cuda-on-cpu", "-O1",
                           "--cuda-attention-3xtf32"],
    "cuda-on-cpu-3xtf32-sm90": ["--target=cuda-on-cpu", "-O1",
                                "--cuda-attention-3xtf32", "--cuda-arch=sm_90"],
    "cuda-on-cpu-3xtf32-deterministic": ["--target=cuda-on-cpu", "-O1",
                                         "--cuda-attention-3xtf32",
                                         "--cuda-deterministic"],
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", required=True, help="kiln's build directory")
    p.add_argument("--seeds", default="0:40", help="A:B, the seeds A to B - 1")
    p.add_argument("--targets", default="cpu,cuda-on-cpu",
                   help="comma-separated: " + ", ".join(TARGET_FLAGS))
    p.add_argument("--dtype", choices=sorted(TOLERANCE), default="f32",
                   help="the operands' and results' type (default f32)")
    p.add_argument("--head-dims", default=None,
                   help="comma-separated head dims to draw from instead "
                        "(the programs' other draws unchanged)")
    p.add_argument("--keep", default=None,
                   help="directory for the programs and inputs of failing seeds")
    p.add_argument("--jobs", type=int, default=1,
                   help="seeds checked at once (default 1)")
    prebuilt.add_options(p, arch_help="the GPU's sm_XX for the GPU targets "
                                      "(kiln-compile --cuda-arch; its default "
                                      "where not given)")
    args = p.parse_args(argv)
    prebuilt.check_options(p, args, need_arch=False)
    if args.jobs < 1:
        p.error("--jobs needs a positive count")
    first, _, last = args.seeds.partition(":")
    args.seeds = range(int(first), int(last))
    args.targets = args.targets.split(",")
    if args.head_dims is not None:
        args.head_dims = [int(d) for d in args.head_dims.split(",")]
    for target in args.targets:
        if target not in TARGET_FLAGS:
            p.error(f"unknown target '{target}'")
    return args


def tensor(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{dtype}>"


def rounded(a, dtype):
    """`a` (float32) rounded to `dtype` to nearest even, as float32 (bf16,
    which kiln-run reads from float32 files) or float16."""
    if dtype == "f16":
        return a.astype(np.float16)
    if dtype == "bf16":
        bits = a.view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
        finite = np.isfinite(a)
        return np.where(finite, bits.astype(np.uint32).view(np.float32), a)
    return a


def draw(seed, dtype="f32", head_dims=None):
    """One attention in `dtype`: its program and inputs; its head dim from
    `head_dims` where given."""
    rng = np.random.default_rng(seed)
    lead = [int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3))]
    nq, nk = (int(n) for n in rng.integers(1, 200, size=2))
    # Half precision also draws the head dims whose tensor-core kernels take
    # other tiles (CUDA: 32 keys at 96, 16 queries in the gradient's key
    # kernel at 128) and read their own rows per tile.
    others = [8, 16, 32] if dtype == "f32" else [8, 16, 32, 96, 128]
    dim = 64 if rng.random() < 0.75 else int(rng.choice(others))
    if head_dims:
        dim = head_dims[seed % len(head_dims)]
    causal = bool(rng.integers(0, 2))
    masked = bool(rng.integers(0, 2))
    scale = float(rng.uniform(0.05, 0.5))
    magnitude = float(rng.choice([0.5, 1.5, 4.0]))
    mask_shape = [1] * len(lead) + [nq, nk]
    if lead and rng.integers(0, 2):
        mask_shape[-3] = lead[-1]
    q_t, k_t = tensor(lead + [nq, dim], dtype), tensor(lead + [nk, dim], dtype)
    lse_t, m_t = tensor(lead + [nq]), tensor(mask_shape, dtype)
    attrs = ("{causal, " if causal else "{") + f"scale = {scale!r} : f64}}"
    mask, mask_type = (" mask %m", f", {m_t}") if masked else ("", "")
    args = f"%q: {q_t}, %k: {k_t}, %v: {k_t}, %do: {q_t}" + (f", %m: {m_t}" if masked else "")
    results = f"{q_t}, {lse_t}, {q_t}, {k_t}, {k_t}"
    program = (
        f"func.func @main({args}) -> ({results}) {{\n"
        f"  %o, %lse = kiln.attention %q, %k, %v{mask} {attrs} : "
        f"{q_t}, {k_t}, {k_t}{mask_type}\n"
        f"  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do{mask} "
        f"{attrs} : {q_t}, {k_t}, {k_t}, {q_t}, {lse_t}{mask_type}\n"
        f"  return %o, %lse, %dq, %dk, %dv : {results}\n}}\n")
    inputs = [
        (rng.standard_normal(lead + [nq, dim]) * magnitude).astype(np.float32),
        (rng.standard_normal(lead + [nk, dim]) * magnitude).astype(np.float32),
        rng.standard_normal(lead + [nk, dim]).astype(np.float32),
        rng.standard_normal(lead + [nq, dim]).astype(np.float32),
    ]
    if masked:
        m = rng.standard_normal(mask_shape).astype(np.float32)
        m[rng.random(m.shape) < 0.15] = -np.inf
        m[..., 0] = rng.standard_normal(m[..., 0].shape)
        inputs.append(m)
    inputs = [rounded(a, dtype) for a in inputs]
    summary = (f"lead {lead} Nq {nq} Nk {nk} dim {dim}{' causal' if causal else ''}"
               f"{' mask ' + str(mask_shape) if masked else ''} x{magnitude}")
    return program, inputs, scale, causal, summary


def scores(inputs, scale, causal):
    """The scaled scores plus the mask in float64, -inf where causal
    masking hides a key."""
    q, k = (a.astype(np.float64) for a in inputs[:2])
    s = scale * q @ np.swapaxes(k, -1, -2)
    if len(inputs) > 4:
        s = s + inputs[4].astype(np.float64)
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] <= np.arange(nq)[:, None], s, -np.inf)
    return s


def reference(inputs, scale, causal):
    """o, lse, dq, dk, dv in float64, and for each the sums of the absolute
    values of its terms: the scale its rounding errors have, which stays
    that of the operands where the terms cancel (with one key, dq and dk
    are 0 up to rounding)."""
    q, k, v, do = (a.astype(np.float64) for a in inputs[:4])
    s = scores(inputs, scale, causal)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - top)
    total = e.sum(-1, keepdims=True)
    p = e / total
    o = p @ v
    lse = (top + np.log(total))[..., 0]
    dp = do @ np.swapaxes(v, -1, -2)
    delta = (do * o).sum(-1, keepdims=True)
    ds = p * (dp - delta)
    terms = p * (np.abs(do) @ np.swapaxes(np.abs(v), -1, -2)
                 + (np.abs(do) * (p @ np.abs(v))).sum(-1, keepdims=True))
    values = [o, lse, scale * ds @ k, scale * np.swapaxes(ds, -1, -2) @ q,
              np.swapaxes(p, -1, -2) @ do]
    sizes = [p @ np.abs(v), np.maximum(np.abs(lse), 1.0),
             scale * terms @ np.abs(k), scale * np.swapaxes(terms, -1, -2) @ np.abs(q),
             np.swapaxes(p, -1, -2) @ np.abs(do)]
    return values, sizes


def tensor_core_gradient(inputs, scale, causal, o, lse, dtype):
    """dq, dk and dv as CUDA's tensor-core gradient computes them, in
    float64: p = exp(s - lse) and ds = p (dp - rowsum(dO * o)) from the
    target's own o and lse, rounded to `dtype` before their products."""
    q, k, v, do = (a.astype(np.float64) for a in inputs[:4])
    # A hidden key's score is -inf: its weight exp(-inf - lse) is 0, as the
    # kernel's (every row sees key 0, so lse is finite).
    p = np.exp(scores(inputs, scale, causal) - lse.astype(np.float64)[..., None])
    dp = do @ np.swapaxes(v, -1, -2)
    delta = (do * o.astype(np.float64)).sum(-1, keepdims=True)
    ds = p * (dp - delta)
    low = [rounded(x.astype(np.float32), dtype).astype(np.float64) for x in (p, ds)]
    results = [scale * low[1] @ k, scale * np.swapaxes(low[1], -1, -2) @ q,
               np.swapaxes(low[0], -1, -2) @ do]
    # One weight rounded the other way moves a result by the weight's
    # spacing times the row it multiplies: bounded by the largest of each.
    spacing = [roundings(x, dtype) / 2 for x in (p, ds)]
    def most(x, axis):
        return np.abs(x).max(axis=axis)
    flips = [scale * most(spacing[1], -1)[..., :, None] * most(k, -2)[..., None, :],
             scale * most(spacing[1], -2)[..., :, None] * most(q, -2)[..., None, :],
             most(spacing[0], -2)[..., :, None] * most(do, -2)[..., None, :]]
    return results, flips


def roundings(x, dtype):
    """Two roundings of `x` to `dtype`: twice its spacing at |x|."""
    exponent = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** -24)))
    return 2.0 * 2.0 ** (exponent - (SIGNIFICAND[dtype] - 1))


def compile_module(tools, target, source, module, arch):
    """Compiles `source` for `target` into `module`: None, or why not."""
    flags = TARGET_FLAGS[target]
    if arch and target in GPU_TARGETS:
        # For another machine: host code any x86-64 of the last decade runs.
        flags = flags + [f"--cuda-arch={arch}", *prebuilt.HOST_FLAGS]
    try:
        c = subprocess.run([os.path.join(tools, "kiln-compile"), source, "-o",
                            module] + flags, capture_output=True, text=True)
    except OSError as e:  # missing, or being replaced by a build
        return f"kiln-compile could not run: {e}"
    if c.returncode != 0:
        return "kiln-compile failed: " + c.stderr.strip()[-400:]
    return None


def module_name(dtype, seed, target):
    """The name of a seed's module for `target` in --emit-modules's
    folder (prebuilt.module)."""
    return f"{dtype}.{seed}.{target}"


def run(tools, target, source, inputs, work, args, seed):
    out = os.path.join(work, f"out-{target}")
    if args.modules_from:
        try:
            module = prebuilt.module(args.modules_from,
                                     module_name(args.dtype, seed, target))
        except RuntimeError as e:
            return None, str(e)
    else:
        module = os.path.join(work, f"{target}.kmod")
        problem = compile_module(tools, target, source, module, args.arch)
        if problem:
            return None, problem
    command = [os.path.join(tools, "kiln-run"), module, "--output-dir", out]
    if target in GPU_TARGETS:
        command += ["--device", "cuda"]
    for path in inputs:
        command += ["--input", path]
    try:
        r = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        return None, f"kiln-run could not run: {e}"
    if r.returncode != 0:
        return None, "kiln-run failed: " + r.stderr.strip()[-400:]
    return [np.load(os.path.join(out, f"out{i}.npy")) for i in range(5)], None


GPU_TARGETS = ("cuda", "cuda-kiln", "cuda-cudnn-only", "cuda-3xtf32",
               "cuda-f32-kernels")


PROBE = ("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %y = kiln.add %x, %x : tensor<4xf32>\n"
         "  return %y : tensor<4xf32>\n}\n")


def cuda_problem(tools, modules_from=None):
    """Why a CUDA module cannot run here (no driver, no device), or None:
    kiln-run's own check on a one-op module (compiled here, or
    --emit-modules's in `modules_from`)."""
    work = tempfile.mkdtemp(prefix="kiln-attention-probe-")
    try:
        if modules_from:
            module = os.path.join(modules_from, "probe.kmod")
        else:
            source = os.path.join(work, "probe.mlir")
            with open(source, "w") as f:
                f.write(PROBE)
            module = os.path.join(work, "probe.kmod")
            problem = compile_module(tools, "cuda", source, module, None)
            if problem:
                return "--target=cuda: " + problem[-300:]
        np.save(os.path.join(work, "x.npy"), np.ones(4, np.float32))
        r = subprocess.run([os.path.join(tools, "kiln-run"), module,
                            "--device", "cuda", "--input",
                            os.path.join(work, "x.npy")],
                           capture_output=True, text=True)
        return None if r.returncode == 0 else r.stderr.strip()[-300:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def emit_modules(args, tools):
    """--emit-modules: each seed's program and its module per target, and
    the GPU probe's module."""
    os.makedirs(args.emit_modules, exist_ok=True)
    failed = 0
    if any(t in GPU_TARGETS for t in args.targets):
        source = os.path.join(args.emit_modules, "probe.mlir")
        with open(source, "w") as f:
            f.write(PROBE)
        problem = compile_module(tools, "cuda", source,
                                 os.path.join(args.emit_modules, "probe.kmod"),
                                 args.arch)
        if problem:
            print(f"probe: {problem}", file=sys.stderr)
            failed += 1
    for seed in args.seeds:
        program = draw(seed, args.dtype, args.head_dims)[0]
        source = os.path.join(args.emit_modules, f"{args.dtype}.{seed}.mlir")
        with open(source, "w") as f:
            f.write(program)
        for target in args.targets:
            module = os.path.join(args.emit_modules,
                                  module_name(args.dtype, seed, target) + ".kmod")
            problem = compile_module(tools, target, source, module, args.arch)
            if problem:
                print(f"seed {seed} {target}: {problem}", file=sys.stderr)
                failed += 1
            else:
                print(module, flush=True)
    return 1 if failed else 0


def check_seed(args, tools, seed):
    """(the lines that report the seed, whether it failed)."""
    program, inputs, scale, causal, summary = draw(seed, args.dtype,
                                                   args.head_dims)
    refs, sizes = reference(inputs, scale, causal)
    work = tempfile.mkdtemp(prefix=f"kiln-attention-{seed}-")
    source = os.path.join(work, "attention.mlir")
    with open(source, "w") as f:
        f.write(program)
    paths = []
    for i, a in enumerate(inputs):
        paths.append(os.path.join(work, f"in{i}.npy"))
        np.save(paths[-1], a)
    problems, errors = [], []
    if args.modules_from:
        held = os.path.join(args.modules_from, f"{args.dtype}.{seed}.mlir")
        try:
            with open(held) as f:
                if f.read() != program:
                    problems.append(f"{held} is another program than this "
                                    "seed's (other --head-dims?)")
        except OSError as e:
            problems.append(str(e))
    for target in args.targets:
        if problems and args.modules_from:
            break
        got, problem = run(tools, target, source, paths, work, args, seed)
        if problem:
            problems.append(f"{target}: {problem}")
            continue
        worst = 0.0
        for name, x, ref, size in zip(("o", "lse", "dq", "dk", "dv"), got,
                                      refs, sizes):
            if x.shape != ref.shape or not np.isfinite(x).all():
                problems.append(f"{target}: {name} has shape {x.shape} "
                                f"(expected {ref.shape}) or a non-finite value")
                continue
            err = float(np.abs(x.astype(np.float64) - ref).max()
                        / max(size.max(), 1e-30))
            worst = max(worst, err)
            if not err <= TOLERANCE[args.dtype]:
                problems.append(f"{target}: {name} off by {err:.1e} (relative)")
        errors.append(f"{target} {worst:.1e}")
        if (args.dtype != "f32" and target in CUDA_TARGETS
                and inputs[0].shape[-1] % 8 == 0 and len(got) == 5):
            algorithm, flips = tensor_core_gradient(
                inputs, scale, causal, got[0], got[1], args.dtype)
            own = 0.0
            for name, x, ref, flip, size in zip(("dq", "dk", "dv"), got[2:],
                                                algorithm, flips, sizes[2:]):
                excess = (np.abs(x.astype(np.float64) - ref)
                          - roundings(ref, args.dtype) - FLIPS * flip)
                err = float(max(excess.max(), 0.0) / max(size.max(), 1e-30))
                own = max(own, err)
                if not err <= ALGORITHM_TOLERANCE:
                    problems.append(f"{target}: {name} off its algorithm by "
                                    f"{err:.1e} (relative, beyond its roundings)")
            errors[-1] += f" (algorithm {own:.1e})"
    report = [f"seed {seed}: {summary}: {', '.join(errors)}"
              f"{': FAILED' if problems else ''}"]
    report += [f"  {problem}" for problem in problems]
    if problems and args.keep:
        os.makedirs(args.keep, exist_ok=True)
        shutil.copytree(work, os.path.join(args.keep, f"seed-{seed}"),
                        dirs_exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    return report, bool(problems)


def main(argv=None):
    args = parse_args(argv)
    tools = os.path.join(args.build_dir, "bin")
    if args.emit_modules:
        return emit_modules(args, tools)
    if any(t in GPU_TARGETS for t in args.targets):
        problem = cuda_problem(tools, args.modules_from)
        if problem:
            if os.environ.get("KILN_REQUIRE_CUDA") == "1":
                print(f"random_attention.py: no GPU run (KILN_REQUIRE_CUDA=1): "
                      f"{problem}", file=sys.stderr)
                return 2
            print(f"random_attention.py: skipped: {problem}")
            return 77
    # Seeds run --jobs at a time (a GPU target's kiln-run spends most of a
    # seed's time starting CUDA and compiling its kernels), reported in order.
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for report, failed in pool.map(
                lambda seed: check_seed(args, tools, seed), args.seeds):
            print("\n".join(report), flush=True)
            failures += failed
    print(f"{len(args.seeds)} seeds, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
