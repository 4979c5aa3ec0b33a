#!/usr/bin/env bash
# Fleet figures (docs/stream.md, "Fleet figures"): 20 synthetic agents into
# one collector (batch layout) into the three-node cluster, stream with
# three replicas. Prints events/s, the delay from an event's making to the
# ack that covers it (which follows JetStream's ack), and the collector's
# peak RSS; checks every event is in the stream once, in order.
# FLEET_RATE sets each agent's offered rate (default 1000/s).
. "$(dirname "$0")/fleet_lib.sh"
plan 3
AGENTS=20 N=${FLEET_EVENTS:-5000} RATE=${FLEET_RATE:-1000}

cluster_start || exit 1
add_stream
ok $? "a three-node cluster takes a stream with three replicas"
start_collector c "" --listen tcp://127.0.0.1:0 -o /dev/null \
	--publish "$NATS_URLS" --publish-layout batch || exit 1
python3 "$FLEET_AGENT" "$COLL_PORT" $AGENTS "$N" "$RATE" 120 fleet >"$T_DIR/fleet.out"
ok $? "$AGENTS agents x $N events at $RATE/s each: $(tail -1 "$T_DIR/fleet.out")"
diag "collector peak RSS: $(grep VmHWM "/proc/$COLL_PID/status" | awk '{print $2, $3}')," \
	"CPU $(awk '{printf "%.2f s", ($14 + $15) / 100}' "/proc/$COLL_PID/stat")"
check "every event in the stream once, in order per agent" -- \
	stream_holds "$T_DIR/fleet.lines" fleet $AGENTS "$N"
