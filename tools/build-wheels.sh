#!/usr/bin/env bash
# Builds kiln's two wheels, kiln (compiler and runtime) and kiln-runtime
# (runtime alone), into OUT_DIR, from the build tree BUILD_DIR that
# tools/setup.sh made: scikit-build-core reuses it as its build directory,
# so nothing is compiled twice.
#
#   tools/build-wheels.sh [OUT_DIR [BUILD_DIR]]   # defaults: dist/, build/
#
# `pip install .` (pyproject.toml) builds the same wheel from nothing in a
# directory of its own. The wheels are built by the interpreter the build
# tree was configured with (Python3_EXECUTABLE, Debian's python3), in a
# virtualenv holding the pinned build backend (tools/wheel-requirements.txt,
# installed once into $KILN_DEPS_DIR/wheel-build-env, default
# ~/.cache/kiln). `--prepare` only makes that virtualenv.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prepare_only=0
if [ "${1:-}" = "--prepare" ]; then
  prepare_only=1
  shift
fi
out="${1:-$root/dist}"
build="${2:-${KILN_BUILD_DIR:-$root/build}}"

python=/usr/bin/python3
if [ -f "$build/CMakeCache.txt" ]; then
  configured=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
  if [ -n "$configured" ]; then python="$configured"; fi
fi

deps="${KILN_DEPS_DIR:-$HOME/.cache/kiln}"
requirements="$root/tools/wheel-requirements.txt"
stamp_text="$("$python" -c 'import sys; print(sys.version)') $(sha256sum "$requirements" | cut -d' ' -f1)"
env_dir="$deps/wheel-build-env"
if [ ! -f "$env_dir/kiln-stamp" ] || [ "$(cat "$env_dir/kiln-stamp")" != "$stamp_text" ]; then
  echo "build-wheels: making the build environment $env_dir" >&2
  rm -rf "$env_dir"
  mkdir -p "$deps"
  "$python" -m venv "$env_dir"
  "$env_dir/bin/python" -m pip install -q --disable-pip-version-check \
    --require-hashes --no-deps --only-binary=:all: -r "$requirements"
  echo "$stamp_text" > "$env_dir/kiln-stamp"
fi
if ((prepare_only)); then
  exit 0
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "build-wheels: $build is not a configured build tree (run tools/setup.sh)" >&2
  exit 1
fi
mkdir -p "$out"
# cmake.python-hints=false: the build tree keeps the interpreter it was
# configured with (the wheel's tag is that interpreter's); build-dir: the
# existing tree; KILN_COMPILER=ON: the runtime's wheel built from a tree
# that also has the compiler only builds and installs less of it.
common=(--no-build-isolation --no-deps --disable-pip-version-check -q
  -w "$out"
  --config-settings="build-dir=$build" --config-settings=cmake.python-hints=false
  --config-settings=cmake.define.KILN_COMPILER=ON)
"$env_dir/bin/python" -m pip wheel "${common[@]}" "$root/runtime"
"$env_dir/bin/python" -m pip wheel "${common[@]}" "$root"
ls "$out"/kiln-*.whl "$out"/kiln_runtime-*.whl
