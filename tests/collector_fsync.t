#!/usr/bin/env bash
# vigil-collector --fsync: every acknowledgement follows an fdatasync of the
# export file and of its state file, so a power cut loses nothing that was
# acknowledged (docs/stream.md, "What survives"); without it, no sync at all.
# The order of system calls is what can be checked here: strace shows it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v strace >/dev/null || skip_all "strace not installed (scripts/install-deps.sh test)"
plan 5
OUT="$T_DIR/out.json"
TRACE="$T_DIR/trace"

# start_traced NAME ARGS...: the collector under strace, on port 0.
start_traced() {
	local name=$1; shift
	: >"$T_DIR/$name.err"
	strace -f -qq -o "$TRACE.$name" -e trace=fdatasync,sendto "$COLLECTOR" "$@" 2>>"$T_DIR/$name.err" &
	COLL_PID=$!
	on_exit "kill -9 $COLL_PID; wait $COLL_PID"
	wait_for 10 grep -q 'listening on' "$T_DIR/$name.err" || return 1
	COLL_PORT=$(grep -o 'listening on tcp://[^ ]*' "$T_DIR/$name.err" | tail -1 | sed 's/.*://')
}

# stop_traced: the collector (strace's child) stops; strace ends with it.
stop_traced() {
	pkill -TERM -P "$COLL_PID"
	wait "$COLL_PID"
}

start_traced c --listen tcp://127.0.0.1:0 -o "$OUT" --fsync || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" --no-procfs --poll-ms 20 || exit 1
run_markers "fs$$" 1 50
wait_for 20 sh -c "grep -q '\"fs$$-50\"' '$OUT'"
check "events arrive with --fsync" -- markers_in_order "fs$$" 50 "$OUT"
stop_agent
stop_traced

# Every ack (a 16-byte send) comes after two syncs since the previous one:
# the export file's and the state file's.
awk '/fdatasync\(/ { syncs++ } /sendto\(.*, 16, / { acks++; if (syncs < 2) bad++; syncs = 0 }
     END { print acks + 0, bad + 0 }' "$TRACE.c" >"$T_DIR/count"
read -r acks bad <"$T_DIR/count"
[ "$acks" -gt 0 ]
ok $? "acks were sent ($acks)"
is "$bad" 0 "each ack follows an fdatasync of the export file and of the state file"

start_traced d --listen tcp://127.0.0.1:0 -o "$T_DIR/out2.json" || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" --no-procfs --poll-ms 20 || exit 1
run_markers "fn$$" 1 20
wait_for 20 sh -c "grep -q '\"fn$$-20\"' '$T_DIR/out2.json'"
stop_agent
ok $? "the agent stops cleanly"
is "$(grep -c 'fdatasync(' "$TRACE.d")" 0 "without --fsync the collector does not sync"
stop_traced
done_testing
