#!/bin/sh
# Runs kiln-opt's CPU lowering under Valgrind's memcheck on the given lit
# inputs; any report (an uninitialised value used, an invalid read or
# write) fails. AddressSanitizer sees only kiln's own code, but the
# lowering runs mostly inside Debian's uninstrumented MLIR, where a value
# read uninitialised (upstream's splitReduction taking a constant for a
# dim) corrupted memory that a later pass wrote through; memcheck sees
# that in any library.
#
#   memcheck.sh KILN_OPT WORK_DIR INPUT.mlir...
#
# Valgrind 3.19 cannot read the DWARF 5 of this build, so it runs a copy
# of kiln-opt without debug information.
set -eu
opt=$1
work=$2
shift 2
mkdir -p "$work"
strip -g -o "$work/kiln-opt" "$opt"
for input in "$@"; do
  echo "memcheck: kiln-opt --kiln-cpu-lowering $input"
  valgrind -q --error-exitcode=9 --num-callers=30 "$work/kiln-opt" "$input" \
    --split-input-file --kiln-cpu-lowering -o /dev/null
done
