#!/usr/bin/env python3
"""Memory per rank of data-parallel training with ZeRO stages 1, 2 and 3,
measured, against the ZeRO paper's 1/N theory (see bench/README.md).

    PYTHONPATH=build/python /usr/bin/python3 bench/zero_memory.py --build-dir build \\
        --markdown bench/results-zero-memory.md
    PYTHONPATH=build/python /usr/bin/python3 bench/zero_memory.py --quick

The model is the MLP of workloads.py (784-1024-1024-10, batch 256; --quick:
64-128-128-10, batch 32) trained with Adam, whose two state slots per
parameter are what ZeRO-1 shards. The training step is traced with the
`kiln` Python package (kiln.value_and_grad, kiln.optim.adam), rewritten by
`kiln-opt --kiln-data-parallel` (DDP) and then `--kiln-zero=stage=S`,
compiled by kiln-compile, and run under `mpirun -n N kiln-run --repeat K`
with the batch split by rows (--shard-input) and every sharded tensor fed
as this rank's block (the padded, flattened tensor split by
--shard-input). Each rank's peak resident set size is read with
/usr/bin/time (%M); the same step in one process without the rewrite gives
the single-device row.

What a rank holds of the model, with P parameters of 4 bytes, Adam's 8P
of state and N ranks (the paper's accounting):

    DDP 16P; ZeRO-1 8P + 8P/N; ZeRO-2 4P + 12P/N; ZeRO-3 16P/N.

kiln-run holds the inputs (parameters and state), the outputs of the first
call (it prints them) and those of the call in progress, so the parameters
and the state count three times there and the gradients once; the report
gives both accountings, the savings against DDP they predict and the
measured ones. The rest of a rank's RSS (the runtime, MPI, the code, the
batch, activations) is the same in every column but is not zero.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ddp as D  # noqa: E402
import machine  # noqa: E402
import workloads as W  # noqa: E402

SEED = 20261122
MB = 1024.0 * 1024.0


def parse_args():
    p = D.mpi_bench_parser(__doc__, "bench-zero-memory",
                           "a small MLP, for a smoke test")
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--steps", type=int, default=10, help="calls after the first")
    p.add_argument("--bucket-mb", type=float, nargs="+", default=[25.0, 1.0],
                   help="bucket sizes for ZeRO-2 and 3 (the first also for DDP)")
    return p.parse_args()


def trace_step(batch, dims):
    """The single-device Adam step as MLIR text. Arguments: the 6
    parameters, the step count, 6 first and 6 second moments, x, onehot;
    results: loss, parameters, count, moments."""
    try:
        import kiln
        import kiln.numpy as knp
    except ImportError as e:
        sys.exit(f"zero_memory: cannot import kiln ({e}); run with "
                 f"PYTHONPATH=<build>/python")

    def loss_fn(params, x, onehot):
        h = x
        for i in range(3):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < 2:
                h = knp.maximum(h, 0.0)
        z = h - knp.max(h, axis=1, keepdims=True)
        logp = z - knp.log(knp.sum(knp.exp(z), axis=1, keepdims=True))
        return -knp.mean(knp.sum(onehot * logp, axis=1))

    opt = kiln.optim.adam(1e-3)

    def step(params, state, x, onehot):
        loss, grads = kiln.value_and_grad(loss_fn)(params, x, onehot)
        params, state = opt.update(params, grads, state)
        return loss, params, state

    params = []
    for i in range(3):
        params.append(np.zeros((dims[i], dims[i + 1]), np.float32))
        params.append(np.zeros((dims[i + 1],), np.float32))
    state = opt.init(params)
    if list(state) != ["count", "exp_avg", "exp_avg_sq"]:
        sys.exit(f"zero_memory: unexpected Adam state layout {list(state)}")
    x = np.zeros((batch, dims[0]), np.float32)
    onehot = np.zeros((batch, dims[-1]), np.float32)
    return kiln.jit(step).lower(params, state, x, onehot).as_text()


def block_of(array, ranks):
    """`array` flattened and padded with zeros to N * ceil(numel / N)
    elements: --shard-input ARG=0 gives rank r its kiln-zero block."""
    flat = array.reshape(-1)
    c = -(-flat.size // ranks)
    return np.concatenate([flat, np.zeros(ranks * c - flat.size, flat.dtype)])


def plan_of(kiln, path):
    """Bytes of @step's intermediates after planning (kiln-compile
    --memory-report), or None."""
    for function, _, planned in kiln.memory_plan(path):
        if function == "step":
            return planned
    return None


def theory(P, N, stage):
    """(params, grads, state) bytes a rank holds, the ZeRO paper's way."""
    if stage == 0:
        return 4 * P, 4 * P, 8 * P
    return (4 * P if stage < 3 else 4 * P / N,
            4 * P if stage < 2 else 4 * P / N,
            8 * P / N)


def main():
    args = parse_args()
    wl = W.MlpTrain(args.quick)
    batch, dims = wl.batch, wl.dims
    kiln, work, started = D.start_mpi_bench(args, "bench-zero-memory", "zero_memory")

    source = os.path.join(work, "step.mlir")
    with open(source, "w") as f:
        f.write(trace_step(batch, dims))

    rng = np.random.default_rng(SEED)
    params = []
    for i in range(3):
        bound = 1.0 / np.sqrt(dims[i])
        params.append(rng.uniform(-bound, bound, (dims[i], dims[i + 1])).astype(np.float32))
        params.append(rng.uniform(-bound, bound, (dims[i + 1],)).astype(np.float32))
    P = sum(p.size for p in params)
    x = rng.standard_normal((batch, dims[0])).astype(np.float32)
    onehot = np.eye(dims[-1], dtype=np.float32)[rng.integers(0, dims[-1], batch)]
    moments = [np.zeros_like(p) for p in params]
    X, Y = 19, 20  # the batch arguments
    state_args = list(range(7, 19))
    state_results = list(range(8, 20))

    saved = {}

    def save(name, array):
        """The .npy of `array` under `name`, written on first use: the
        configurations share their inputs."""
        if name not in saved:
            saved[name] = os.path.join(work, name + ".npy")
            np.save(saved[name], array)
        return saved[name]

    def inputs_for(ranks, stage):
        """kiln-run's inputs and shards for one configuration."""
        paths, shards = [], []
        for k, p in enumerate(params):
            if stage == 3:
                paths.append(save(f"p{k}.block{ranks}", block_of(p, ranks)))
                shards.append(f"{k}=0")
            else:
                paths.append(save(f"p{k}", p))
        paths.append("0")  # the step count
        for slot in range(2):
            for k, m in enumerate(moments):
                if stage >= 1:
                    paths.append(save(f"m{k}.block{ranks}", block_of(m, ranks)))
                    shards.append(f"{7 + 6 * slot + k}=0")
                else:
                    paths.append(save(f"m{k}", m))
        paths += [save("x", x), save("onehot", onehot)]
        if ranks > 1:
            shards += [f"{X}=0", f"{Y}=0"]
        return paths, shards

    def rewrite(ranks, stage, bucket_mb):
        out = os.path.join(work, f"step.n{ranks}.zero{stage}.b{bucket_mb:g}.mlir")
        passes = [f"--kiln-data-parallel=ranks={ranks} batch-args={X},{Y} "
                  f"bucket-mb={bucket_mb:g}"]
        if stage:
            sharded_args = state_args + (list(range(6)) if stage == 3 else [])
            sharded_results = state_results + (list(range(1, 7)) if stage == 3 else [])
            passes.append(f"--kiln-zero=stage={stage} bucket-mb={bucket_mb:g} "
                          f"sharded-args={','.join(map(str, sharded_args))} "
                          f"sharded-results={','.join(map(str, sharded_results))}")
        kiln.tool("kiln-opt", source, *passes, "-o", out)
        return out

    def measure(module, ranks, stage):
        paths, shards = inputs_for(ranks, stage)
        out_dir = os.path.join(work, "out")
        outs, timing, rss = kiln.run(module, paths, out_dir, args.steps, ranks=ranks,
                                     shards=shards, maxrss=True, stats=True)
        if len(rss) != ranks:
            raise RuntimeError(f"expected {ranks} RSS figures, got {rss}")
        return outs, timing, rss, kiln.peaks

    rows = []
    single_module = kiln.compile(source)
    single_outs, single_t, single_rss, single_peaks = measure(single_module, 1, 0)
    rows.append(dict(ranks=1, stage=0, bucket=None, rss=single_rss, t=single_t,
                     peaks=single_peaks, plan=plan_of(kiln, source)))
    loss = float(np.asarray(single_outs[0]))
    for ranks in args.ranks:
        if batch % ranks:
            sys.exit(f"zero_memory: batch {batch} does not split over {ranks} ranks")
        for stage in (0, 1, 2, 3):
            buckets = args.bucket_mb if stage >= 2 else args.bucket_mb[:1]
            for bucket in buckets:
                rewritten = rewrite(ranks, stage, bucket)
                outs, t, rss, peaks = measure(kiln.compile(rewritten), ranks, stage)
                # Rank 0's loss must be the single device's: the rewrite ran.
                got = float(np.asarray(outs[0]))
                if abs(got - loss) > 1e-5 * max(1.0, abs(loss)):
                    raise RuntimeError(f"{ranks} ranks, ZeRO-{stage}: loss {got} "
                                       f"against {loss} in one process")
                rows.append(dict(ranks=ranks, stage=stage, bucket=bucket, rss=rss, t=t,
                                 peaks=peaks, plan=plan_of(kiln, rewritten)))
                print(f"{ranks} ranks, {'DDP' if stage == 0 else f'ZeRO-{stage}'}, "
                      f"bucket {bucket:g} MB: RSS per rank "
                      f"{', '.join(f'{r / 1024:.1f}' for r in rss)} MiB", flush=True)

    machine.write_report(render(rows, P, dims, batch, args, started, kiln), args.markdown)
    return 0


def render(rows, P, dims, batch, args, started, kiln):
    lines = [
        "# ZeRO memory per rank",
        "",
        *machine.measured_lines(started, __file__),
        "",
        f"MLP {'-'.join(map(str, dims))} (P = {P:,} parameters, 4 bytes each), "
        f"batch {batch}, Adam; {args.steps} calls after the first, 1 thread per "
        "rank. RSS: each rank's peak resident set (`/usr/bin/time` %M), the "
        "largest over the ranks. Theory: the ZeRO paper's bytes of parameters + "
        "gradients + optimizer state per rank; `kiln-run`: the same with the "
        "parameters and state counted three times (inputs, the first call's "
        "outputs, the current call's) and the gradients once. Plan: "
        "`kiln-compile --memory-report`, the intermediates after planning. "
        "Buffers: `kiln-run --stats`, the most bytes the step's own buffers "
        "(gradients, gathered parameters, activations, exchange buffers; not "
        "its inputs and outputs) held at once, measured by the runtime's "
        "counting allocator, the largest over the ranks.",
        "",
        "| ranks | stage | bucket | RSS per rank | saved vs DDP: measured | theory | "
        "kiln-run theory | plan | buffers (measured peak) | step |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    ddp = {}
    for row in rows:
        if row["ranks"] > 1 and row["stage"] == 0:
            ddp[row["ranks"]] = row
    for row in rows:
        N, stage = row["ranks"], row["stage"]
        rss = max(row["rss"]) * 1024
        params, grads, state = theory(P, N, stage)
        paper = params + grads + state
        held = 3 * (params + state) + grads
        base = ddp.get(N)
        if N > 1 and base and row is not base:
            bp, bg, bs = theory(P, N, 0)
            saved = (f"{(max(base['rss']) * 1024 - rss) / MB:.1f} MiB",
                     f"{(bp + bg + bs - paper) / MB:.1f} MiB",
                     f"{(3 * (bp + bs) + bg - held) / MB:.1f} MiB")
        else:
            saved = ("-", "-", "-")
        name = "one process" if N == 1 else ("DDP" if stage == 0 else f"ZeRO-{stage}")
        bucket = "-" if row["bucket"] is None else f"{row['bucket']:g} MB"
        plan = row["plan"] / MB if row["plan"] is not None else None
        lines.append(
            f"| {N} | {name} | {bucket} | {rss / MB:.1f} MiB | {saved[0]} | "
            f"{saved[1]} | {saved[2]} | "
            f"{'-' if plan is None else f'{plan:.1f} MiB'} | "
            f"{max(row['peaks']) / MB:.1f} MiB | {row['t'][0] * 1e3:.1f} ms |")
    lines += [
        "",
        f"Theory per rank in MiB (paper): DDP {16 * P / MB:.1f}; "
        + "; ".join(f"N = {N}: ZeRO-1 {(8 * P + 8 * P / N) / MB:.1f}, "
                    f"ZeRO-2 {(4 * P + 12 * P / N) / MB:.1f}, ZeRO-3 {16 * P / N / MB:.1f}"
                    for N in args.ranks) + ".",
    ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
