#!/usr/bin/env bash
# Crashes mid-stream lose nothing and double nothing: the collector killed
# (SIGKILL) and restarted, then the agent killed and restarted on the same
# pinned ring. The ring is the retransmit buffer; the collector's state file
# says what it wrote; re-sent records are recognised by their ring offset.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 8
N=1500
OUT="$T_DIR/out.json"

arrived() { grep -q "\"$1-$N\"" "$OUT"; }

start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
PORT=$COLL_PORT
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"

# 1. The collector is killed and comes back on the same port.
TAG="ck$$"
gen_markers "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 seen_at_least "$TAG" 200 "$OUT"
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
sleep 0.7
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" || exit 1
wait $G
wait_for 30 arrived "$TAG"
ok $? "after the collector's restart the last event arrives"
check "collector killed: every event once, in order" -- markers_in_order "$TAG" $N "$OUT"
check "collector killed: no sequence number twice in its output" -- no_dup_seq "$OUT"
test -s "$OUT.state"
ok $? "the collector keeps what it wrote in $(basename "$OUT").state"

# 2. The agent is killed and restarted on the same pinned ring.
TAG="ak$$"
gen_markers "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 seen_at_least "$TAG" 200 "$OUT"
kill -9 $AGENT_PID; wait $AGENT_PID 2>/dev/null
sleep 0.3
mv "$T_DIR/agent.err" "$T_DIR/agent1.err"
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
grep -q resumed "$T_DIR/agent.err"
ok $? "the new agent resumed the pinned ring"
wait $G
wait_for 30 arrived "$TAG"
check "agent killed: every event once, in order" -- markers_in_order "$TAG" $N "$OUT"
check "agent killed: no sequence number twice in the output" -- no_dup_seq "$OUT"
kill -TERM $COLL_PID; wait $COLL_PID
grep -q ' 0 duplicates, .* 0 missing in sequence' "$T_DIR/c.err"
ok $? "the collector saw no duplicate and no gap in sequence"
done_testing
