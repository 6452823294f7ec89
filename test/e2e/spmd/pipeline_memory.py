"""What a pipeline stage holds, measured: GPipe by M micro-batches, 1F1B by
the number of stages.

    pipeline_memory.py KILN_OPT KILN_COMPILE KILN_RUN MPIRUN PROGRAM WORKDIR

PROGRAM is steps/pipeline_memory.mlir, a four-stage loss. For each schedule
and M in (6, 10, 14), kiln-opt --kiln-pipeline derives the step without
recomputation (each forward action keeps its values for the backward one),
kiln-compile compiles it, and `mpirun -n 4 kiln-run --stats` runs it: each
rank reports the most bytes its code's buffers held during the step (the
runtime counts every allocation the code makes). With K_s the bytes stage s
keeps per micro-batch in flight:

- GPipe runs every forward pass before any backward one, so stage s holds
  all M micro-batches: its peak grows by exactly K_s per micro-batch, and
  K_s is at least one activation (32 KiB).
- 1F1B (PipeDream-flush) lets at most P - s micro-batches into stage s
  before their backward passes: its peak is the same for every M > P, it
  exceeds GPipe's base (its peak less M K_s) by at most (P + 1) K_s - the
  micro-batches in flight, and the activation and gradient buffers that the
  lockstep exchange of a tick receives before the stage runs its action -
  and by no more on a stage than on the one before it (stage s holds P - s
  micro-batches: 5, 4, 3.5 and 2 K_s here).

Both schedules must compute the same loss and gradients. Exits 77 (skip)
without mpirun.
"""

import os
import re
import sys

import numpy as np

from spmd_tools import run, tool_arguments

STAGES = 4
WIDTH, ROWS = 128, 64
MICROBATCHES = (6, 10, 14)
ACTIVATION_BYTES = ROWS * WIDTH * 4


def peaks(output):
    """{rank: peak bytes} from `kiln-run --stats --all-ranks-write`."""
    found = {}
    for rank, peak in re.findall(r"rank (\d+): memory: peak (\d+) bytes",
                                 output):
        found[int(rank)] = int(peak)
    if sorted(found) != list(range(STAGES)):
        sys.exit("kiln-run --stats printed no memory line for every rank:\n"
                 + output)
    return [found[rank] for rank in range(STAGES)]


def main():
    opt, compile_tool, run_tool, mpirun, program, work = tool_arguments()
    rng = np.random.default_rng(11)
    packed = (rng.standard_normal((STAGES, WIDTH * WIDTH)) * 0.05).astype(
        np.float32)
    packed_path = os.path.join(work, "packed.npy")
    np.save(packed_path, packed)

    measured, results = {}, {}
    for m in MICROBATCHES:
        data = []
        for name in ("x", "y"):
            path = os.path.join(work, "%s%d.npy" % (name, m))
            np.save(path, rng.standard_normal((m * ROWS, WIDTH)).astype(
                np.float32))
            data.append(path)
        for schedule in ("gpipe", "1f1b"):
            tag = "%s_%d" % (schedule, m)
            step = os.path.join(work, tag + ".mlir")
            run([opt, program, "--kiln-pipeline=function=loss microbatches=%d "
                 "batch-args=4,5 schedule=%s recompute=false" % (m, schedule),
                 "-o", step])
            module = os.path.join(work, tag + ".kmod")
            run([compile_tool, step, "-o", module])
            out = os.path.join(work, "out_" + tag)
            output = run([mpirun, "--allow-run-as-root", "--oversubscribe",
                          "-n", str(STAGES), run_tool, module, "--function",
                          "loss_pipeline", "--input", packed_path, "--input",
                          data[0], "--input", data[1], "--shard-input", "0=0",
                          "--stats", "--all-ranks-write", "--output-dir", out])
            measured[schedule, m] = peaks(output)
            results[schedule, m] = [
                (float(np.load(os.path.join(out, "out0.rank%d.npy" % r))),
                 np.load(os.path.join(out, "out1.rank%d.npy" % r)))
                for r in range(STAGES)]

    failures = []
    for m in MICROBATCHES:
        for rank in range(STAGES):
            (loss_g, grad_g), (loss_f, grad_f) = (results["gpipe", m][rank],
                                                  results["1f1b", m][rank])
            scale = max(1.0, float(np.abs(grad_g).max()))
            if (abs(loss_g - loss_f) > 1e-5 * max(1.0, abs(loss_g)) or
                    float(np.abs(grad_g - grad_f).max()) > 1e-5 * scale):
                failures.append("M=%d rank %d: GPipe and 1F1B disagree" %
                                (m, rank))

    print("peak bytes of the code's buffers per rank (stage)")
    print("%-8s %s" % ("", " ".join("%12s" % ("M=%d" % m) for m in MICROBATCHES)))
    for schedule in ("gpipe", "1f1b"):
        for rank in range(STAGES):
            print("%-5s s%d %s" % (schedule, rank, " ".join(
                "%12d" % measured[schedule, m][rank] for m in MICROBATCHES)))

    first, step = MICROBATCHES[0], MICROBATCHES[1] - MICROBATCHES[0]
    held_before = 0.0
    for rank in range(STAGES):
        gpipe = [measured["gpipe", m][rank] for m in MICROBATCHES]
        growth = [b - a for a, b in zip(gpipe, gpipe[1:])]
        per_microbatch = growth[0] / step
        if len(set(growth)) != 1 or per_microbatch < ACTIVATION_BYTES:
            failures.append("stage %d: GPipe's peak %s does not grow by the "
                            "same number (>= %d) of bytes per micro-batch" %
                            (rank, gpipe, ACTIVATION_BYTES))
            continue
        base = gpipe[0] - first * per_microbatch
        bound = base + (STAGES + 1) * per_microbatch
        onef = [measured["1f1b", m][rank] for m in MICROBATCHES]
        if len(set(onef)) != 1:
            failures.append("stage %d: 1F1B's peak changes with M: %s" %
                            (rank, onef))
        if max(onef) > bound:
            failures.append("stage %d: 1F1B's peak %d exceeds GPipe's base %d "
                            "+ (P + 1) x %d = %d" %
                            (rank, max(onef), base, per_microbatch, bound))
        held = (onef[-1] - base) / per_microbatch
        if rank and held > held_before:
            failures.append("stage %d holds %.2f micro-batches under 1F1B, "
                            "more than stage %d's %.2f" %
                            (rank, held, rank - 1, held_before))
        held_before = held
        print("stage %d: %d bytes kept per micro-batch; 1F1B holds %.2f "
              "micro-batches' worth above GPipe's base (P - s = %d in flight), "
              "GPipe %d at M=%d" % (rank, per_microbatch, held,
                                    STAGES - rank, MICROBATCHES[-1],
                                    MICROBATCHES[-1]))
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
