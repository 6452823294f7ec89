#!/usr/bin/env bash
# Creates the virtualenv with the comparison systems (anchors) that
# bench/run.sh measures kiln against: numpy, PyTorch (CPU wheel), JAX (XLA
# CPU), ONNX Runtime and onnx, and TensorFlow (CPU). Nothing in the build
# or the test suite needs it; bench/run.sh skips, with a note in its table, every anchor it cannot
# import.
#
#   bench/setup-anchors.sh [VENV_DIR]     (default /work/bench-venv)
#
# PYTHON selects the interpreter that creates the venv (default
# /usr/bin/python3; it needs the venv module). The venv lives outside the
# repository so that it never ends up in a commit.
set -euo pipefail
venv=${1:-${KILN_BENCH_VENV:-/work/bench-venv}}
python=${PYTHON:-/usr/bin/python3}

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --disable-pip-version-check -q)
"${pip[@]}" --upgrade pip
# pytest: test/python runs its JAX reference tests with this interpreter.
"${pip[@]}" numpy onnx onnxruntime "jax[cpu]" pytest
# The CPU wheel of torch is much smaller; where download.pytorch.org cannot
# be reached, the plain PyPI wheel (which also pulls the CUDA libraries the
# benchmark never uses, a few GB) is the fallback.
if ! "${pip[@]}" --timeout 15 --retries 1 torch torchvision \
     --index-url https://download.pytorch.org/whl/cpu; then
  echo "setup-anchors: the CPU wheel index is unreachable; installing torch from PyPI"
  "${pip[@]}" torch torchvision
fi
# The ONNX tests' exporters: transformers' models, and onnxscript, which
# torch.onnx.export(..., dynamo=True) needs.
"${pip[@]}" transformers onnxscript
# The data pipeline's references: TensorFlow (TFRecord files, tf.Example
# parsing, feature columns, tf.data's throughput) and the independent
# `tfrecord` package.
"${pip[@]}" tensorflow-cpu tfrecord
"$venv/bin/python" - <<'PY'
import importlib
for name in ("numpy", "torch", "torchvision", "transformers", "onnxscript",
             "jax", "onnxruntime", "onnx", "tensorflow"):
    try:
        mod = importlib.import_module(name)
        print(f"{name} {mod.__version__}")
    except Exception as exc:
        print(f"{name} unavailable: {exc}")
PY
