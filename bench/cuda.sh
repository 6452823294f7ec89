#!/bin/bash
# Every CUDA bench in one run, on one GPU, into one report.
#
#   bench/cuda.sh [--quick] [--build-dir DIR] [--output FILE]
#                 [--resnet-modules DIR] [--workload-sources DIR]
#
# Runs resnet_cuda.py, workloads_cuda.py, gemm_cuda.py and attention_cuda.py
# (f32, then bf16) one after the other with the same kiln build and the same python3 (which
# needs PyTorch with CUDA), and writes their reports under one heading that
# names the GPU, the driver, the kiln revision and the date. --quick keeps
# a run short (workloads without torch.compile and with a smaller time
# budget; attention at N = 1024 and 4096, its composition at 1024 only).
# --resnet-modules and --workload-sources take modules compiled and
# sources derived elsewhere (resnet_cuda.py --modules-from,
# workloads_cuda.py --sources-from), for a GPU machine without kiln-opt.
# The report is rewritten after each bench. A bench that fails or is
# absent is named in it; the exit status is then 1. KILN_REVISION names the revision where the tree has no git
# history.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="${KILN_BUILD_DIR:-$HERE/../build}"
OUTPUT=""
QUICK=0
RESNET_MODULES=""
SOURCES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --build-dir) BUILD="$2"; shift ;;
    --output) OUTPUT="$2"; shift ;;
    --resnet-modules) RESNET_MODULES="$2"; shift ;;
    --workload-sources) SOURCES="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/cuda.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
OUTPUT="${OUTPUT:-$BUILD/bench-cuda.md}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

resnet=(--build-dir "$BUILD" --output "$WORK/resnet.md")
[ -n "$RESNET_MODULES" ] && resnet+=(--modules-from "$RESNET_MODULES")
workloads=(--build-dir "$BUILD" --output "$WORK/workloads.md")
[ -n "$SOURCES" ] && workloads+=(--sources-from "$SOURCES")
# bf16 products take a few hundredths of a millisecond: a chain of 101
# keeps their difference above the noise of a call (f32 needs 11).
gemm=(--build-dir "$BUILD" --output "$WORK/gemm.md" --dtypes f32)
gemm_bf16=(--build-dir "$BUILD" --output "$WORK/gemm_bf16.md" --dtypes bf16 --chain 101 --kernel-max 0)
attention=(--build-dir "$BUILD" --output "$WORK/attention.md")
# bf16 attention: the tuned call sites of cuDNN's fused attention and
# kiln's tensor-core kernels (the default), and kiln's kernels alone
# (--no-cuda-cudnn-attention), forward and backward, against PyTorch's SDPA.
attention_bf16=(--build-dir "$BUILD" --output "$WORK/attention_bf16.md" --dtype bf16)
if [ "$QUICK" = 1 ]; then
  workloads+=(--no-compile-anchor --time-budget 0.3)
  attention+=(--sizes 1024,4096 --backward-max 4096 --unfused-max 1024 --repeat 10)
  attention_bf16+=(--sizes 1024,4096 --backward-max 4096 --repeat 10)
fi

gpu="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
revision="${KILN_REVISION:-$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown)}"
status=0
failed=()
# Rewritten after each bench, so that a run cut short keeps what it did.
write_report() {
  {
    echo "# kiln on a CUDA GPU: every bench from one run"
    echo
    echo "\`bench/cuda.sh$([ "$QUICK" = 1 ] && echo " --quick")\` on ${gpu:-an unnamed GPU} (name, driver)," \
         "$(date -u +%Y-%m-%d), kiln at $revision. Each section below is one bench's own report."
    if [ ${#failed[@]} -gt 0 ]; then
      echo
      echo "Failed or absent in this run: ${failed[*]}."
    fi
    for bench in resnet workloads gemm gemm_bf16 attention attention_bf16; do
      if [ -f "$WORK/$bench.md" ]; then
        echo
        sed 's/^#/##/' "$WORK/$bench.md"
      fi
    done
  } > "$OUTPUT"
}
for bench in resnet workloads gemm gemm_bf16 attention attention_bf16; do
  declare -n args="$bench"
  script="${bench%_bf16}_cuda.py"
  echo "== bench/$script ${args[*]}" >&2
  if ! python3 "$HERE/$script" "${args[@]}" >&2; then
    failed+=("$script ${args[*]}")
    status=1
  fi
  write_report
done
echo "wrote $OUTPUT" >&2
exit $status
