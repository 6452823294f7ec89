#!/usr/bin/env bash
# One command for the kiln benchmarks: builds the tools and helpers it needs,
# runs kiln and every installed comparison system on the same inputs with
# the same thread count, and writes a markdown table (also printed).
#
#   bench/run.sh [--threads N[,M...]] [--quick] [--kiln-only] [--fused-only] [--no-build]
#                [--build-dir DIR] [--output FILE] [--only NAMES]
#
# --threads 1,2 runs the whole set once per thread count, one section each.
# Full runs write bench/results.md; --quick runs (small sizes, few repeats)
# write DIR/bench-results-quick.md. The anchors come from the
# virtualenv made by bench/setup-anchors.sh ($KILN_BENCH_VENV, default
# /work/bench-venv); without it only numpy is needed and every anchor is
# listed as absent. $KILN_BENCH_PYTHON overrides the interpreter.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=${KILN_BUILD_DIR:-$root/build}
threads=1 quick=0 build_tools=1 output="" pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --threads=*) threads=${1#*=}; shift ;;
    --quick) quick=1; pass+=(--quick); shift ;;
    --no-build) build_tools=0; shift ;;
    --build-dir) build=$2; shift 2 ;;
    --build-dir=*) build=${1#*=}; shift ;;
    --output) output=$2; shift 2 ;;
    --output=*) output=${1#*=}; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) pass+=("$1"); shift ;;
  esac
done
case "$threads" in
  ''|*[!0-9,]*) echo "bench/run.sh: --threads needs N or a list like 1,2" >&2; exit 2 ;;
esac

venv=${KILN_BENCH_VENV:-/work/bench-venv}
python=${KILN_BENCH_PYTHON:-}
if [ -z "$python" ]; then
  for candidate in "$venv/bin/python" /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import numpy' >/dev/null 2>&1; then
      python=$candidate
      break
    fi
  done
fi
if [ -z "$python" ]; then
  echo "bench/run.sh: no python with numpy found (Debian: apt-get install python3-numpy)" >&2
  exit 1
fi

if [ "$build_tools" = 1 ]; then
  ninja -C "$build" -j"${KILN_JOBS:-2}" kiln-opt kiln-compile kiln-run kiln-bench-stream >/dev/null
  # Configured only where oneDNN was found (bench/CMakeLists.txt).
  if grep -q '^build kiln-bench-dnnl-gemm:' "$build/build.ninja"; then
    ninja -C "$build" -j"${KILN_JOBS:-2}" kiln-bench-dnnl-gemm kiln-bench-dnnl-conv >/dev/null
  fi
fi

if [ -z "$output" ]; then
  if [ "$quick" = 1 ]; then
    output=$build/bench-results-quick.md
  else
    output=$here/results.md
  fi
fi

status=0
: > "$output"
IFS=, read -ra thread_list <<< "$threads"
for n in "${thread_list[@]}"; do
  ncpu=$(nproc)
  if [ "$n" -lt 1 ]; then
    echo "bench/run.sh: thread counts must be positive" >&2
    exit 2
  fi
  # Every system gets the same thread count; the process is also pinned to
  # n CPUs where taskset exists and the machine has them.
  export OMP_NUM_THREADS=$n MKL_NUM_THREADS=$n OPENBLAS_NUM_THREADS=$n
  if [ "$n" = 1 ]; then
    export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
  else
    # XLA's CPU thread pool takes the CPUs the process may use (taskset).
    export XLA_FLAGS="--xla_cpu_multi_thread_eigen=true"
  fi
  pin=()
  if command -v taskset >/dev/null 2>&1 && [ "$n" -le "$ncpu" ]; then
    pin=(taskset -c "0-$((n - 1))")
  fi
  section=$(mktemp)
  "${pin[@]}" "$python" "$here/bench.py" --threads "$n" --build-dir "$build" \
    --output "$section" "${pass[@]}" || status=$?
  cat "$section" >> "$output"
  rm -f "$section"
done
echo "bench/run.sh: wrote $output"
exit $status
