#!/bin/bash
# The CUDA checks and benches of a GPU machine that has no kiln compiler
# (nor LLVM) on it, in two steps:
#
#   bench/gpu_session.sh prepare DIR [--build-dir BUILD] [--arch sm_90]
#                                    [--smoke]
#       on any machine with kiln built: compiles everything the GPU runs
#       into DIR, and packs DIR into DIR.tar.xz (about 24 MB; DIR itself
#       is about 80 MB) for a GPU session to carry: the end-to-end
#       programs, 40 random programs and their gradients with their
#       expected outputs, and the `while` workload (graph_loops_cuda.py
#       prepare --programs all --fuzz-seeds 0:40 --fuzz-grad);
#       the attention bench's modules in f32 and bf16
#       (attention_cuda.py --emit-modules); 20 random attentions in f32
#       (kiln's tuned call sites, the f32 kernels alone and
#       --cuda-attention-3xtf32) and 20 in bf16
#       (kiln's tensor-core kernels, cuDNN's alone, and the tuned call
#       sites of the two)
#       (random_attention.py --emit-modules); the rest of the issue's
#       goal table: the 4096^3 products in f32 and bf16
#       (gemm_cuda.py --emit-modules), the MLP training step, transformer
#       layer, RNN and `while` workloads (workloads_cuda.py), ResNet-50
#       inference and training step (resnet_cuda.py); kiln-run and the
#       CUDA plug-ins (DIR/bin, DIR/lib/kiln). --smoke makes a small kit
#       in seconds (N = 1024, two seeds of each, the e2e programs with a
#       `while`, products of 256) for checking the kit itself;
#       DIR/kit.env records what DIR holds, which check follows.
#
#   bench/gpu_session.sh check KIT OUT [--quick] [--only PART,...]
#                                      [--limit PART=SECONDS ...]
#       on the GPU machine (python3 with numpy and PyTorch for CUDA, this
#       source tree; KIT is DIR or DIR.tar.xz, unpacked into a temporary
#       folder): runs them, most important first, each under a time
#       limit, and writes each part's report and log into OUT:
#         1. attention-f32.md: the f32 attention bench (kiln's default,
#            a tuned call site of the f32 and 3xTF32 kernels, with the
#            variant the runtime kept; the f32 kernels alone, their
#            deterministic gradient, 3xTF32 with its gradient as one
#            kernel and as two, the unfused composition up to N = 4096)
#            against PyTorch's SDPA;
#         2. ncu-attention.log: Nsight Compute on the missed cell, f32
#            forward + backward at N = 4096 (kiln's f32 kernels,
#            3xTF32, PyTorch's SDPA): each kernel's time, SM, tensor-pipe
#            and DRAM throughput against the device's peak, its pipes'
#            utilization and its warps' stall reasons;
#         3. attention-bf16.md: the same bench in bf16 (tensor-core
#            kernels, cuDNN's fused attention);
#         4. random-attention-{f32,bf16}.log: the random attentions
#            against numpy in float64 on the GPU, 8 seeds at a time;
#         5. loops.log: every end-to-end program, random program and
#            random gradient on the GPU against the CPU's outputs, its
#            loops as CUDA graphs and as host loops (and those holding
#            cuDNN calls captured from their first call,
#            KILN_CUDA_CAPTURE_UNPLANNED=1), and the `while`
#            workload timed (about 440 cases, 8 at a time).
#       The parts' limits (180, 120, 130, 50, 50 and 60 s) keep the whole
#       under the 10 minutes of one device call; a part cut off keeps what
#       its log had printed (the attention benches print each row as it is
#       measured). The rest of the goal table runs only when --only names
#       it: gemm-f32.md and gemm-bf16.md (40 s each), workloads.md
#       (against PyTorch eager and torch.compile, 240 s), resnet.md
#       (150 s), random-attention-padded.log (50 s: bf16 attentions of
#       head dims 40, 24, 8 and 120, whose last product the tensor-core
#       forward pads, through kiln's kernels and the tuned sites) and
#       random-attention-padded-f32.log (50 s: f32 ones of the same head
#       dims, through the 3xTF32 kernels and the tuned sites). --quick
#       keeps the attention benches to N = 1024 and 4096; --only runs the
#       named parts (attention-f32, ncu-attention, attention-bf16,
#       random-attention-f32, random-attention-bf16,
#       random-attention-padded, random-attention-padded-f32, loops,
#       gemm-f32, gemm-bf16, workloads, resnet), e.g. the rest of a run in
#       a second call; --limit changes a part's limit (the 440
#       cases of loops may need more than 60 s: a second call with
#       --only loops --limit loops=300). Exit status 1 if any part failed
#       or ran out of time (the summary in OUT/summary.txt names which).
#
# The modules are for one GPU architecture (--arch, default sm_90 as the
# H100 and H200), their host code for x86-64-v3.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
PYTHON="${PYTHON:-python3}"

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

# Nsight Compute on f32 attention forward + backward at N = 4096 (non-causal):
# kiln's fused and 3xTF32 modules in KIT/attention-f32, then PyTorch's SDPA.
ncu_attention() {
  local dir="$1" inputs
  inputs="$(mktemp -d)" || return 2
  "$PYTHON" - "$inputs" <<'PY' || return 2
import sys, numpy as np
rng = np.random.default_rng(0)
for name in "qkvd":
    np.save(f"{sys.argv[1]}/{name}.npy",
            rng.standard_normal((1, 8, 4096, 64)).astype(np.float32))
PY
  local metrics=gpu__time_duration.sum
  metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
  # And the sections that say what bounds a kernel: its throughput against
  # the device's peak, the pipes' utilization (tensor, FMA, ALU) and where
  # its warps stall (math pipes, shared memory, barriers).
  local sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis
    --section WarpStateStats)
  local rc=0 system
  # The variants one at a time: the default module is a tuned call site,
  # whose first call (the one profiled) runs every variant 13 times over.
  for system in f32-kernels 3xtf32; do
    echo "== kiln $system"
    local module="$dir/attention-f32/f32.$system.4096.attn_fwdbwd.kmod"
    [ -f "$module" ] || {
      echo "the kit has no N = 4096 module (prepared with --smoke?)"; rc=1
      continue; }
    ncu --clock-control none --metrics "$metrics" "${sections[@]}" \
      "$dir/bin/kiln-run" "$module" \
      --device cuda --function attn_fwdbwd --input "$inputs/q.npy" \
      --input "$inputs/k.npy" --input "$inputs/v.npy" --input "$inputs/d.npy" \
      --output-dir "$inputs/out-$system" || rc=1
  done
  echo "== PyTorch SDPA (the third forward + backward, its NVTX range)"
  ncu --clock-control none --metrics "$metrics" "${sections[@]}" --nvtx \
    --nvtx-include "profiled/" "$PYTHON" - <<'PY' || rc=1
import torch
torch.backends.cuda.matmul.allow_tf32 = False
q, k, v, do = (torch.randn(1, 8, 4096, 64, device="cuda", requires_grad=True)
               for _ in range(4))
for i in range(3):
    if i == 2:
        torch.cuda.nvtx.range_push("profiled")
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    o.backward(do)
    torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
PY
  rm -rf "$inputs"
  return "$rc"
}

prepare() {
  local dir="$1"; shift
  local build="$ROOT/build" arch=sm_90
  local sizes=1024,4096,16384 seeds=0:20 programs=all fuzz=0:40 gemm=4096
  while [ $# -gt 0 ]; do
    case "$1" in
      --build-dir) build="$2"; shift ;;
      --arch) arch="$2"; shift ;;
      --smoke) sizes=1024 seeds=0:2 programs=while fuzz=0:2 gemm=256 ;;
      *) echo "gpu_session.sh prepare: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
  done
  [ -x "$build/bin/kiln-compile" ] || {
    echo "gpu_session.sh prepare: no kiln-compile in $build/bin" >&2; exit 2; }
  rm -rf "$dir" && mkdir -p "$dir" || exit 2
  local py=/usr/bin/python3 failed=0
  local largest="${sizes##*,}"
  printf 'KIT_SIZES=%s\nKIT_SEEDS=%s\nKIT_GEMM=%s\n' "$sizes" "$seeds" "$gemm" \
    >"$dir/kit.env"
  "$py" "$HERE/graph_loops_cuda.py" prepare "$dir/loops" --build-dir "$build" \
    --programs "$programs" --fuzz-seeds "$fuzz" --fuzz-grad \
    >"$dir/prepare-loops.log" 2>&1 || failed=1
  for dtype in f32 bf16; do
    "$py" "$HERE/attention_cuda.py" --build-dir "$build" --dtype "$dtype" \
      --sizes "$sizes" --backward-max "$largest" \
      --emit-modules "$dir/attention-$dtype" --arch "$arch" \
      >"$dir/prepare-attention-$dtype.log" 2>&1 || failed=1
  done
  "$py" "$ROOT/test/fuzz/random_attention.py" --build-dir "$build" \
    --seeds "$seeds" --targets cuda,cuda-f32-kernels,cuda-3xtf32 --arch "$arch" \
    --emit-modules "$dir/random-f32" >"$dir/prepare-random-f32.log" 2>&1 ||
    failed=1
  "$py" "$ROOT/test/fuzz/random_attention.py" --build-dir "$build" \
    --seeds "$seeds" --dtype bf16 --targets cuda,cuda-kiln,cuda-cudnn-only --arch "$arch" \
    --emit-modules "$dir/random-bf16" >"$dir/prepare-random-bf16.log" 2>&1 ||
    failed=1
  # The head dims whose last product the tensor-core forward pads
  # (multiples of 8, not of 16), which the draws above seldom take.
  "$py" "$ROOT/test/fuzz/random_attention.py" --build-dir "$build" \
    --seeds "$seeds" --dtype bf16 --head-dims 40,24,8,120 \
    --targets cuda,cuda-kiln --arch "$arch" \
    --emit-modules "$dir/random-padded" >"$dir/prepare-random-padded.log" 2>&1 ||
    failed=1
  # And in f32, whose 3xTF32 products stop at those head dims.
  "$py" "$ROOT/test/fuzz/random_attention.py" --build-dir "$build" \
    --seeds "$seeds" --head-dims 40,24,8,120 \
    --targets cuda,cuda-3xtf32 --arch "$arch" \
    --emit-modules "$dir/random-padded-f32" \
    >"$dir/prepare-random-padded-f32.log" 2>&1 || failed=1
  # bf16 products take a few hundredths of a millisecond: a chain of 101
  # keeps their difference above the noise of a call (f32 needs 11), as in
  # bench/cuda.sh.
  "$py" "$HERE/gemm_cuda.py" --build-dir "$build" --sizes "$gemm" \
    --dtypes f32 --emit-modules "$dir/gemm-f32" --arch "$arch" \
    >"$dir/prepare-gemm.log" 2>&1 || failed=1
  "$py" "$HERE/gemm_cuda.py" --build-dir "$build" --sizes "$gemm" \
    --dtypes bf16 --chain 101 --kernel-max 0 --emit-modules "$dir/gemm-bf16" \
    --arch "$arch" >>"$dir/prepare-gemm.log" 2>&1 || failed=1
  "$py" "$HERE/workloads_cuda.py" --build-dir "$build" \
    --emit-modules "$dir/workloads" --arch "$arch" \
    >"$dir/prepare-workloads.log" 2>&1 || failed=1
  "$py" "$HERE/resnet_cuda.py" --build-dir "$build" \
    --only resnet50,resnet50_train --emit-modules "$dir/resnet" --arch "$arch" \
    >"$dir/prepare-resnet.log" 2>&1 || failed=1
  mkdir -p "$dir/bin" "$dir/lib/kiln"
  cp "$build/bin/kiln-run" "$dir/bin/" || failed=1
  # The plug-ins this build has (cuBLASLt's and cuDNN's, where found).
  local plugin
  for plugin in "$build"/lib/kiln/libkiln_cuda_*.so; do
    [ -e "$plugin" ] && { cp "$plugin" "$dir/lib/kiln/" || failed=1; }
  done
  find "$dir" -name '*.mlir' \( -path '*attention-*' -o -path '*gemm-*' \
    -o -path '*workloads*' -o -path '*resnet*' \) -delete
  if [ "$failed" = 1 ]; then
    echo "gpu_session.sh prepare: a step failed; see $dir/prepare-*.log" >&2
    exit 1
  fi
  tar -C "$(dirname "$dir")" -cf - "$(basename "$dir")" | xz -T2 -6 \
    >"$dir.tar.xz" || exit 1
  du -sh "$dir" "$dir.tar.xz"
}

check() {
  local kit="$1" out="$2" dir; shift 2
  if [ -f "$kit" ]; then
    # Python's tarfile, where xz may be missing.
    UNPACKED="$(mktemp -d)" || exit 2
    trap 'rm -rf "$UNPACKED"' EXIT
    "$PYTHON" -c 'import sys, tarfile
safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **safe)' "$kit" "$UNPACKED" ||
      exit 2
    dir="$(ls -d "$UNPACKED"/*/ | head -1)"
  else
    dir="$kit"
  fi
  dir="$(cd "$dir" && pwd)" || exit 2
  local KIT_SIZES=1024,4096,16384 KIT_SEEDS=0:20 KIT_GEMM=4096
  [ -f "$dir/kit.env" ] && . "$dir/kit.env"
  local quick=0 only="" limits=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --quick) quick=1 ;;
      --only) only=",$2,"; shift ;;
      --limit) limits+=("$2"); shift ;;
      *) echo "gpu_session.sh check: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
  done
  mkdir -p "$out" || exit 2
  local summary="$out/summary.txt" status=0
  export PYTHONUNBUFFERED=1 PYTHON
  export -f ncu_attention
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  else
    echo "no nvidia-smi"
  fi >"$summary" 2>&1
  # Part NAME LIMIT COMMAND...: runs COMMAND under LIMIT seconds into
  # OUT/NAME.log, and notes its end in the summary.
  # A part of the rest of the goal table (gemm, workloads, resnet) runs
  # only where --only names it.
  local table=",gemm-f32,gemm-bf16,workloads,resnet,random-attention-padded,"
  table+="random-attention-padded-f32,"
  part() {
    local name="$1" limit="$2"; shift 2
    local start=$SECONDS rc
    if [ -z "$only" ]; then
      [[ "$table" == *",$name,"* ]] && return 0
    else
      [[ "$only" == *",$name,"* ]] || return 0
    fi
    local given
    for given in "${limits[@]}"; do
      [ "${given%%=*}" = "$name" ] && limit="${given#*=}"
    done
    # bash -c: a part may be a function of this script (exported).
    timeout "$limit" bash -c '"$@"' part "$@" >"$out/$name.log" 2>&1
    rc=$?
    echo "$name: exit $rc after $((SECONDS - start)) s" >>"$summary"
    [ "$rc" = 0 ] || status=1
  }
  local sizes=(--sizes "$KIT_SIZES" --backward-max "${KIT_SIZES##*,}")
  [ "$quick" = 1 ] && [[ ",$KIT_SIZES," == *,4096,* ]] &&
    sizes=(--sizes 1024,4096 --backward-max 4096)
  part attention-f32 180 "$PYTHON" "$HERE/attention_cuda.py" \
    --build-dir "$dir" --dtype f32 --modules-from "$dir/attention-f32" \
    --output "$out/attention-f32.md" --repeat 10 "${sizes[@]}"
  part ncu-attention 120 ncu_attention "$dir"
  part attention-bf16 130 "$PYTHON" "$HERE/attention_cuda.py" \
    --build-dir "$dir" --dtype bf16 --modules-from "$dir/attention-bf16" \
    --output "$out/attention-bf16.md" --repeat 10 "${sizes[@]}"
  part random-attention-f32 50 "$PYTHON" "$ROOT/test/fuzz/random_attention.py" \
    --build-dir "$dir" --seeds "$KIT_SEEDS" --targets cuda,cuda-f32-kernels,cuda-3xtf32 \
    --modules-from "$dir/random-f32" --jobs 8
  part random-attention-bf16 50 "$PYTHON" "$ROOT/test/fuzz/random_attention.py" \
    --build-dir "$dir" --seeds "$KIT_SEEDS" --dtype bf16 --targets cuda,cuda-kiln,cuda-cudnn-only \
    --modules-from "$dir/random-bf16" --jobs 8
  part random-attention-padded 50 "$PYTHON" "$ROOT/test/fuzz/random_attention.py" \
    --build-dir "$dir" --seeds "$KIT_SEEDS" --dtype bf16 --head-dims 40,24,8,120 \
    --targets cuda,cuda-kiln --modules-from "$dir/random-padded" --jobs 8
  part random-attention-padded-f32 50 "$PYTHON" \
    "$ROOT/test/fuzz/random_attention.py" --build-dir "$dir" \
    --seeds "$KIT_SEEDS" --head-dims 40,24,8,120 --targets cuda,cuda-3xtf32 \
    --modules-from "$dir/random-padded-f32" --jobs 8
  part loops 60 "$PYTHON" "$HERE/graph_loops_cuda.py" check "$dir/loops" \
    --repeat 50 --rounds 2
  local scratch
  scratch="$(mktemp -d)" || exit 2
  part gemm-f32 40 "$PYTHON" "$HERE/gemm_cuda.py" --build-dir "$dir" \
    --sizes "$KIT_GEMM" --dtypes f32 --modules-from "$dir/gemm-f32" \
    --output "$out/gemm-f32.md"
  part gemm-bf16 40 "$PYTHON" "$HERE/gemm_cuda.py" --build-dir "$dir" \
    --sizes "$KIT_GEMM" --dtypes bf16 --chain 101 --kernel-max 0 \
    --modules-from "$dir/gemm-bf16" --output "$out/gemm-bf16.md"
  part workloads 240 "$PYTHON" "$HERE/workloads_cuda.py" --build-dir "$dir" \
    --modules-from "$dir/workloads" --work-dir "$scratch/workloads" \
    --time-budget 0.5 --output "$out/workloads.md"
  part resnet 150 "$PYTHON" "$HERE/resnet_cuda.py" --build-dir "$dir" \
    --only resnet50,resnet50_train --modules-from "$dir/resnet" \
    --work-dir "$scratch/resnet" --output "$out/resnet.md"
  rm -rf "$scratch"
  cat "$summary"
  return "$status"
}

case "${1:-}" in
  prepare) [ $# -ge 2 ] || { usage >&2; exit 2; }; shift; prepare "$@" ;;
  check) [ $# -ge 3 ] || { usage >&2; exit 2; }; shift; check "$@" ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
