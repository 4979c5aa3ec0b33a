#!/usr/bin/env bash
# The fleet path on a real JetStream cluster (make test-fleet): three
# private nats-servers on loopback, stream VIGIL with three replicas,
# collectors publishing in the batch layout (--publish-layout batch), and
# synthetic agents (tests/fleet_agent.py) whose events must each be in the
# stream once and in order, read back by a consumer (js_tool lines), while
#   1. the stream leader's server is killed (SIGKILL) and started again;
#   2. the stream leader's server is stopped (SIGSTOP) past the election
#      timeout, then continued;
#   3. the agents' collector is killed and they switch to a second
#      collector publishing to the same stream.
. "$(dirname "$0")/fleet_lib.sh"
plan 12
AGENTS=4 N=3000 RATE=500

cluster_start || exit 1
add_stream
ok $? "a three-node cluster takes a stream with three replicas"
L=$(wait_for 20 stream_leader >/dev/null && stream_leader)
[ -n "$L" ]
ok $? "the stream has a leader (n$L)"

start_collector a "" --listen tcp://127.0.0.1:0 -o "$T_DIR/a.json" \
	--publish "$NATS_URLS" --publish-layout batch --publish-wait 2 || exit 1
PA=$COLL_PORT APID=$COLL_PID
grep -q 'stream VIGIL: file storage, 3 replicas in cluster vc' "$T_DIR/a.err" &&
	! grep -q 'warning: stream VIGIL has replicas' "$T_DIR/a.err" &&
	grep -q 'warning: nats-server 2.9' "$T_DIR/a.err"
ok $? "the collector reads the stream (3 replicas in cluster vc) and warns only about the server's fsync"

# 1. The leader killed mid-stream and started again.
python3 "$FLEET_AGENT" "$PA" $AGENTS $N $RATE 90 kill >"$T_DIR/kill.out" & G=$!
on_exit "kill $G 2>/dev/null"
sleep 2
L=$(stream_leader)
kill -9 "${NPID[$L]}"; wait "${NPID[$L]}" 2>/dev/null
diag "stream leader n$L killed"
sleep 3
node_start "$L"
wait $G
ok $? "leader killed: every agent's events acknowledged ($(tail -1 "$T_DIR/kill.out"))"
check "leader killed: every event in the stream once, in order per agent" -- \
	stream_holds "$T_DIR/kill.lines" kill $AGENTS $N
NL=$(stream_leader)
[ -n "$NL" ] && [ "$NL" != "$L" ] || diag "the leader came back as n$NL"
ok 0 "a new leader took over (n$NL)"

# 2. The leader stopped past the election timeout, then continued.
wait_for 30 grep -q 'Server is ready' "$T_DIR/n$L.log"
python3 "$FLEET_AGENT" "$PA" $AGENTS $N $RATE 90 stop >"$T_DIR/stop.out" & G=$!
on_exit "kill $G 2>/dev/null"
sleep 2
L=$(stream_leader)
kill -STOP "${NPID[$L]}"
diag "stream leader n$L stopped"
sleep 8
kill -CONT "${NPID[$L]}"
wait $G
ok $? "leader stopped: every agent's events acknowledged ($(tail -1 "$T_DIR/stop.out"))"
check "leader stopped: every event in the stream once, in order per agent" -- \
	stream_holds "$T_DIR/stop.lines" stop $AGENTS $N

# 3. The agents switch collectors: a killed mid-stream, b takes them over
# and resumes each ring after its last message in the stream. The agents
# resume 200 records before their last ack (acks lost with a): b is sent
# records a published, and must not publish them again.
start_collector b "" --listen tcp://127.0.0.1:0 -o "$T_DIR/b.json" \
	--publish "$NATS_URLS" --publish-layout batch --publish-wait 2 || exit 1
PB=$COLL_PORT BPID=$COLL_PID
FLEET_LOSE_ACKS=200 python3 "$FLEET_AGENT" "$PA,$PB" $AGENTS $N $RATE 90 switch >"$T_DIR/switch.out" & G=$!
on_exit "kill $G 2>/dev/null"
sleep 2
kill -9 "$APID"; wait "$APID" 2>/dev/null
diag "collector a killed"
wait $G
ok $? "collector switched: every agent's events acknowledged ($(tail -1 "$T_DIR/switch.out"))"
check "collector switched: every event in the stream once, in order per agent" -- \
	stream_holds "$T_DIR/switch.lines" switch $AGENTS $N
grep -q 'agent switch0 .* connected' "$T_DIR/b.err"
ok $? "the agents reconnected to collector b"
kill -TERM "$BPID"; wait "$BPID"
grep -o 'JetStream: .*' "$T_DIR/b.err" | sed 's/^/# b: /'
grep -q "JetStream: .* $AGENTS look-ups of an agent ring's last message, [1-9][0-9]* events found there already" "$T_DIR/b.err"
ok $? "collector b looked up each ring's last message and left out what was there"
