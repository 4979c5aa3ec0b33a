#!/usr/bin/env bash
# The collector's table of written offsets (PATH.state, collector/commit.c)
# cannot fill for good: every reboot of a node is a new stream, so more
# streams than the table holds come over time. Each new one takes the place
# of the one least recently heard with no live connection; entries not
# heard for --forget-after are forgotten; the time last heard survives a
# restart; a state file of format 1 is read and converted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
LIMITS="$TOP/tests/collector_limits.py"
plan 16
REC=88	# an exit record's footprint
B1=11111111111111111111111111111111
B2=22222222222222222222222222222222
B3=33333333333333333333333333333333
B4=44444444444444444444444444444444
S() { $H "$LIMITS" 127.0.0.1 "$PORT" "$@"; }
# The stop line of stream BOOT in the collector log FILE.
report() { grep "agent hostile-node (boot $1, ring 7):" "$2"; }
stop_collector() { kill -TERM "$COLL_PID"; wait "$COLL_PID"; }
# resent_after_restart NAME BOOT N NEW OLD DESCRIPTION: collector NAME on
# $OUT, stream BOOT sends N records from offset 0, and NAME takes NEW of
# them and drops OLD as re-sent.
resent_after_restart() {
	start_collector "$1" "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
	PORT=$COLL_PORT
	S stream "$2" 0 "$3" >/dev/null
	stop_collector
	report "$2" "$T_DIR/$1.err" | grep -q ": $4 records, 0 duplicates, $5 re-sent"
	ok $? "$6"
}

# 1. 300 streams through a table of 4, then a real agent: acknowledged, and
# its ring released (it resumes past 0 after the collector restarts).
OUT="$T_DIR/out1.json"
start_collector c1 "" --listen tcp://127.0.0.1:0 -o "$OUT" --max-agents 4 --max-conns 4 || exit 1
PORT=$COLL_PORT
is "$(S identities 300)" 300 "300 streams through a table of 4: each one acknowledged"
[ "$(grep -c 'forgetting stream boot [0-9a-f]* ring 7 (written to offset 88, .*: the table of 4 is full' "$T_DIR/c1.err")" -ge 296 ]
ok $? "each new stream took the place of the least recently heard, logged by name"
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
TAG="ct$$"
run_markers "$TAG" 1 50
wait_for 20 sh -c "grep -q '\"$TAG-50\"' '$OUT'"
check "a real agent's events arrive after them, in order, each once" -- markers_in_order "$TAG" 50 "$OUT"
! grep -q 'cannot record progress' "$T_DIR/c1.err"
ok $? "its progress is recorded (no 'cannot record progress')"
stop_collector
start_collector c1b "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" --max-agents 4 --max-conns 4 || exit 1
wait_for 20 grep -q 'connected from 127.0.0.1:.* at offset' "$T_DIR/c1b.err"
POS=$(grep -o 'connected from 127.0.0.1:.* at offset [0-9]*' "$T_DIR/c1b.err" | tail -1 | awk '{ print $NF }')
[ -n "$POS" ] && [ "$POS" -gt 0 ]
ok $? "the agent was acknowledged: after the restart it resumes at ring offset $POS"
run_markers "$TAG" 51 100
wait_for 20 sh -c "grep -q '\"$TAG-100\"' '$OUT'"
check "across the restart every event once, in order" -- markers_in_order "$TAG" 100 "$OUT"
stop_agent
stop_collector

# 2. What the table records, and when each stream was heard, survive a
# restart: a stream sent again is dropped up to its offset; past
# --forget-after (2 s here) the restarted collector forgets it.
OUT="$T_DIR/out2.json"
start_collector c2 "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
PORT=$COLL_PORT
is "$(S stream $B1 0 20)" "acked $((20 * REC))" "a stream of 20 records is acknowledged"
stop_collector
resent_after_restart c3 $B1 25 5 20 "after a restart, its first 20 records sent again are dropped as re-sent"
sleep 3
start_collector c4 "" --listen tcp://127.0.0.1:0 -o "$OUT" --forget-after 2 || exit 1
grep -q "forgetting stream boot $B1 ring 7 (written to offset $((25 * REC)), last heard [3-9] s ago): not heard for --forget-after 2 s" "$T_DIR/c4.err"
ok $? "a restart with --forget-after 2 forgets the stream last heard 3 s before"
stop_collector

# 3. While running: a stream gone for --forget-after is forgotten, one with a
# live connection is kept until it goes.
OUT="$T_DIR/out3.json"
start_collector c5 "" --listen tcp://127.0.0.1:0 -o "$OUT" --forget-after 2 || exit 1
PORT=$COLL_PORT
S stream $B2 0 1 1 6 >"$T_DIR/b2.out" &
B2PID=$!
on_exit "kill $B2PID"
S stream $B3 0 1 >/dev/null
wait_for 10 grep -q "forgetting stream boot $B3 ring 7 .*not heard for --forget-after 2 s" "$T_DIR/c5.err"
ok $? "a stream not heard for 2 s is forgotten"
sleep 2
! grep -q "forgetting stream boot $B2" "$T_DIR/c5.err"
ok $? "a stream with a live connection is kept"
wait $B2PID
wait_for 10 grep -q "forgetting stream boot $B2 ring 7" "$T_DIR/c5.err"
ok $? "and forgotten once its connection is gone for 2 s"
stop_collector

# 4. A state file of format 1 (32-byte entries, no file header), as the
# collector wrote before with the default --max-agents 256: slot 0 (older,
# offset 10 records) at 0, slot 1 (newer, 20 records) past 256 entries. Read
# (the newer slot, also with --max-conns above --max-agents), its offsets
# kept, converted.
OUT="$T_DIR/out4.json"
: >"$OUT"
$H - "$OUT.state" $B4 $REC <<'EOF'
import struct, sys
def fnv(b, h):
    for x in b:
        h = ((h ^ x) * 16777619) & 0xffffffff
    return h
def slot(gen, offset):
    entries = struct.pack('<16sIIQ', bytes.fromhex(sys.argv[2]), 7, 0, offset)
    s = fnv(entries, fnv(struct.pack('<QQQII', 0x54534c4756, gen, 0, 1, 0), 2166136261))
    return struct.pack('<QQQII', 0x54534c4756, gen, 0, 1, s) + entries
rec = int(sys.argv[3])
with open(sys.argv[1], 'wb') as f:
    f.write(slot(3, 10 * rec))
    f.seek(32 + 256 * 32)
    f.write(slot(4, 20 * rec))
EOF
start_collector c6 "" --listen tcp://127.0.0.1:0 -o "$OUT" --max-conns 300 || exit 1
PORT=$COLL_PORT
grep -q "$OUT.state: format 1, 256 entries a slot: rewritten as format 2, 300" "$T_DIR/c6.err"
ok $? "a format-1 state file is read and rewritten as format 2"
is "$(head -c 8 "$OUT.state")" VIGLSTAT "the file now starts with the format-2 header"
S stream $B4 0 25 >/dev/null
stop_collector
report $B4 "$T_DIR/c6.err" | grep -q ': 5 records, 0 duplicates, 20 re-sent'
ok $? "the offset it recorded holds: 20 records sent again are dropped"
resent_after_restart c7 $B4 26 1 25 "and the converted file reads back after another restart"
done_testing
