#!/bin/sh
# kiln-launch as a user meets it: check_kiln_launch.sh KILN_LAUNCH.
# Every rank gets its variables and a store that is removed afterwards; a
# failing rank (an exit status, a signal) ends the run at once with its
# status and a message naming it; a rank that ignores SIGTERM is killed
# after the grace period; a signal to the launcher reaches the ranks; bad
# command lines are refused.
launch=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_kiln_launch: $*" >&2; exit 1; }

# Each rank's variables.
"$launch" --nproc 3 -- sh -c 'echo "$KILN_RANK of $KILN_WORLD_SIZE at $KILN_STORE run $KILN_RUN_ID host $KILN_GLOO_HOSTNAME"' \
  >"$work/out" 2>"$work/err" || fail "a run of 3 successful ranks failed: $(cat "$work/err")"
for rank in 0 1 2; do
  grep -q "^$rank of 3 at file:/tmp/kiln-launch-.*/store run launch-.* host 127.0.0.1$" "$work/out" ||
    fail "rank $rank's variables are wrong: $(cat "$work/out")"
done
store=$(sed -n 's/^0 of 3 at file:\(.*\)\/store run.*/\1/p' "$work/out")
[ -n "$store" ] && [ ! -e "$store" ] || fail "the launcher's store $store was not removed"

# Given a store, run id and host, the ranks get them.
"$launch" --nproc=2 --store redis://example:7000 --run-id job7 --hostname 10.0.0.5 -- \
  sh -c 'echo "$KILN_STORE $KILN_RUN_ID $KILN_GLOO_HOSTNAME"' >"$work/out" 2>"$work/err" ||
  fail "a run with a given store failed: $(cat "$work/err")"
[ "$(sort -u "$work/out")" = "redis://example:7000 job7 10.0.0.5" ] ||
  fail "the given store, run id and host did not reach the ranks: $(cat "$work/out")"

# Each of several ranks gets an equal share of the cores as OpenMP threads
# (at least 1), said on stderr; a value the user set is kept.
cores=$(getconf _NPROCESSORS_ONLN)
share=$((cores / 2)); [ $share -ge 1 ] || share=1
env -u OMP_NUM_THREADS "$launch" --nproc 2 -- sh -c 'echo "$OMP_NUM_THREADS"' \
  >"$work/out" 2>"$work/err" || fail "a run of 2 ranks failed: $(cat "$work/err")"
[ "$(sort -u "$work/out")" = "$share" ] ||
  fail "2 ranks on $cores cores got OMP_NUM_THREADS $(cat "$work/out"), not $share"
grep -q "^kiln-launch: OMP_NUM_THREADS=$share for each of the 2 ranks" "$work/err" ||
  fail "the thread share is not said: $(cat "$work/err")"
OMP_NUM_THREADS=7 "$launch" --nproc 2 -- sh -c 'echo "$OMP_NUM_THREADS"' \
  >"$work/out" 2>"$work/err" || fail "a run of 2 ranks failed"
[ "$(sort -u "$work/out")" = 7 ] && [ ! -s "$work/err" ] ||
  fail "the user's OMP_NUM_THREADS=7 was not kept: $(cat "$work/out" "$work/err")"

# A failing rank ends the run with its status, the others stopped at once.
start=$(date +%s)
"$launch" --nproc 3 --grace 5 -- sh -c 'if [ "$KILN_RANK" = 1 ]; then exit 3; fi; exec sleep 60' \
  >"$work/out" 2>"$work/err"
status=$?
[ $status -eq 3 ] || fail "a rank that exits with 3 made the launcher exit with $status"
grep -q "^kiln-launch: rank 1 exited with status 3; stopping the other ranks$" "$work/err" ||
  fail "the failure is not reported: $(cat "$work/err")"
[ $(($(date +%s) - start)) -lt 20 ] || fail "the other ranks were not stopped promptly"

# A rank killed by a signal: 128 + the signal.
"$launch" --nproc 2 -- sh -c 'if [ "$KILN_RANK" = 0 ]; then kill -9 $$; fi; exec sleep 60' \
  >"$work/out" 2>"$work/err"
status=$?
[ $status -eq 137 ] || fail "a rank killed by SIGKILL made the launcher exit with $status"
grep -q "^kiln-launch: rank 0 was killed by signal 9" "$work/err" ||
  fail "the killed rank is not reported: $(cat "$work/err")"

# A rank that ignores SIGTERM is killed after the grace period.
start=$(date +%s)
# Rank 0 fails once rank 1 ignores SIGTERM (the file says so).
ready=$work/ignoring
"$launch" --nproc 2 --grace 1 -- sh -c 'if [ "$KILN_RANK" = 0 ]; then while [ ! -e "$0" ]; do sleep 0.05; done; exit 5; fi; trap "" TERM; touch "$0"; while :; do sleep 1; done' "$ready" \
  >"$work/out" 2>"$work/err"
status=$?
[ $status -eq 5 ] || fail "the stubborn run exited with $status, not the failed rank's 5"
grep -q "still running after the grace period: killing them" "$work/err" ||
  fail "the stubborn rank was not killed: $(cat "$work/err")"
[ $(($(date +%s) - start)) -lt 20 ] || fail "the grace period was not kept"

# A signal to the launcher reaches every rank.
"$launch" --nproc 2 -- sh -c 'trap "echo rank $KILN_RANK stopped; exit 0" TERM; touch "$0.$KILN_RANK"; sleep 60 & wait' "$work/trapped" \
  >"$work/out" 2>"$work/err" &
pid=$!
# Once both ranks have their trap.
tries=0
until [ -e "$work/trapped.0" ] && [ -e "$work/trapped.1" ]; do
  tries=$((tries + 1))
  [ $tries -lt 200 ] || fail "the ranks did not start"
  sleep 0.05
done
kill -TERM $pid
wait $pid
status=$?
[ $status -eq 143 ] || fail "a launcher sent SIGTERM exited with $status, not 143"
[ "$(grep -c 'stopped' "$work/out")" -eq 2 ] || fail "SIGTERM did not reach both ranks: $(cat "$work/out")"

# Bad command lines.
check_refused() {
  expected=$1
  shift
  "$launch" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ $status -eq 2 ] || fail "'$*' exited with $status, not 2"
  grep -qF "kiln-launch: error: $expected" "$work/err" ||
    fail "'$*' said: $(cat "$work/err")"
}
check_refused "--nproc N is required" -- true
check_refused "--nproc needs a number of ranks of at least 1, not '0'" --nproc 0 -- true
check_refused "--nproc needs a number of ranks of at least 1, not 'two'" --nproc two -- true
check_refused "unknown option '--nnodes'" --nnodes 2 -- true
check_refused "--store must be file:DIRECTORY or redis://HOST[:PORT], not 'tcp://x'" --nproc 2 --store tcp://x -- true
check_refused "no command to run" --nproc 2 --
check_refused "--grace needs a number of seconds from 0 to 86400, not '-1'" --nproc 2 --grace -1 -- true

# A command that does not exist: every rank reports it, status 127.
"$launch" --nproc 2 -- /nonexistent/program >"$work/out" 2>"$work/err"
status=$?
[ $status -eq 127 ] || fail "a missing program made the launcher exit with $status"
grep -q "cannot run '/nonexistent/program': No such file or directory" "$work/err" ||
  fail "the missing program is not reported: $(cat "$work/err")"

"$launch" --help | grep -q "^USAGE: kiln-launch --nproc N" || fail "--help has no usage line"
echo "check_kiln_launch: ok"
