#!/bin/bash
# random_attention.py's two steps for a machine without kiln-compile:
# --emit-modules compiles two seeds for the CUDA kernels on the host, and
# --modules-from runs them from a folder that holds kiln-run alone, two
# seeds at once (--jobs 2), reported in order; both must pass, and a
# --head-dims other than the emitted draws' must fail.
#   random_attention_modules_from.sh PYTHON BUILD_DIR
set -eu
python="$1" build="$2"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" "$here/random_attention.py" --build-dir "$build" --seeds 0:2 \
  --targets cuda-on-cpu --emit-modules "$work/modules"
mkdir -p "$work/run/bin"
cp "$build/bin/kiln-run" "$work/run/bin/"
# Two seeds at once (--jobs 2), reported in the seeds' order.
"$python" "$here/random_attention.py" --build-dir "$work/run" --seeds 0:2 \
  --targets cuda-on-cpu --modules-from "$work/modules" --jobs 2 \
  >"$work/two.log"
cat "$work/two.log"
[ "$(grep -o '^seed [0-9]*' "$work/two.log" | tr '\n' ,)" = "seed 0,seed 1," ]
if "$python" "$here/random_attention.py" --build-dir "$work/run" \
    --seeds 0:1 --head-dims 32 --targets cuda-on-cpu \
    --modules-from "$work/modules" >"$work/other.log" 2>&1; then
  echo "random_attention_modules_from.sh: other draws than the modules' passed" >&2
  exit 1
fi
grep -q "is another program than this seed's" "$work/other.log"
