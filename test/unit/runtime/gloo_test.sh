#!/bin/sh
# Runs a test program on several ranks that meet through a store, as the
# Gloo plug-in expects: gloo_test.sh file|redis RANKS PROGRAM [ARGS...].
# Each rank gets KILN_RANK, KILN_WORLD_SIZE, KILN_STORE and a fresh
# KILN_RUN_ID; `file` uses a new directory, `redis` a redis-server started
# here on a free port and stopped at the end (exit 77, which CTest reports
# as skipped, without redis-server). The run fails if any rank fails; a
# rank that outlives the others by the time limit is killed, so a hang is a
# failure.
store=$1
ranks=$2
shift 2
work=$(mktemp -d)
redis_pid=
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
case $store in
file)
  KILN_STORE=file:$work/store
  ;;
redis)
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server not found: skipped (apt-get install redis-server)"
    exit 77
  fi
  # A port nobody listens on, then the server on it.
  port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  tries=0
  until redis-cli -p "$port" ping >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ $tries -gt 100 ]; then
      echo "redis-server did not start:"; cat "$work/redis.log"; exit 1
    fi
    sleep 0.1
  done
  KILN_STORE=redis://127.0.0.1:$port
  ;;
*)
  echo "usage: gloo_test.sh file|redis RANKS PROGRAM [ARGS...]" >&2
  exit 2
  ;;
esac
export KILN_STORE KILN_WORLD_SIZE=$ranks KILN_RUN_ID=test$$
export KILN_GLOO_HOSTNAME=${KILN_GLOO_HOSTNAME:-127.0.0.1}
pids=
rank=0
while [ $rank -lt "$ranks" ]; do
  KILN_RANK=$rank timeout ${KILN_TEST_TIMEOUT:-300} "$@" >"$work/rank$rank.log" 2>&1 &
  pids="$pids $!"
  rank=$((rank + 1))
done
status=0
rank=0
for pid in $pids; do
  if ! wait "$pid"; then
    status=1
    echo "=== rank $rank failed"
  fi
  rank=$((rank + 1))
done
rank=0
while [ $rank -lt "$ranks" ]; do
  echo "=== rank $rank"
  cat "$work/rank$rank.log"
  rank=$((rank + 1))
done
exit $status
