#!/bin/sh
# Runs a test program under mpirun: mpirun_test.sh RANKS PROGRAM [ARGS...].
# Exits 77, which CTest reports as skipped, where mpirun is missing; the
# timeout turns a hang into a failure.
ranks=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpirun not found: skipped (apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
exec timeout 300 mpirun --allow-run-as-root --oversubscribe -n "$ranks" "$@"
