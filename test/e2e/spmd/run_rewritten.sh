#!/usr/bin/env bash
# Rewrites a single-device program with kiln-opt and checks the result on
# real ranks: run_rewritten.sh KILN_OPT PROGRAM OUT MPIRUN RANKS CHECK
# [PASS_OPTION...]; each PASS_OPTION is one kiln-opt argument (such as
# "--kiln-data-parallel=ranks=2 batch-args=0,1"). Exits 77 (SKIP) when
# MPIRUN is empty.
set -euo pipefail
opt="$1" program="$2" out="$3" mpirun="$4" ranks="$5" check="$6"
shift 6
if [ -z "$mpirun" ]; then
  echo "SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
"$opt" "$program" "$@" -o "$out"
"$mpirun" --allow-run-as-root --oversubscribe -n "$ranks" "$check" "$out"
