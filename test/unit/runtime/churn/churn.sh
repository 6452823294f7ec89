#!/bin/sh
# churn.sh KILN_OPT KILN_COMPILE CHURN SOURCE WORK CYCLES CALLS [valgrind]
#
# Derives @loop's gradient (kiln-opt --kiln-grad), compiles the module and
# runs kiln-runtime-churn on it. With `valgrind` last, the module is
# compiled for x86-64-v3 (Valgrind does not decode AVX-512) and the run goes
# through Valgrind's memcheck, failing on any block definitely or
# indirectly lost; without Valgrind installed that run is skipped (77).
set -eu
opt=$1 compile=$2 churn=$3 source=$4 work=$5 cycles=$6 calls=$7
mode=${8:-}
mkdir -p "$work"
cpu=host
if [ "$mode" = valgrind ]; then
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is not installed (apt-get install valgrind, or tools/setup.sh): skipped"
    exit 77
  fi
  cpu=x86-64-v3
fi
"$opt" "$source" --kiln-grad="function=loop" -o "$work/churn.mlir"
"$compile" "$work/churn.mlir" --target-cpu=$cpu -o "$work/churn.kmod"
if [ "$mode" = valgrind ]; then
  # Threads' stacks and the OpenMP and oneDNN pools a process keeps until
  # it exits are "still reachable" or "possibly lost", not leaks.
  exec valgrind --quiet --error-exitcode=3 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "$churn" "$work/churn.kmod" "$cycles" "$calls" --slack-kib 100000
fi
exec "$churn" "$work/churn.kmod" "$cycles" "$calls"
