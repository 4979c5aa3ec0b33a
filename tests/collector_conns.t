#!/usr/bin/env bash
# Connection slots against one hostile address: hundreds of connections that
# say hello and then nothing, from 127.0.0.2, must not keep a real agent
# (from 127.0.0.1) out. Per address at most --max-conns-per-addr are held;
# with the table full, the longest-idle connection of the address holding
# the most makes room (collector/conn_room.c).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
LIMITS="$TOP/tests/collector_limits.py"
plan 9

# idle_flood NAME: 300 hello-then-idle connections from 127.0.0.2, held 12 s
# (in the background; its output in $T_DIR/NAME.out).
idle_flood() {
	$H "$LIMITS" 127.0.0.1 "$PORT" idle 300 12 127.0.0.2 >"$T_DIR/$1.out" &
	FLOOD=$!
	on_exit "kill $FLOOD"
	wait_for 60 grep -q connected "$T_DIR/$1.out"
}

# agent_gets_in NAME WHEN: vigild (from 127.0.0.1) connects to collector
# NAME, and 50 events of its arrive in NAME.json (2 tests).
agent_gets_in() {
	local tag="cf$1$$"
	start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
	wait_for 10 grep -q 'connected from 127.0.0.1:' "$T_DIR/$1.err"
	ok $? "the real agent connects $2"
	run_markers "$tag" 1 50
	wait_for 20 sh -c "grep -q '\"$tag-50\"' '$T_DIR/$1.json'"
	check "its events arrive, in order, each once" -- markers_in_order "$tag" 50 "$T_DIR/$1.json"
}

# 1. Defaults: 32 per address. The flood holds 32 at most; the agent gets in.
start_collector c1 "" --listen tcp://127.0.0.1:0 -o "$T_DIR/c1.json" || exit 1
PORT=$COLL_PORT; C1=$COLL_PID
idle_flood flood1
grep -q 'connected 300' "$T_DIR/flood1.out"
ok $? "the flood made its 300 connections"
[ "$(grep -c 'evicted for a new connection: its address holds 32 connections (--max-conns-per-addr)' "$T_DIR/c1.err")" -ge 268 ]
ok $? "past 32, each new one of the address evicted its own longest-idle one, logged"
agent_gets_in c1 "while the flood holds its connections"
wait $FLOOD
OPEN=$(awk '/^open/ { print $2 }' "$T_DIR/flood1.out")
[ -n "$OPEN" ] && [ "$OPEN" -le 32 ]
ok $? "the flood's address held at most 32 connections ($OPEN open at its end)"
stop_agent
kill -TERM $C1; wait $C1

# 2. The table full (--max-conns 64, no per-address cap to speak of): the
# address holding the most gives up its longest-idle connection.
start_collector c2 "" --listen tcp://127.0.0.1:0 -o "$T_DIR/c2.json" --max-conns 64 \
	--max-conns-per-addr 1000 || exit 1
PORT=$COLL_PORT; C2=$COLL_PID
idle_flood flood2
grep -q 'evicted for a new connection: its address holds 64 connections (the most of any' "$T_DIR/c2.err"
ok $? "with the table full, the flood's longest-idle connection makes room"
agent_gets_in c2 "into a full table"
kill -0 $C2
ok $? "the collector is still running"
done_testing
