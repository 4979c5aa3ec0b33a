#!/usr/bin/env bash
# vigil drain: the events waiting in a pinned ring (agent stopped, programs
# still attached) are read out to a file in the stream format, which a
# collector decodes; a ring of another schema is drained with its own schema
# version in the hello, the way out when vigild refuses it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 11
start_agent --no-procfs -o "$T_DIR/local.json" || exit 1
# Beside a running agent, drain is refused as a second vigild is: it would
# take records out of the agent's stream (issue 38; before, it drained
# them and the agent lost them).
run_markers "live$$" 1 50 &
MARKERS=$!
"$VIGIL" --pin-dir "$T_PIN" drain -o "$T_DIR/live.stream" >"$T_DIR/live.out" 2>&1
rc=$?
wait $MARKERS
[ $rc -ne 0 ] && grep -q "vigild is running on $T_PIN.*stop vigild first" "$T_DIR/live.out"
ok $? "vigil drain beside a running vigild is refused, naming why" || sed 's/^/#   /' "$T_DIR/live.out"
[ ! -e "$T_DIR/live.stream" ]
ok $? "and writes nothing"
wait_for 10 sh -c "grep -q '\"live$$-50\"' '$T_DIR/local.json'"
check "the agent wrote every event, in order" -- markers_in_order "live$$" 50 "$T_DIR/local.json"
stop_agent
TAG="dr$$"
run_markers "$TAG" 1 100
pending() { "$VIGIL" --pin-dir "$T_PIN" status | awk '/ring_pending/ {print $2}'; }
BEFORE=$(pending)
"$VIGIL" --pin-dir "$T_PIN" drain -o "$T_DIR/ring.stream" >"$T_DIR/drain.out" 2>&1
ok $? "vigil drain reads the pinned ring out"
SCHEMA=$("$VIGILD" --version | sed -n 's/.*event schema \([0-9.]*\).*/\1/p')
grep -q "drained [1-9][0-9]* records (schema $SCHEMA)" "$T_DIR/drain.out"
ok $? "it says how many records, of which schema"
AFTER=$(pending)	# the programs still run: drain's and status's own events
[ "$AFTER" -lt $((BEFORE / 4)) ]
ok $? "the ring is released ($BEFORE bytes pending before, $AFTER after)"
"$VIGIL" --pin-dir "$T_PIN" drain -o "$T_DIR/ring.stream" >/dev/null 2>&1
ok $(( ! $? )) "an existing file is never overwritten"

# The drained file is a stream: a collector decodes it.
start_collector c "" --listen tcp://127.0.0.1:0 -o "$T_DIR/out.json" || exit 1
cat "$T_DIR/ring.stream" >"/dev/tcp/127.0.0.1/$COLL_PORT"
wait_for 10 sh -c "grep -q '\"$TAG-100\"' '$T_DIR/out.json'"
check "a collector decodes the drained file: every event once, in order" -- markers_in_order "$TAG" 100 "$T_DIR/out.json"

# A ring of another schema: vigild refuses it and names the way out.
bpftool map update pinned "$T_PIN/vigil_schema" key 0 0 0 0 value 9 0 0 0
"$VIGILD" --pin-dir "$T_PIN" --no-procfs -d 1 2>"$T_DIR/refused.err" >/dev/null
[ $? -ne 0 ] && grep -q "vigil drain" "$T_DIR/refused.err"
ok $? "vigild refuses a ring of schema 9 and names vigil drain"
run_markers "$TAG-old" 1 10
"$VIGIL" --pin-dir "$T_PIN" drain -o "$T_DIR/old.stream" >/dev/null 2>&1
is "$(od -An -tu4 -j12 -N4 "$T_DIR/old.stream" | tr -d ' ')" 9 "the drained hello names the ring's schema, 9"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null && start_agent --no-procfs -o "$T_DIR/new.json"
ok $? "after drain and unpin, vigild starts"
done_testing
