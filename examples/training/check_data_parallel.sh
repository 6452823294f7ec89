#!/usr/bin/env bash
# Data-parallel training must match one process on the whole batch:
# trains an MLP (train_digits) for 100 steps (or --steps N among the
# OPTIONs) once in one process and once on
# RANKS ranks under mpirun (each rank feeding its block of every batch),
# then compares the trained parameters, which must agree within 1e-5
# relative to each tensor's largest magnitude (f32 sums in another order
# are the only difference; 1e-12 for --dtype f64); the elementwise relative
# difference is printed too. With --autocast the products' operands are
# rounded to half precision, where a last-bit difference of an f32 weight
# can round to the other neighbour; such flips compound over the steps
# (1.7e-3 after 100 f16 steps on 2 ranks), so the limit is 5e-3 there. With --loss-scaling both
# runs must also skip the same number of updates and end on the same
# scale (every rank decides on the all-reduced gradients).
# Usage: check_data_parallel.sh TRAIN_DIGITS MPIRUN RANKS OPTIMIZER WORKDIR
#        [OPTION...] [-- RANK_OPTION...]
# OPTIONs go to both runs (e.g. --synthetic 784 --hidden 1024,1024 --batch
# 256: the MLP of bench/), RANK_OPTIONs to the run on several ranks only
# (e.g. --zero 2).
# Exits 77 (SKIP) when MPIRUN is empty (OpenMPI is not installed).
set -euo pipefail
train="$1" mpirun="$2" ranks="$3" optimizer="$4" work="$5"
shift 5
options=() rank_options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do options+=("$1"); shift; done
[ $# -gt 0 ] && shift
rank_options=("$@")
if [ -z "$mpirun" ]; then
  echo "SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/one" "$work/ranks"
common=(--steps 100 --batch 64 --optimizer "$optimizer" "${options[@]}")
"$train" "${common[@]}" --out "$work/one" > "$work/one.log"
"$mpirun" --allow-run-as-root --oversubscribe -n "$ranks" \
  "$train" "${common[@]}" --comm mpi "${rank_options[@]}" --out "$work/ranks" \
  > "$work/ranks.log"
tail -1 "$work/one.log"
tail -1 "$work/ranks.log"
scaling_one=$(grep "^loss scaling:" "$work/one.log" || true)
scaling_ranks=$(grep "^loss scaling:" "$work/ranks.log" || true)
if [ "$scaling_one" != "$scaling_ranks" ]; then
  echo "loss scaling differs: one process '$scaling_one', ranks '$scaling_ranks'"
  exit 1
fi
autocast=0 scaling=0
for option in "${options[@]}"; do
  case "$option" in
    --autocast) autocast=1 ;;
    --loss-scaling) scaling=1 ;;
  esac
done
if ((scaling)); then
  case "$scaling_one" in
    "loss scaling: 0 of"*|"") echo "no update was skipped: '$scaling_one'"; exit 1 ;;
  esac
  echo "$scaling_one (both runs)"
fi
AUTOCAST=$autocast /usr/bin/python3 - "$work" <<'PY'
import glob
import os
import sys
import numpy as np
work = sys.argv[1]
worst = 0.0
names = sorted(os.path.basename(p)[len("final_"):-len(".npy")]
               for p in glob.glob(f"{work}/one/final_*.npy"))
assert names, "the run in one process wrote no parameters"
for name in names:
    one = np.load(f"{work}/one/final_{name}.npy").astype(np.float64)
    ranks = np.load(f"{work}/ranks/final_{name}.npy").astype(np.float64)
    start = np.load(f"{work}/one/init_{name}.npy").astype(np.float64)
    # The parameters must have moved, or the comparison proves nothing.
    assert np.abs(one - start).max() > 1e-3, f"{name} did not train"
    diff = float(np.abs(one - ranks).max() / np.abs(one).max())
    elementwise = float((np.abs(one - ranks) / np.maximum(np.abs(one), 1e-3)).max())
    worst = max(worst, diff)
    print(f"{name}: max difference {diff:.3g} of the largest magnitude, "
          f"{elementwise:.3g} elementwise relative")
one_loss = np.load(f"{work}/one/losses.npy")
ranks_loss = np.load(f"{work}/ranks/losses.npy")
print(f"loss after {len(one_loss)} steps: one process {one_loss[-1]:.6f}, "
      f"ranks {ranks_loss[-1]:.6f}")
# f64 runs have no excuse beyond their own rounding.
f64 = np.load(f"{work}/one/final_{names[0]}.npy").dtype == np.float64
limit = 1e-12 if f64 else 5e-3 if os.environ["AUTOCAST"] == "1" else 1e-5
if worst > limit:
    sys.exit(f"the data-parallel parameters differ by {worst:.3g} relative "
             f"(limit {limit:g})")
PY
