#!/usr/bin/env bash
# The example models end to end: trace them to .kfb, compile those with
# kiln-compile and run them with kiln-run, run them through kiln::jit, load
# the JIT's saved modules from a host that links only the runtime, and
# compare everything with the reference evaluator.
# Usage: check_examples.sh TOOLS_DIR EXAMPLES_BIN_DIR OUT_DIR
set -euo pipefail
tools="$1" bin="$2" out="$3"
rm -rf "$out" && mkdir -p "$out"

"$bin/trace_models" "$out"
for kfb in "$out"/*.kfb; do
  model="$(basename "$kfb" .kfb)"
  "$tools/kiln-compile" "$kfb" -o "$out/$model.aot.kmod"
  inputs=()
  for npy in "$out/$model".in*.npy; do inputs+=(--input "$npy"); done
  "$tools/kiln-run" "$out/$model.aot.kmod" "${inputs[@]}" --output-dir "$out/$model.aot" >/dev/null
done
"$bin/jit_models" "$out"
for kmod in "$out"/mlp.kmod "$out"/rnn.kmod "$out"/power_iteration.kmod; do
  model="$(basename "$kmod" .kmod)"
  "$bin/run_saved" "$kmod" "$model" "$out/$model.saved" "$out/$model".in*.bin
done
"$bin/jit_models" --check-saved "$out"
if ldd "$bin/run_saved" | grep -Ei 'llvm|mlir'; then
  echo "FAIL: run_saved links LLVM/MLIR" >&2
  exit 1
fi
echo "run_saved links only: $(ldd "$bin/run_saved" | awk '{print $1}' | tr '\n' ' ')"
