#!/usr/bin/env python3
"""Tensor parallelism (kiln-partition) on a GPT-2-style block stack:
communication per step against Megatron-LM's analytic count, memory per
rank against 1/tp, and step time, on 1 rank and on tp = 2, tp = 4 and
dp x tp = 2 x 2 (see bench/README.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/tensor_parallel.py --build-dir build \\
        --markdown bench/results-tensor-parallel.md
    PYTHONPATH=build/python /usr/bin/python3 bench/tensor_parallel.py --quick

The model: L pre-norm transformer blocks (GPT-2's layout: layer norm,
causal self-attention with H heads and biased q/k/v projections, output
projection, residual; layer norm, d -> 4d -> d MLP with GELU, residual) on
a batch of B sequences of S tokens, trained by SGD on the mean squared
distance to a target (no vocabulary: the blocks are what is split). The
step is traced with the `kiln` Python package as for one device, annotated
with Megatron's layout (q, k, v and the MLP's first weight split by
columns over "tp", their biases by features, the output projection and the
MLP's second weight by rows; layer norms and the other biases whole; with
dp, the batch split over "dp"), partitioned by `kiln-opt
--kiln-partition=bucket-axis=dp` (the data-parallel gradients bucketed as
DDP sends them), compiled by kiln-compile and run under `mpirun -n N kiln-run --mesh ... --shard-input I=DIM:AXIS
--repeat K`, one thread per rank. Rank 0's loss must equal one process's.

Megatron's count: the forward pass all-reduces B S d floats twice per
block (after the attention's output projection and after the MLP), the
backward pass twice more (the gradients of the two blocks' inputs), so
4 L B S d floats per step over tp, less B S d for the first block's input
gradient where the step does not need it, each costing a rank
2 (tp - 1) / tp times its size in a ring. Data parallelism adds the gradients of a rank's
parameters (P / tp floats) over dp. The counts below are the payloads of
the all-reduces in the program a rank runs (`kiln-opt --kiln-partition`),
by the axis their groups span.
"""

import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ddp as D  # noqa: E402
import gpt2  # noqa: E402
import machine  # noqa: E402

SEED = 20261123
MB = 1024.0 * 1024.0

CONFIGS = [  # (label, mesh)
    ("1 rank", {}),
    ("tp = 2", {"tp": 2}),
    ("tp = 4", {"tp": 4}),
    ("dp x tp = 2 x 2", {"dp": 2, "tp": 2}),
]


def parse_args():
    p = D.mpi_bench_parser(__doc__, "bench-tensor-parallel",
                           "2 blocks of width 64, for a smoke test")
    gpt2.add_model_args(p)
    p.add_argument("--steps", type=int, default=3, help="timed calls after the first")
    args = p.parse_args()
    if args.quick:
        gpt2.quick(args)
    return args


def trace_step(args):
    """The single-device SGD step as MLIR text. Arguments: the parameters
    (param_shapes' order), x and target [B, S, d]; results: the loss and
    the updated parameters."""
    kiln, knp = gpt2.import_kiln("tensor_parallel")
    B, S, d = args.batch, args.seq, args.d_model
    loss_fn = gpt2.loss_fn(args, B, kiln, knp)

    def train_step(params, x, target):
        loss, grads = kiln.value_and_grad(loss_fn)(params, x, target)
        return loss, [w - 1e-3 * g for w, g in zip(params, grads)]

    params = [np.zeros(shape, np.float32) for _, shape, _ in gpt2.param_shapes(args)]
    x = np.zeros((B, S, d), np.float32)
    return kiln.jit(train_step).lower(params, x, x).as_text()


def annotate(text, mesh, shardings, result_shardings):
    """`text` with kiln.mesh on @train_step and kiln.sharding on the
    arguments (`shardings[i]`, per dimension an axis or "") and results."""
    def attr(split):
        return "kiln.sharding = [" + ", ".join(f'"{a}"' for a in split) + "]"

    def add(kind, splits):
        nonlocal text
        for i, split in enumerate(splits):
            if any(split):
                old = f'{{kiln.name = "{kind}{i}"}}'
                if old not in text:
                    raise RuntimeError(f"no {old} in the traced step")
                text = text.replace(old, f'{{kiln.name = "{kind}{i}", {attr(split)}}}', 1)

    add("arg", shardings)
    add("out", result_shardings)
    axes = ", ".join(f'"{a}"' for a in mesh)
    shape = ", ".join(str(s) for s in mesh.values())
    signature = re.search(r"func\.func @train_step\(.*?\)( -> \(.*?\))? \{", text, re.S)
    if not signature:
        raise RuntimeError("no @train_step in the traced step")
    head = signature.group(0)
    text = text.replace(head, head[:-1] + f"attributes {{kiln.mesh = {{axes = [{axes}], "
                        f"shape = array<i64: {shape}>}}}} {{", 1)
    return text


def groups_of(line):
    m = re.search(r"groups = (\[\[.*?\]\])", line)
    return m.group(1) if m else ""


def all_reduce_bytes(path, mesh):
    """({axis: payload bytes}, {axis: how many}) of the all-reduces (and
    starts) in an IR file, each attributed to the mesh axis its groups span."""
    sizes = {"f32": 4, "f64": 8, "i64": 8, "i32": 4}
    world = int(np.prod(list(mesh.values()))) if mesh else 1
    spans = {}
    for axis in mesh:
        stride = int(np.prod([mesh[a] for a in list(mesh)[list(mesh).index(axis) + 1:]]))
        first = [r for r in range(world) if (r // stride) % mesh[axis] == 0]
        rows = [[f + i * stride for i in range(mesh[axis])] for f in first]
        spans["[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in rows) + "]"] = axis
    totals = {axis: 0 for axis in mesh}
    counts = {axis: 0 for axis in mesh}
    with open(path) as f:
        for line in f:
            if not re.search(r"kiln\.all_reduce(_start)?\b", line):
                continue
            ty = re.search(r":\s*\(?tensor<((?:\d+x)*)(\w+)>", line)
            dims = [int(x) for x in ty.group(1).split("x") if x]
            axis = spans.get(groups_of(line))
            if axis is None:
                raise RuntimeError(f"an all-reduce over no mesh axis: {line}")
            totals[axis] += int(np.prod(dims)) * sizes[ty.group(2)] if dims else sizes[ty.group(2)]
            counts[axis] += 1
    return totals, counts


def main():
    args = parse_args()
    kiln, work, started = D.start_mpi_bench(args, "bench-tensor-parallel", "tensor_parallel")
    B, S, d = args.batch, args.seq, args.d_model
    shapes = gpt2.param_shapes(args)
    P = sum(int(np.prod(s)) for _, s, _ in shapes)
    single_text = trace_step(args)

    rng = np.random.default_rng(SEED)
    inputs = []
    for k, value in enumerate(gpt2.initial_params(args, rng)):
        inputs.append(os.path.join(work, f"p{k}.npy"))
        np.save(inputs[-1], value)
    for name in ("x", "target"):
        inputs.append(os.path.join(work, f"{name}.npy"))
        np.save(inputs[-1], rng.standard_normal((B, S, d)).astype(np.float32))

    rows, loss = [], None
    for label, mesh in CONFIGS:
        ranks = int(np.prod(list(mesh.values()))) if mesh else 1
        tp, dp = mesh.get("tp", 1), mesh.get("dp", 1)
        stem = "single" if not mesh else "_".join(f"{a}{n}" for a, n in mesh.items())
        source = os.path.join(work, f"{stem}.mlir")
        arg_splits = [list(split) if tp > 1 else [""] * len(split)
                      for _, _, split in shapes]
        batch_split = ["dp", "", ""] if dp > 1 else ["", "", ""]
        text = single_text
        if mesh:
            text = annotate(single_text, mesh, arg_splits + [batch_split, batch_split],
                            [[]] + arg_splits)
        with open(source, "w") as f:
            f.write(text)
        spmd = source
        if mesh:
            # The data-parallel gradients bucketed, as DDP sends them.
            spmd = os.path.join(work, f"{stem}.spmd.mlir")
            kiln.tool("kiln-opt", source, "--kiln-partition=bucket-axis=dp", "-o", spmd)
        module, plan = kiln.compile_and_plan(spmd)
        shards = []
        if mesh:
            for k, split in enumerate(arg_splits + [batch_split, batch_split]):
                for dim, axis in enumerate(split):
                    if axis:
                        shards.append(f"{k}={dim}:{axis}")
        outs, t, rss = kiln.run(module, inputs, os.path.join(work, "out"), args.steps,
                                ranks=ranks, shards=shards, maxrss=True,
                                mesh=",".join(f"{a}={n}" for a, n in mesh.items()) or None)
        got = float(np.asarray(outs[0]))
        if loss is None:
            loss = got
        elif abs(got - loss) > 1e-4 * max(1.0, abs(loss)):
            raise RuntimeError(f"{label}: loss {got} against {loss} in one process")
        held = 0
        for _, shape, split in shapes:
            n = int(np.prod(shape))
            held += 4 * (n // tp if tp > 1 and any(split) else n)
        comm, messages = all_reduce_bytes(spmd, mesh) if mesh else ({}, {})
        row = dict(label=label, ranks=ranks, tp=tp, dp=dp, t=t, rss=rss,
                   params=held, plan=plan[1] if plan else None, comm=comm,
                   messages=messages)
        rows.append(row)
        print(f"{label}: {t[0] * 1e3:.1f} ms per step, RSS per rank "
              f"{', '.join(f'{r / 1024:.1f}' for r in rss)} MiB, all-reduced "
              f"{row['comm']}", flush=True)

    machine.write_report(render(rows, P, args, started), args.markdown)
    return 0


def render(rows, P, args, started):
    B, S, d, L = args.batch, args.seq, args.d_model, args.layers
    one = rows[0]
    lines = [
        "# Tensor parallelism: a GPT-2-style block stack",
        "",
        *machine.measured_lines(started, __file__),
        "",
        f"{L} blocks, d_model {d}, {args.heads} heads, {B} sequences of {S} tokens; "
        f"{P:,} parameters ({4 * P / MB:.1f} MiB f32). One thread per rank; "
        f"{os.cpu_count()} cores, so more ranks than cores share them.",
        "",
        "## Communication per step (bytes all-reduced by a rank)",
        "",
        "| configuration | over tp (all-reduces) | the minimum | over dp (all-reduces) | "
        "gradients of a rank | ring cost per rank |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows[1:]:
        tp, dp = row["tp"], row["dp"]
        minimum = ((4 * L - 1) * (B // dp) * S * d + 2 * d) * 4
        comm_tp, comm_dp = row["comm"].get("tp", 0), row["comm"].get("dp", 0)
        ring = (2 * (tp - 1) / tp) * comm_tp + (2 * (dp - 1) / dp) * comm_dp
        lines.append(
            f"| {row['label']} | {comm_tp / MB:.3f} MiB ({row['messages'].get('tp', 0)}) | "
            f"{minimum / MB:.3f} MiB ({comm_tp / minimum:.3f}x) | "
            f"{comm_dp / MB:.3f} MiB ({row['messages'].get('dp', 0)}) | "
            f"{row['params'] / MB:.3f} MiB | {ring / MB:.3f} MiB |")
    lines += [
        "",
        "The minimum is Megatron's count for this step: two all-reduces of (B / dp) S d "
        "f32 per block in the forward pass and two in the backward pass, less the "
        "first block's input gradient, which a step that does not return the input's "
        "gradient never needs, plus the first layer norm's gain and bias gradients "
        "(Megatron sums the gradient of that layer norm's output instead, B S d): "
        "(4 L - 1) (B / dp) S d + 2 d. The gradients of a rank are its "
        "parameters' size, what DDP all-reduces over dp. The ring cost is 2 (n - 1) / n "
        "times each axis's payload.",
        "",
        "## Memory per rank",
        "",
        "| configuration | parameters held | 1 rank / this | planned intermediates | "
        "1 rank / this | peak RSS per rank |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        plan = row["plan"]
        lines.append(
            f"| {row['label']} | {row['params'] / MB:.2f} MiB | "
            f"{one['params'] / row['params']:.2f} | "
            f"{plan / MB:.2f} MiB | {one['plan'] / plan:.2f} | "
            f"{', '.join(f'{r / 1024:.0f}' for r in row['rss'])} MiB |"
            if plan else f"| {row['label']} | {row['params'] / MB:.2f} MiB | | | | |")
    lines += [
        "",
        "Parameters held: the weights a rank's program takes (split ones 1/tp, layer "
        "norms and the whole biases on every rank). Planned intermediates: "
        "`kiln-compile --memory-report` of the program a rank runs (activations, "
        "gradients and workspace after buffer reuse). Peak RSS (`/usr/bin/time`) also "
        "counts the runtime, MPI, code and kiln-run's copies of inputs and outputs.",
        "",
        "## Step time",
        "",
        "| configuration | ranks | median step | min step | 1 rank / this |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row['label']} | {row['ranks']} | {row['t'][0] * 1e3:.1f} ms | "
                     f"{row['t'][1] * 1e3:.1f} ms | {one['t'][0] / row['t'][0]:.2f} |")
    lines += [
        "",
        f"With {os.cpu_count()} cores, 2 ranks each have a core and 4 ranks share two: "
        "the 4-rank times show the cost of time-sharing, not of the partition. The "
        "all-reduces are OpenMPI's shared-memory ones.",
    ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
