"""A program annotated with a device mesh, through the tools as a user runs it.

    partitioned_run.py KILN_COMPILE KILN_RUN MPIRUN PROGRAM WORKDIR

kiln-compile partitions PROGRAM (a training step whose function names the
mesh dp=2, tp=2) into the program of one rank; `mpirun -n 4 kiln-run
--mesh dp=2,tp=2 --shard-input I=DIM:AXIS` runs it on its blocks of the
inputs. The same step with its annotations removed, compiled and run in one
process, is the reference: every rank's loss must equal it, and every
rank's updated weights must be its tensor-parallel block of the reference's
(within 1e-5 of the largest magnitude). Exits 77 (skip) without mpirun.
"""

import os
import re
import sys

import numpy as np

from spmd_tools import run

MESH = {"dp": 2, "tp": 2}
# Per input: (dimension, axis) it is split over; per output the same.
INPUT_SPLITS = [(0, "dp"), (0, "dp"), (1, "tp"), (0, "tp")]
OUTPUT_SPLITS = [None, (1, "tp"), (0, "tp")]


def block(array, split, rank):
    """Rank `rank`'s block of `array` split as `split` says."""
    if split is None:
        return array
    dim, axis = split
    names = list(MESH)
    stride = 1
    for later in names[names.index(axis) + 1:]:
        stride *= MESH[later]
    parts = MESH[axis]
    index = (rank // stride) % parts
    size = array.shape[dim] // parts
    return np.take(array, range(index * size, (index + 1) * size), axis=dim)


def main():
    compile_tool, run_tool, mpirun, program, work = sys.argv[1:6]
    if not mpirun:
        print("SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    source = open(program).read()
    single = re.sub(r" \{kiln\.sharding = \[[^]]*\]\}", "", source)
    single = re.sub(r"attributes \{kiln\.mesh = .*\} \{", "{", single)
    assert "kiln.sharding" not in single and "kiln.mesh" not in single
    with open(os.path.join(work, "single.mlir"), "w") as f:
        f.write(single)

    rng = np.random.default_rng(7)
    inputs = []
    for i, shape in enumerate([(8, 12), (8, 12), (12, 16), (16, 12)]):
        path = os.path.join(work, "in%d.npy" % i)
        np.save(path, rng.uniform(-1, 1, shape).astype(np.float32))
        inputs.append(path)
    input_args = [a for p in inputs for a in ("--input", p)]

    run([compile_tool, os.path.join(work, "single.mlir"), "-o",
         os.path.join(work, "single.kmod")])
    run([compile_tool, program, "-o", os.path.join(work, "spmd.kmod")])
    listing = run([run_tool, os.path.join(work, "spmd.kmod"), "--list"])
    assert "arg2: f32[12,8]" in listing, listing

    run([run_tool, os.path.join(work, "single.kmod"), *input_args,
         "--output-dir", os.path.join(work, "single")])
    shards = [a for i, (dim, axis) in enumerate(INPUT_SPLITS)
              for a in ("--shard-input", "%d=%d:%s" % (i, dim, axis))]
    ranks = MESH["dp"] * MESH["tp"]
    run([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
         run_tool, os.path.join(work, "spmd.kmod"), "--mesh", "dp=2,tp=2",
         *input_args, *shards, "--output-dir", os.path.join(work, "spmd"),
         "--all-ranks-write"])

    worst = 0.0
    for k, split in enumerate(OUTPUT_SPLITS):
        whole = np.load(os.path.join(work, "single", "out%d.npy" % k))
        scale = max(1.0, float(np.abs(whole).max()))
        for rank in range(ranks):
            got = np.load(os.path.join(work, "spmd",
                                       "out%d.rank%d.npy" % (k, rank)))
            want = block(whole, split, rank)
            if got.shape != want.shape:
                sys.exit("output %d on rank %d has shape %s, expected %s" %
                         (k, rank, got.shape, want.shape))
            worst = max(worst, float(np.abs(got - want).max()) / scale)
    if worst > 1e-5:
        sys.exit("the ranks' outputs differ from one process's by %g" % worst)
    print("4 ranks match one process: largest difference %.3g" % worst)


if __name__ == "__main__":
    main()
