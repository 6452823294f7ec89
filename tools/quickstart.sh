#!/usr/bin/env bash
# Sets up and builds kiln, then compiles the shipped example (a Newton
# iteration whose trip count depends on the data) and runs it, then runs the
# same iteration from Python (examples/python/quickstart.py) with kiln.jit
# and its gradient through the loop.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
"$root/tools/setup.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$build/bin"
echo
echo "== kiln-compile examples/models/newton_sqrt.mlir"
"$bin/kiln-compile" "$root/examples/models/newton_sqrt.mlir" -o "$work/newton_sqrt.kmod"
"$bin/kiln-run" "$work/newton_sqrt.kmod" --list
echo
echo "== kiln-run: square roots of 2, 9, 10 and 1e6 by Newton's method, tolerance 1e-6"
"$bin/kiln-run" "$work/newton_sqrt.kmod" --input "$root/examples/models/newton_sqrt_input.npy" --repeat 1000
echo
echo "== Python: the same iteration with kiln.jit, and its gradient through the loop"
PYTHONPATH="$build/python" /usr/bin/python3 "$root/examples/python/quickstart.py"
