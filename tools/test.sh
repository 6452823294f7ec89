#!/usr/bin/env bash
# Sets up and builds kiln (tools/setup.sh), then runs the whole test suite:
# lit (IR, passes, tools), the GoogleTest unit tests, the end-to-end tests
# and the pytest suites of the Python packages, all through ctest.
#
# Usage: tools/test.sh [--sanitize] [ctest arguments]
#
# --sanitize builds kiln's own code with AddressSanitizer (LeakSanitizer
# included) and UndefinedBehaviorSanitizer into build-sanitize/ (or
# KILN_BUILD_DIR) and runs the suite there with leak checking on. The
# Python bindings are left out of that tree: Debian's python3 is not built
# with ASan and cannot load an extension that is.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=0
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=1
  shift
fi

if ((sanitize)); then
  export KILN_BUILD_DIR="${KILN_BUILD_DIR:-$root/build-sanitize}"
  # Every mpirun the suite starts (CMake's, lit's, the scripts') is
  # tools/sanitize/mpirun, which has LeakSanitizer skip OpenMPI's own
  # leaks in the ranks (docs/sanitizers.md).
  export PATH="$root/tools/sanitize:$PATH"
  "$root/tools/setup.sh" '-DKILN_SANITIZE=address;undefined' -DKILN_PYTHON=OFF \
    "-DKILN_MPIRUN=$root/tools/sanitize/mpirun" \
    "-DKILN_EXAMPLES_MPIRUN=$root/tools/sanitize/mpirun"
  # Options the executables do not carry themselves
  # (cmake/SanitizerDefaults.c has those); the caller's come last and win.
  export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
else
  "$root/tools/setup.sh"
fi

build="${KILN_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${KILN_JOBS:-2}" "$@"
