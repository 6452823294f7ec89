#!/usr/bin/env bash
# Installs what kiln needs from Debian's packages (only what is missing),
# then configures and builds kiln into build/ (tools in build/bin/).
# Usage: tools/setup.sh [extra cmake arguments]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"

packages=(
  cmake ninja-build g++ ccache python3 python3-numpy python3-dev
  python3-pytest python3-venv pybind11-dev libdlpack-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libflatbuffers-dev flatbuffers-compiler libgtest-dev zlib1g-dev gzip xz-utils
  libfarmhash-dev
  clang libclang-rt-14-dev
  libomp-19-dev libdnnl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  curl
  libopenmpi-dev openmpi-bin
  libgloo-dev libhiredis-dev redis-server redis-tools
  valgrind
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The ONNX library of a current release (tools/build-onnx.sh: pinned,
# checksum checked, built once and cached); Debian's libonnx-dev is too old
# for what exporters write today, its test data still serves the suite.
onnx_dir="$("$root/tools/build-onnx.sh")/lib/cmake/ONNX"

jobs="${KILN_JOBS:-2}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "-DONNX_DIR=$onnx_dir" "$@"
elif (($#)) || ! grep -qx "ONNX_DIR:PATH=$onnx_dir" "$build/CMakeCache.txt"; then
  cmake "$build" "-DONNX_DIR=$onnx_dir" "$@"
fi
cmake --build "$build" -j "$jobs"
# The pinned build backend of the Python wheels (tools/build-wheels.sh),
# fetched now so that the suite's wheel test needs no network.
if grep -qx "KILN_PYTHON:BOOL=ON" "$build/CMakeCache.txt"; then
  "$root/tools/build-wheels.sh" --prepare
fi
