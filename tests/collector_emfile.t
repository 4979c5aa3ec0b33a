#!/usr/bin/env bash
# The collector out of file descriptors (its fd limit below --max-conns):
# accept() fails with EMFILE while connections wait in the backlog. It must
# not spin on the listener: it pauses it and retries with backoff, says so
# once, and serves again once descriptors are free.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
LIMITS="$TOP/tests/collector_limits.py"
plan 5
OUT="$T_DIR/out.json"
TICKS=$(getconf CLK_TCK)

# 16 descriptors: stdio, epoll, the listener, the export and state files
# leave room for about 9 connections; 20 wait.
COLLECTOR_REAL=$COLLECTOR
COLLECTOR="$T_DIR/collector-ulimit"
printf '#!/bin/sh\nulimit -n 16 && exec "%s" "$@"\n' "$COLLECTOR_REAL" >"$COLLECTOR"
chmod +x "$COLLECTOR"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --hello-timeout 60 || exit 1
PORT=$COLL_PORT

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$COLL_PID/stat"; }

$H "$LIMITS" 127.0.0.1 $PORT hold 20 6 >"$T_DIR/hold.out" &
HOLD=$!
on_exit "kill $HOLD"
wait_for 10 grep -q connected "$T_DIR/hold.out"
sleep 0.5
T0=$(cpu_ticks); W0=$(date +%s.%N)
sleep 3
T1=$(cpu_ticks); W1=$(date +%s.%N)
PCT=$(awk -v t=$((T1 - T0)) -v hz="$TICKS" -v w0="$W0" -v w1="$W1" 'BEGIN { printf "%.1f", 100 * t / hz / (w1 - w0) }')
diag "collector CPU while out of descriptors: $PCT % of wall time ($((T1 - T0)) ticks in $(awk -v a="$W0" -v b="$W1" 'BEGIN { printf "%.2f", b - a }') s)"
awk -v p="$PCT" 'BEGIN { exit !(p < 10) }'
ok $? "out of descriptors, the collector does not spin (CPU < 10 % of wall time)"
[ "$(grep -c 'cannot accept' "$T_DIR/c.err")" = 1 ]
ok $? "the pause is logged once for the episode"

wait $HOLD
is "$($H "$LIMITS" 127.0.0.1 $PORT stream 0123456789abcdef0123456789abcdef 0 50)" "acked $((50 * 88))" \
	"once descriptors are free, a new agent is served to its end"
grep -q 'accepting again' "$T_DIR/c.err"
ok $? "the end of the episode is logged"
kill -TERM $COLL_PID; wait $COLL_PID
# (The held connections, closed in the backlog, may make a second short one.)
grep -q 'accept paused [1-9][0-9]* times' "$T_DIR/c.err"
ok $? "the episodes are counted in the stop line"
done_testing
