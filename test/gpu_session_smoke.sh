#!/bin/bash
# bench/gpu_session.sh on a machine without a GPU: `prepare --smoke` must
# pack every part's modules, kiln-run and the plug-ins into the archive,
# and `check` must unpack it and reach each part's GPU boundary (no
# driver, no PyTorch) without a missing file or a traceback.
#   gpu_session_smoke.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -u
source="$1" build="$2" work="$3"
rm -rf "$work" && mkdir -p "$work" || exit 1
"$source/bench/gpu_session.sh" prepare "$work/kit" --build-dir "$build" \
  --smoke || { cat "$work"/kit/prepare-*.log; exit 1; }
listing="$(tar -tJf "$work/kit.tar.xz")" || exit 1
for entry in kit.env attention-f32/ARCH \
    attention-f32/f32.fused.1024.attn_fwdbwd.kmod \
    attention-f32/f32.3xtf32.1024.attn_fwdbwd_causal.kmod \
    attention-f32/f32.deterministic.1024.attn_fwdbwd.kmod \
    attention-bf16/bf16.kiln-kernels.1024.attn_fwdbwd.kmod \
    random-f32/probe.kmod random-f32/f32.1.cuda-3xtf32.kmod \
    random-bf16/bf16.0.cuda-kiln.kmod random-padded/bf16.1.cuda-kiln.kmod \
    random-padded-f32/f32.1.cuda-3xtf32.kmod \
    loops/cases.json \
    loops/fuzz_0_grad.cuda.kmod gemm-f32/ARCH gemm-f32/chain_256_f32_kernel_11.kmod \
    gemm-bf16/chain_256_bf16_cublas_101.kmod workloads/ARCH \
    workloads/transformer_train.kmod workloads/while_solver.kmod \
    resnet/ARCH resnet/resnet50.f32.kmod resnet/resnet50_train.tf32.kmod bin/kiln-run \
    $(cd "$build" && ls lib/kiln/libkiln_cuda_*.so 2>/dev/null); do
  grep -qx "kit/$entry" <<<"$listing" || {
    echo "gpu_session_smoke.sh: the archive has no kit/$entry" >&2; exit 1; }
done
PYTHON=/usr/bin/python3 "$source/bench/gpu_session.sh" check \
  "$work/kit.tar.xz" "$work/out" >"$work/check.log" 2>&1
for part in attention-f32 ncu-attention attention-bf16 random-attention-f32 \
    random-attention-bf16 loops; do
  grep -q "^$part: exit" "$work/out/summary.txt" || {
    echo "gpu_session_smoke.sh: $part did not run" >&2; exit 1; }
done
# The rest of the goal table runs where --only names it, and only then.
grep -q "^gemm-f32: exit" "$work/out/summary.txt" && {
  echo "gpu_session_smoke.sh: gemm-f32 ran without --only" >&2; exit 1; }
mv "$work/out" "$work/out-default"
PYTHON=/usr/bin/python3 "$source/bench/gpu_session.sh" check \
  "$work/kit.tar.xz" "$work/out" \
  --only gemm-f32,gemm-bf16,workloads,resnet,random-attention-padded,random-attention-padded-f32 \
  >>"$work/check.log" 2>&1
for part in gemm-f32 gemm-bf16 workloads resnet random-attention-padded \
    random-attention-padded-f32; do
  grep -q "^$part: exit" "$work/out/summary.txt" || {
    echo "gpu_session_smoke.sh: $part did not run" >&2; exit 1; }
done
grep -q "^loops: exit" "$work/out/summary.txt" && {
  echo "gpu_session_smoke.sh: loops ran outside --only" >&2; exit 1; }
mv "$work/out-default"/*.log "$work/out/"
if grep -l "Traceback\|is missing\|could not run" "$work"/out/*.log; then
  echo "gpu_session_smoke.sh: a part failed before its GPU boundary" >&2
  exit 1
fi
echo "gpu_session_smoke.sh: the kit packs and checks up to the GPU"
