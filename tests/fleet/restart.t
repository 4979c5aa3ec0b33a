#!/usr/bin/env bash
# The batch layout's pipeline (docs/stream.md, "Pipelined (batch)") across
# a collector killed mid-stream and started again on the same export file:
# agents are acknowledged only up to the batches JetStream acknowledged,
# and the state file records the export file's size and each agent's
# offset as of those batches. So after the restart the export file is cut
# back to the last batch JetStream had, the agents send the rest again,
# and both the stream and the export file hold every event once, in order.
. "$(dirname "$0")/fleet_lib.sh"
plan 5
AGENTS=4 N=30000 RATE=10000

cluster_start || exit 1
add_stream
ok $? "a three-node cluster takes a stream with three replicas"

start_collector a "" --listen tcp://127.0.0.1:0 -o "$T_DIR/a.json" --export-file-max-size-mb 0 \
	--publish "$NATS_URLS" --publish-layout batch --publish-wait 2 || exit 1
PA=$COLL_PORT
python3 "$FLEET_AGENT" "$PA" $AGENTS $N $RATE 120 restart >"$T_DIR/restart.out" & G=$!
on_exit "kill $G 2>/dev/null"
sleep 1.5
kill -9 "$COLL_PID"; wait "$COLL_PID" 2>/dev/null
diag "collector killed with $(grep -c . "$T_DIR/a.json") lines in its export file"
start_collector a2 "" --listen "tcp://127.0.0.1:$PA" -o "$T_DIR/a.json" --export-file-max-size-mb 0 \
	--publish "$NATS_URLS" --publish-layout batch --publish-wait 2 || exit 1
wait $G
ok $? "every agent's events acknowledged across the restart ($(tail -1 "$T_DIR/restart.out"))"
grep -q 'dropping [0-9]* bytes written after the last acknowledgement' "$T_DIR/a2.err" ||
	diag "nothing was written past the last acknowledgement at the kill"
check "the stream holds every event once, in order per agent" -- \
	stream_holds "$T_DIR/restart.lines" restart $AGENTS $N
check "the export file holds every event once, in order per agent" -- \
	once_in_order "$T_DIR/a.json" restart $AGENTS $N
kill -TERM "$COLL_PID"; wait "$COLL_PID"
grep -q 'JetStream: [0-9]* events published in [0-9]* messages' "$T_DIR/a2.err"
ok $? "the collector stops cleanly and says what it published"
