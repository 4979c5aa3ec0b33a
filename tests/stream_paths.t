#!/usr/bin/env bash
# The send paths: io_uring SEND_ZC, MSG_ZEROCOPY and plain send() each
# deliver every event once and in order, and say which path is in use; on
# loopback, where SEND_ZC's usage report says the kernel copied the pages
# anyway, the default path switches itself to plain send().
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 9
N=200
OUT="$T_DIR/out.json"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1

for p in uring:"io_uring SEND_ZC" zerocopy:MSG_ZEROCOPY send:send; do
	path=${p%%:*} name=${p#*:}
	start_agent --send "tcp://127.0.0.1:$COLL_PORT" --send-path "$path" --no-procfs --poll-ms 20 || exit 1
	wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
	grep -q "with $name\$" "$T_DIR/agent.err"
	ok $? "--send-path $path: the agent reports $name"
	TAG="$path$$"
	run_markers "$TAG" 1 $N
	wait_for 20 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
	check "--send-path $path: every event once, in order" -- markers_in_order "$TAG" $N "$OUT"
	stop_agent
	mv "$T_DIR/agent.err" "$T_DIR/agent-$path.err"
done

# The default: SEND_ZC first, then send() once the usage reports show that
# zero copy buys nothing towards loopback. Small bursts make many sends.
start_agent --send "tcp://127.0.0.1:$COLL_PORT" --no-procfs --poll-ms 5 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
TAG="auto$$"
for ((i = 1; i <= 150; i++)); do /bin/true "$TAG-$i"; sleep 0.005; done
wait_for 20 sh -c "grep -q '\"$TAG-150\"' '$OUT'"
grep -q 'copied every zero-copy send .* plain send() instead' "$T_DIR/agent.err"
ok $? "default path: switches to send() towards loopback, by the usage report"
check "default path: every event once, in order, across the switch" -- markers_in_order "$TAG" 150 "$OUT"
check "no sequence number twice over all four runs" -- no_dup_seq "$OUT"
done_testing
