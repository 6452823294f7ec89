#!/usr/bin/env python3
"""Pipeline parallelism (kiln-pipeline) on a GPT-2-style block stack:
bytes sent between stages per step against the analytic count, parameters
and memory per rank, the schedule's bubble and the step time, on 1 rank and
on pp = 2, pp = 4, dp x pp = 2 x 2 and pp x tp = 2 x 2 (see bench/README.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/pipeline_parallel.py --build-dir build \\
        --markdown bench/results-pipeline-parallel.md
    PYTHONPATH=build/python /usr/bin/python3 bench/pipeline_parallel.py --quick
    PYTHONPATH=build/python /usr/bin/python3 bench/pipeline_parallel.py --build-dir build \\
        --bubble --configs "1 rank;pp = 2;pp = 2, GPipe;pp x tp = 2 x 2" \\
        --markdown bench/results-pipeline-bubble.md

The model is gpt2.py's (the one bench/tensor_parallel.py splits by tensor):
its loss for one micro-batch of b sequences is traced with the `kiln`
Python package as one function, and `kiln-opt --kiln-pipeline="stages=P
microbatches=M ..."` cuts it where the stages' estimated costs balance and
derives the step every rank runs (the 1-rank baseline is the same step with
one stage: M micro-batches accumulated). The step is compiled by
kiln-compile and run under `mpirun -n N kiln-run --mesh pp=P
--shard-input 0=0:pp ...`, one thread per rank; rank 0's loss must equal
one process's.

The analytic count: each of the P - 1 stage boundaries carries each
micro-batch's activation forward and its gradient back, b S d f32 each, so
a replica's step sends 2 (P - 1) M b S d floats, whatever tp is (with
tensor-parallel stages each of a stage's T ranks sends a T-th, and the
receivers all-gather, as Megatron-LM's scatter-gather does); the counts
below are the payloads of the collective_permutes in the program the ranks
run, summed over the pairs that send.

--bubble compiles each step with `kiln-compile --profile` and has every rank
write the trace of its timed calls (`kiln-run --all-ranks-write --profile`):
a rank's measured bubble is the part of a step in which it runs none of the
step's kiln.cond actions (it waits in a collective_permute for the tick's
slowest stage, or moves data), the median over the timed calls, against
the schedule's (P - 1) / (M + P - 1).
"""

import json
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

CONFIGS = [  # (label, stages, replicas, schedule, recompute, tp)
    ("1 rank", 1, 1, "1f1b", False, 1),
    ("pp = 2", 2, 1, "1f1b", False, 1),
    ("pp = 2, GPipe", 2, 1, "gpipe", False, 1),
    ("pp = 4", 4, 1, "1f1b", False, 1),
    ("pp = 4, GPipe", 4, 1, "gpipe", False, 1),
    ("pp = 4, recomputing", 4, 1, "1f1b", True, 1),
    ("dp x pp = 2 x 2", 2, 2, "1f1b", False, 1),
    ("pp x tp = 2 x 2", 2, 1, "1f1b", False, 2),
]


def parse_args():
    p = D.mpi_bench_parser(__doc__, "bench-pipeline-parallel",
                           "2 blocks of width 64, for a smoke test")
    gpt2.add_model_args(p, batch=1)
    p.add_argument("--microbatches", type=int, default=8,
                   help="micro-batches of --batch sequences per replica and step")
    p.add_argument("--steps", type=int, default=3, help="timed calls after the first")
    p.add_argument("--bubble", action="store_true",
                   help="compile with --profile and measure each rank's bubble from its "
                        "trace (the step times then include the instrumentation)")
    p.add_argument("--configs", default=None,
                   help="the configurations to run, by label, separated by ';' "
                        "(default: all; the first must be '1 rank')")
    args = p.parse_args()
    if args.quick:
        gpt2.quick(args)
        args.batch, args.microbatches = 1, 4
    return args


def trace_loss(args):
    """The loss of one micro-batch as MLIR text: @loss(params..., x, target)."""
    kiln, knp = gpt2.import_kiln("pipeline_parallel")
    b, S, d = args.batch, args.seq, args.d_model
    loss = gpt2.loss_fn(args, b, kiln, knp)
    params = [np.zeros(shape, np.float32) for _, shape, _ in gpt2.param_shapes(args)]
    x = np.zeros((b, S, d), np.float32)
    return kiln.jit(loss).lower(params, x, x).as_text()


def annotate_tp(text, shapes):
    """`text` with each parameter's Megatron split (gpt2.BLOCK) as a
    kiln.sharding annotation over "tp", for kiln-pipeline's tp=T."""
    for i, (_, _, split) in enumerate(shapes):
        if not any(split):
            continue
        old = f'{{kiln.name = "arg{i}"}}'
        if old not in text:
            raise RuntimeError(f"no {old} in the traced loss")
        attr = ", ".join(f'"{a}"' for a in split)
        text = text.replace(old, f'{{kiln.name = "arg{i}", kiln.sharding = [{attr}]}}', 1)
    return text


def block_of(value, split, t, T):
    """Block t of T of `value` along the dimension `split` names "tp"."""
    if "tp" not in split:
        return value
    return np.split(value, T, axis=split.index("tp"))[t]


def stage_params(remark, stages):
    """Each stage's parameter arguments, from kiln-pipeline's remark
    (`stage s 25.0% #0-15, #17`)."""
    found = re.findall(r"stage (\d+) ([0-9.]+)%((?: #\d+(?:-\d+)?,?)*)", remark)
    if len(found) != stages:
        raise RuntimeError(f"kiln-pipeline reported no cut into {stages} stages:\n{remark}")
    params, shares = [], []
    for _, share, ranges in found:
        args = []
        for lo, hi in re.findall(r"#(\d+)(?:-(\d+))?", ranges):
            args += list(range(int(lo), int(hi or lo) + 1))
        params.append(args)
        shares.append(float(share))
    return params, shares


def permute_bytes(path):
    """(bytes sent by all ranks, sends) over the collective_permutes of an
    IR file: each pair sends its operand once."""
    total, sends = 0, 0
    with open(path) as f:
        for line in f:
            m = re.search(r"kiln\.collective_permute .*pairs = \[([0-9, ]*)\] : tensor<(\d+)xf32>",
                          line)
            if not m:
                continue
            pairs = len([p for p in m.group(1).split(",") if p.strip()]) // 2
            total += pairs * int(m.group(2)) * 4
            sends += pairs
    return total, sends


def elements(shape):
    """The number of elements of a tensor type's shape text ("2x8")."""
    return int(np.prod([int(n) for n in shape.split("x")])) if shape else 1


def stage_collective_bytes(path, step_name):
    """(all-reduced bytes, all-gathered bytes, all-gathered at the stage
    boundaries) per step within the stages' tensor-parallel groups: each
    call of a stage function in the step runs once on each of a stage's
    ranks; its collectives' payloads (a gather's result) are counted once
    per call, as Megatron counts them per group, and so is each gather of
    the pieces of an activation or a gradient in the step itself."""
    payload, calls, current = {}, {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*func\.func (?:private )?@(\w+)", line)
            if m:
                current = m.group(1)
                payload[current] = [0, 0]
                continue
            if current is None:
                continue
            m = re.search(r"kiln\.all_reduce .* : tensor<(?:([0-9x]+)x)?f32>$", line)
            if m:
                payload[current][0] += 4 * elements(m.group(1))
            m = re.search(r"kiln\.all_gather .* -> tensor<([0-9x]+)xf32>$", line)
            if m:
                payload[current][1] += 4 * elements(m.group(1))
            if current == step_name:
                for callee in re.findall(r"call @(\w+)\(", line):
                    calls[callee] = calls.get(callee, 0) + 1
    reduced = sum(n * payload.get(c, [0, 0])[0] for c, n in calls.items())
    gathered = sum(n * payload.get(c, [0, 0])[1] for c, n in calls.items())
    return reduced, gathered, payload.get(step_name, [0, 0])[1]


def measured_bubble(path, function="train_step"):
    """The median over the timed calls in a kiln-run --profile-trace trace of the
    part of each call of @function covered by no kiln.cond event: the time
    the rank runs none of the step's actions."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    calls = [e for e in events if e["name"] == f"call @{function}"]
    conds = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e["name"].startswith("cond @"))
    if not calls or not conds:
        raise RuntimeError(f"{path}: no call of @{function} or no kiln.cond in the trace")
    fractions = []
    for call in calls:
        low, high = call["ts"], call["ts"] + call["dur"]
        busy, covered = 0.0, low
        for begin, end in conds:
            begin, end = max(begin, covered), min(end, high)
            if end > begin:
                busy += end - begin
                covered = end
        fractions.append(1.0 - busy / call["dur"])
    return float(np.median(fractions))


def main():
    args = parse_args()
    kiln, work, started = D.start_mpi_bench(args, "bench-pipeline-parallel",
                                            "pipeline_parallel")
    b, S, d, M = args.batch, args.seq, args.d_model, args.microbatches
    shapes = gpt2.param_shapes(args)
    n_params = len(shapes)
    total_params = sum(int(np.prod(s)) for _, s, _ in shapes)
    traced = trace_loss(args)
    source = os.path.join(work, "loss.mlir")
    with open(source, "w") as f:
        f.write(traced)
    source_tp = os.path.join(work, "loss_tp.mlir")
    with open(source_tp, "w") as f:
        f.write(annotate_tp(traced, shapes))

    rng = np.random.default_rng(SEED)
    values = gpt2.initial_params(args, rng)
    replicas_max = max(c[2] for c in CONFIGS)  # the same data for any subset
    data = {name: rng.standard_normal((replicas_max * M * b, S, d)).astype(np.float32)
            for name in ("x", "target")}

    configs = CONFIGS
    if args.configs:
        wanted = [c.strip() for c in args.configs.split(";")]
        configs = [c for c in CONFIGS if c[0] in wanted]
        if not configs or configs[0][0] != "1 rank" or len(configs) != len(wanted):
            sys.exit(f"pipeline_parallel: --configs names {wanted}; the labels are "
                     f"{[c[0] for c in CONFIGS]}, '1 rank' first")
    rows, loss = [], None
    for label, P, R, schedule, recompute, T in configs:
        ranks = P * R * T
        stem = f"pp{P}_dp{R}_tp{T}_{schedule}{'_recompute' if recompute else ''}"
        step = os.path.join(work, f"{stem}.mlir")
        option = (f"--kiln-pipeline=function=loss stages={P} microbatches={M} "
                  f"batch-args={n_params},{n_params + 1} schedule={schedule} "
                  f"replicas={R} recompute={'true' if recompute else 'false'} "
                  f"tp={T} name=train_step")
        _, remark = kiln.tool("kiln-opt", source_tp if T > 1 else source, option,
                              "-o", step, stderr=True)
        params, shares = stage_params(remark, P)
        # Row s T + t: block t of stage s's parameters (the whole of those
        # not split over tp), flattened in argument order.
        rows_of = [[block_of(values[a], shapes[a][2], t, T).ravel() for a in ps]
                   for ps in params for t in range(T)]
        width = max(sum(v.size for v in row) for row in rows_of)
        packed = np.zeros((P * T, width), np.float32)
        for i, row in enumerate(rows_of):
            flat = np.concatenate(row) if row else np.zeros(0)
            packed[i, :flat.size] = flat
        inputs = [os.path.join(work, f"{stem}.packed.npy")]
        np.save(inputs[0], packed)
        for name in ("x", "target"):
            inputs.append(os.path.join(work, f"{stem}.{name}.npy"))
            np.save(inputs[-1], data[name][:R * M * b])
        module = kiln.compile(step, *(["--profile"] if args.bubble else []))
        trace = os.path.join(work, f"{stem}.trace.json") if args.bubble else None
        mesh = None
        shards = []
        if ranks > 1:
            # kiln-run's mesh only says which block of an input a rank
            # reads: rank r reads row r % (P T) of the packed parameters.
            mesh = f"dp={R},pp_tp={P * T}" if R > 1 else f"pp_tp={P * T}"
            shards = ["0=0:pp_tp"] if P * T > 1 else []
            if R > 1:
                shards += ["1=0:dp", "2=0:dp"]
        outs, t, rss = kiln.run(module, inputs, os.path.join(work, "out"), args.steps,
                                ranks=ranks, shards=shards, maxrss=True, mesh=mesh,
                                function="train_step", stats=True, profile=trace)
        got = float(np.asarray(outs[0]))
        if R == 1:
            if loss is None:
                loss = got
            elif abs(got - loss) > 1e-4 * max(1.0, abs(loss)):
                raise RuntimeError(f"{label}: loss {got} against {loss} in one process")
        sent, sends = permute_bytes(step)
        reduced, gathered, boundary = (stage_collective_bytes(step, "train_step")
                                       if T > 1 else (0, 0, 0))
        bubble = (P - 1) / (M + P - 1)
        # Each boundary's activations forward and gradients back, per replica.
        per_replica = 2 * (P - 1) * M * b * S * d * 4
        row = dict(label=label, P=P, R=R, ranks=ranks, t=t, rss=rss, peaks=kiln.peaks,
                   shares=shares,
                   held=4 * width, sent=sent, sends=sends, T=T,
                   reduced=reduced, gathered=gathered, boundary=boundary,
                   per_replica=per_replica, minimum=R * per_replica, bubble=bubble,
                   schedule=schedule, recompute=recompute,
                   measured=[measured_bubble(os.path.join(work, f"{stem}.trace.rank{r}.json"))
                             for r in range(ranks)] if trace else None)
        # The volumes are the analytic minimum, exactly (b S d divides by T).
        if sent != row["minimum"] or (T > 1 and boundary != per_replica):
            raise RuntimeError(f"{label}: sent {sent} bytes and gathered {boundary} at the "
                               f"boundaries; the analytic count is {row['minimum']}")
        rows.append(row)
        print(f"{label}: {t[0] * 1e3:.1f} ms per step, RSS per rank "
              f"{', '.join(f'{r / 1024:.1f}' for r in rss)} MiB, sent {sent / MB:.3f} MiB "
              f"(analytic {row['minimum'] / MB:.3f}), stage costs {shares}", flush=True)

    machine.write_report(render(rows, total_params, args, started), args.markdown)
    return 0


def render(rows, total_params, args, started):
    b, S, d, L, M = args.batch, args.seq, args.d_model, args.layers, args.microbatches
    one = rows[0]
    lines = [
        "# Pipeline parallelism: a GPT-2-style block stack",
        "",
        *machine.measured_lines(started, __file__),
        "",
        f"{L} blocks, d_model {d}, {args.heads} heads; {M} micro-batches of {b} "
        f"sequence(s) of {S} tokens per replica and step; {total_params:,} parameters "
        f"({4 * total_params / MB:.1f} MiB f32). The loss is cut by `stages=P` "
        f"(the stages' shares of the estimated cost below); 1F1B unless named; the "
        f"backward pass reads what the forward pass kept unless recomputing. One "
        f"thread per rank; {os.cpu_count()} cores, so more ranks than cores share them.",
        "",
        "## Communication per step (bytes sent between stages, all ranks)",
        "",
        "| configuration | sent (sends) | the analytic count | sent / analytic | "
        "stage costs (estimated) |",
        "|---|---|---|---|---|",
    ]
    for row in rows[1:]:
        ratio = f"{row['sent'] / row['minimum']:.3f}x" if row["minimum"] else "-"
        lines.append(
            f"| {row['label']} | {row['sent'] / MB:.3f} MiB ({row['sends']}) | "
            f"{row['minimum'] / MB:.3f} MiB | {ratio} | "
            f"{', '.join(f'{s:.1f}%' for s in row['shares'])} |")
    tp_rows = [row for row in rows if row["T"] > 1]
    if tp_rows:
        lines += [
            "",
            "Within tensor-parallel stages (per step, each stage's group of T ranks "
            "counted once):",
            "",
            "| configuration | all-reduced | the minimum ((4 L - 1) b S d + 2 d) M | all-reduced / "
            "the minimum | all-gathered in the stages | all-gathered at the boundaries "
            "| 2 (P - 1) M b S d |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in tp_rows:
            minimum = ((4 * L - 1) * b * S * d + 2 * d) * M * 4 * row["R"]
            lines.append(
                f"| {row['label']} | {row['reduced'] / MB:.3f} MiB | {minimum / MB:.3f} MiB | "
                f"{row['reduced'] / minimum:.3f}x | {row['gathered'] / MB:.3f} MiB | "
                f"{row['boundary'] / MB:.3f} MiB | {row['per_replica'] / MB:.3f} MiB |")
        lines += [
            "",
            "The minimum is Megatron's count plus two small sums: per block and "
            "micro-batch, two all-reduces of the activation (b S d f32) forward "
            "(after the attention's and the MLP's row-parallel products) and two "
            "backward (the input gradients of their column-parallel products), less "
            "one, since the first block's input needs no gradient; and the first "
            "layer norm's gain and bias gradients (2 d, where Megatron sums that "
            "layer norm's output gradient, b S d). kiln-partition sums each layer "
            "norm's output gradient once and computes the layer norm's input, gain "
            "and bias gradients from it (passes/parallel/README.md). The payloads "
            "are the tensors all-reduced (a ring all-reduce moves 2 (T - 1) / T of "
            "that per rank). At the boundaries, each stage's T ranks gather the "
            "pieces of each activation (forward) and each gradient (backward) they "
            "received, once per micro-batch: the payload counted is the gathered "
            "buffer (each rank receives (T - 1) / T of it).",
        ]
    lines += [
        "",
        "The analytic count: 2 (P - 1) M b S d f32 per replica (each boundary carries "
        "every micro-batch's activation forward and its gradient back), whatever T "
        "is: with tensor-parallel stages each of a stage's T ranks sends a T-th of "
        "the buffer to its counterpart and the receiving ranks all-gather the pieces "
        "(Megatron-LM's scatter-gather). With dp, each stage's "
        "gradients are all-reduced over its replicas besides, and with tp each "
        "stage's products all-reduce within its T ranks (not counted here).",
        "",
        "## Memory per rank",
        "",
        "| configuration | parameters held | 1 rank / this | peak of the code's buffers "
        "per rank (measured) | 1 rank's / this rank's (largest) | peak RSS per rank |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['label']} | {row['held'] / MB:.2f} MiB | "
            f"{one['held'] / row['held']:.2f} | "
            f"{', '.join(f'{p / MB:.1f}' for p in row['peaks'])} MiB | "
            f"{max(one['peaks']) / max(row['peaks']):.2f} | "
            f"{', '.join(f'{r / 1024:.0f}' for r in row['rss'])} MiB |")
    lines += [
        "",
        "Parameters held: the packed row of a rank's stage (the largest stage's, "
        "every row is padded to it). Peak of the code's buffers: `kiln-run --stats`, "
        "the runtime's count of every buffer the compiled step allocates (its "
        "intermediates, activations kept between a micro-batch's forward and "
        "backward passes, received activations and gradients; not the inputs, "
        "outputs, oneDNN's scratch), the most held at once over the step's calls, "
        "per rank. Each rank runs only its stage's branches, and each buffer is "
        "freed after its last use (kiln-free-after-last-use), so this is what a "
        "stage holds: GPipe keeps every micro-batch's values until the backward "
        "passes start, 1F1B at most P - s micro-batches on stage s "
        "(`spmd.pipeline_memory.n4` checks that 1F1B's peak does not grow with M). "
        "Peak RSS (`/usr/bin/time`) also counts the runtime, MPI, code, the "
        "parameters, and kiln-run's copies of inputs and outputs.",
        "",
        "## Step time",
        "",
        "| configuration | ranks | sequences | median step | min step | "
        "throughput / 1 rank's | bubble (P - 1) / (M + P - 1) | ideal throughput |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ideal = row["ranks"] * (1 - row["bubble"])
        speed = row["R"] * one["t"][0] / row["t"][0]
        lines.append(f"| {row['label']} | {row['ranks']} | {row['R'] * M * b} | "
                     f"{row['t'][0] * 1e3:.1f} ms | {row['t'][1] * 1e3:.1f} ms | "
                     f"{speed:.2f} | {row['bubble']:.3f} | {ideal:.2f} |")
    lines += [
        "",
        "Throughput: sequences per second against the 1-rank step's (dp x pp runs "
        "R times the sequences per step). The ideal is the ranks times (1 - bubble), "
        "if the stages balance, sends and tensor-parallel all-reduces cost nothing "
        "and every rank has a core. With "
        f"{os.cpu_count()} cores, 2 ranks each have a core and 4 ranks share two: "
        "the 4-rank times show the cost of time-sharing, not of the pipeline. "
        "The sends are OpenMPI's shared-memory ones.",
    ]
    measured = [row for row in rows if row["measured"] and row["P"] > 1]
    if measured:
        lines += [
            "",
            "## Bubble, measured (`--bubble`)",
            "",
            "| configuration | ranks | measured bubble per rank | mean | "
            "(P - 1) / (M + P - 1) | mean / schedule's |",
            "|---|---|---|---|---|---|",
        ]
        for row in measured:
            mean = float(np.mean(row["measured"]))
            lines.append(
                f"| {row['label']} | {row['ranks']} | "
                f"{', '.join(f'{f:.3f}' for f in row['measured'])} | {mean:.3f} | "
                f"{row['bubble']:.3f} | {mean / row['bubble']:.2f}x |")
        lines += [
            "",
            "A rank's measured bubble: the share of its step (the median over the "
            "timed calls) in which it runs none of the step's kiln.cond actions, from "
            "the trace each rank writes (`kiln-compile --profile`, `kiln-run "
            "--all-ranks-write --profile`). It counts the waits in the lockstep "
            "collective_permutes (a tick lasts as long as its slowest action: a "
            "stage's forward pass waits for another stage's backward pass in 1F1B's "
            "steady state) and the sends themselves. The step times above include "
            "the instrumentation. Where ranks share cores, waiting for a core is "
            "counted too.",
        ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
