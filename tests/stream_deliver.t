#!/usr/bin/env bash
# The stream, end to end: real processes' events go from vigild's ring to a
# vigil-collector, in order and each once, over loopback and between two
# namespaces joined by a veth pair; the agent's local output keeps working
# beside the stream, and the JSON is the agent's own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 14
N=300

# 1. Loopback.
start_collector c1 "" --listen tcp://127.0.0.1:0 -o "$T_DIR/c1.json" || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" -o "$T_DIR/local.json" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
TAG="lo$$"
run_markers "$TAG" 1 $N
wait_for 20 sh -c "[ \$(grep -c '$TAG-$N\"' '$T_DIR/c1.json') -ge 1 ]"
check "loopback: $N events arrive, in order, each once" -- markers_in_order "$TAG" $N "$T_DIR/c1.json"
json_ok() { jq -e . "$1" >/dev/null; }
check "loopback: every line is JSON" -- json_ok "$T_DIR/c1.json"
check "loopback: no sequence number twice" -- no_dup_seq "$T_DIR/c1.json"
wait_for 10 sh -c "[ \$(grep -c '$TAG-$N\"' '$T_DIR/local.json') -ge 1 ]"
check "the local JSON sink keeps working beside the stream" -- markers_in_order "$TAG" $N "$T_DIR/local.json"
# Same encoder both sides: the collector's line for an event is the agent's.
L=$(grep "\"$TAG-7\"" "$T_DIR/local.json")
C=$(grep "\"$TAG-7\"" "$T_DIR/c1.json")
is "$C" "$L" "the collector writes the same JSON line as the agent"
grep -q 'sending from ring position .* with io_uring SEND_ZC' "$T_DIR/agent.err"
ok $? "the agent says which send path it uses"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID
grep -q ' 0 missing in sequence' "$T_DIR/c1.err"
ok $? "the collector counted no gap"
vigil_unpin() { "$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1; }
vigil_unpin

# 2. Two namespaces joined by a veth pair: the collector in one, the agent's
# connection from the other.
stream_netns a && NA=$STREAM_NS && stream_netns b && NB=$STREAM_NS || exit 1
VA="v4a$$"; VB="v4b$$"
ip link add "$VA" netns "$NA" type veth peer name "$VB" netns "$NB"
ip -n "$NA" addr add 10.44.0.1/24 dev "$VA"; ip -n "$NA" link set "$VA" up
ip -n "$NB" addr add 10.44.0.2/24 dev "$VB"; ip -n "$NB" link set "$VB" up
start_collector c2 "$NA" --listen tcp://10.44.0.1:0 -o "$T_DIR/c2.json" || exit 1
agent_in_netns "$NB" "$T_DIR/agent2.err" --send "tcp://10.44.0.1:$COLL_PORT"
A2=$AGENT_NS_PID
wait_for 20 grep -q 'connected' "$T_DIR/agent2.err"
ok $? "agent in one namespace connects to the collector in the other"
TAG="ns$$"
run_markers "$TAG" 1 $N
wait_for 20 sh -c "[ \$(grep -c '$TAG-$N\"' '$T_DIR/c2.json') -ge 1 ]"
check "veth: $N events arrive, in order, each once" -- markers_in_order "$TAG" $N "$T_DIR/c2.json"
check "veth: no sequence number twice" -- no_dup_seq "$T_DIR/c2.json"
grep -q 'connected from 10.44.0.2' "$T_DIR/c2.err"
ok $? "the collector saw the agent's namespace address"
kill -TERM $A2; wait $A2
grep -q 'stream tcp://10.44.0.1.*sends' "$T_DIR/agent2.err"
ok $? "the agent reports its sends at stop"

# 3. IPv6 loopback.
start_collector c3 "" --listen 'tcp://[::1]:0' -o "$T_DIR/c3.json" || exit 1
start_agent --send "tcp://[::1]:$COLL_PORT" --no-procfs --poll-ms 20 || exit 1
grep -q 'connected from \[::1\]' <(wait_for 10 grep -q 'connected from' "$T_DIR/c3.err"; cat "$T_DIR/c3.err")
ok $? "ipv6: the agent connects to [::1]"
TAG="v6$$"
run_markers "$TAG" 1 100
wait_for 20 sh -c "grep -q '\"$TAG-100\"' '$T_DIR/c3.json'"
check "ipv6: every event once, in order" -- markers_in_order "$TAG" 100 "$T_DIR/c3.json"
done_testing
