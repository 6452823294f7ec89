#!/usr/bin/env bash
# Sets up and builds kiln (tools/setup.sh), then runs the whole test suite:
# lit (IR, passes, tools), the GoogleTest unit tests, the end-to-end tests
# and the pytest suites of the Python packages, all through ctest.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
"$root/tools/setup.sh"
cd "$build"
ctest --output-on-failure -j "${KILN_JOBS:-2}" "$@"
