#!/usr/bin/env bash
# Runs kiln-program-fuzz on seeds nobody has run: COUNT consecutive seeds
# from a start drawn at random in [1000000, 2^31 - COUNT), far above the
# ranges of the recorded campaigns (README.md, "Campaigns so far"). The
# range goes first in the output, so that a failure can be rerun with
# `kiln-program-fuzz --seeds A:B`; failing programs are reduced into DIR.
#
#   test/fuzz/fresh-seeds.sh FUZZER [COUNT] [DIR] [kiln-program-fuzz options]
#
# KILN_FUZZ_START fixes the start (to rerun a night's range).
set -euo pipefail
fuzzer=$1
count=${2:-200}
dir=${3:-${TMPDIR:-/tmp}/kiln-fresh-seeds}
shift $(( $# < 3 ? $# : 3 ))
if [ -n "${KILN_FUZZ_START:-}" ]; then
  start=$KILN_FUZZ_START
else
  # 30 random bits from the kernel, not the clock: two runs in the same
  # second draw different ranges.
  start=$(( 1000000 + $(od -An -N4 -tu4 /dev/urandom) % (2147483647 - 1000000 - count) ))
fi
echo "fresh seeds: --seeds $start:$((start + count)) (failures reduced into $dir)"
mkdir -p "$dir"
exec "$fuzzer" --seeds "$start:$((start + count))" --reduce "$dir" "$@"
