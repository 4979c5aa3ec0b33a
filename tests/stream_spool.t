#!/usr/bin/env bash
# A collector that stays away: past half the ring the backlog goes to the
# spool, so the ring never fills (BPF drops nothing) and every event arrives
# once the collector is back; past the spool's bound the oldest spooled
# records are dropped, counted by the agent, and reported by the collector as
# a gap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 16
OUT="$T_DIR/out.json"
RING=262144	# 256 KiB: a few hundred exec events past half of it, and room
		# for bursts of the host's own processes meanwhile
gen() { local i; for ((i = $2; i <= $3; i += 25)); do run_markers "$1" $i $((i + 24 > $3 ? $3 : i + 24)); sleep 0.01; done; }

# A port nobody listens on yet: take one, then free it.
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
PORT=$COLL_PORT
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
rm -f "$OUT" "$OUT.state"

spool_agent() {
	start_agent --ring-size $RING --send "tcp://127.0.0.1:$PORT" --spool-dir "$T_DIR/spool" \
		--no-procfs --poll-ms 10 "$@"
}

# 1. Away for longer than the ring can hold.
spool_agent || exit 1
TAG="sp$$"
N=1500
gen "$TAG" 1 $N
ls "$T_DIR/spool"/*.spool >/dev/null 2>&1
ok $? "the backlog went to the spool"
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" || exit 1
wait_for 30 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
ok $? "the last event arrives once the collector is back"
check "spool: every event once, in order" -- markers_in_order "$TAG" $N "$OUT"
check "spool: no sequence number twice" -- no_dup_seq "$OUT"
wait_for 10 sh -c "! ls '$T_DIR/spool'/*.spool >/dev/null 2>&1"
ok $? "the spool is emptied as the collector acknowledges"
stop_agent
grep -q 'BPF counted 0 ring-full losses' "$T_DIR/agent.err"
ok $? "BPF dropped nothing: the ring never filled"
grep -q 'spool syncs [1-9]' "$T_DIR/agent.err"
ok $? "the spool was synced to disk ($(grep -o 'spool syncs [^)]*)' "$T_DIR/agent.err"))"

# 2. The agent killed while its backlog is in the spool: the next agent on
# the same pinned ring takes the spool up and sends it first.
mv "$T_DIR/agent.err" "$T_DIR/agent0.err"
kill -TERM $COLL_PID; wait $COLL_PID
mv "$T_DIR/c.err" "$T_DIR/c0.err"
spool_agent || exit 1
TAG="kl$$"
N=800
gen "$TAG" 1 $N
ls "$T_DIR/spool"/*.spool >/dev/null 2>&1
ok $? "the backlog is in the spool when the agent is killed"
kill -9 $AGENT_PID; wait $AGENT_PID 2>/dev/null
mv "$T_DIR/agent.err" "$T_DIR/agent-killed.err"
# As if killed inside a write: half a record at the end of the newest
# segment; and before it, as a power cut can leave past what was synced,
# zeros (no record is shorter than its header).
LAST=$(ls "$T_DIR/spool"/*.spool | sort | tail -1)
head -c 64 /dev/zero >>"$LAST"
printf '\x50\x00\x00\x00\x00\x00\x00\x00\x02\x00\x50\x00' >>"$LAST"
spool_agent || exit 1
grep -q 'left by an earlier agent, sent first' "$T_DIR/agent.err"
ok $? "the restarted agent takes up the spool"
grep -q 'cutting a half-written record off the end' "$T_DIR/agent.err"
ok $? "and cuts off a record left half-written"
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" || exit 1
wait_for 30 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
ok $? "the last event arrives"
check "agent killed with a spool: every event once, in order" -- markers_in_order "$TAG" $N "$OUT"
stop_agent

# 3. Away past the spool's bound: the oldest spooled records are dropped.
mv "$T_DIR/agent.err" "$T_DIR/agent1.err"
spool_agent --spool-max-mb 0.125 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
kill -TERM $COLL_PID; wait $COLL_PID
mv "$T_DIR/c.err" "$T_DIR/c1.err"
TAG="ov$$"
N=2000
gen "$TAG" 1 $N
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" || exit 1
# The agent's backoff may keep it away a few seconds more, while this test's
# own processes make events: which of the markers survive depends on that.
# What follows the reconnect must all arrive.
wait_for 20 grep -q 'connected from' "$T_DIR/c.err"
run_markers "$TAG-after" 1 50
wait_for 30 sh -c "grep -q '\"$TAG-after-50\"' '$OUT'"
check "events after the reconnect arrive, once each, in order" -- markers_in_order "$TAG-after" 50 "$OUT"
got=$(marker_list "$TAG" "$OUT" | grep -v after)
[ -z "$(sort -n <<<"$got" | uniq -d)" ] && [ "$got" = "$(sort -n <<<"$got")" ]
ok $? "what arrives comes once each and in order ($(wc -l <<<"$got") of $N)"
jq -c 'select(.vigil_gap.lost_bytes > 0)' "$OUT" | grep -q .
ok $? "the collector reports the dropped range as a gap event"
stop_agent
grep -q 'spool full, [1-9][0-9]* records dropped' "$T_DIR/agent.err"
ok $? "the agent counts what the spool dropped"
done_testing
