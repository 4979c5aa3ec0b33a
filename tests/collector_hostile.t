#!/usr/bin/env bash
# Every byte from the network is hostile: malformed streams close only their
# own connection, with the reason logged; the collector stays up, keeps
# serving a real agent, and stays within its memory bound.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
HOSTILE="$TOP/tests/collector_hostile.py"
CASES="garbage bad_version bad_schema newer_major hello_len_huge type_size_mismatch oversized_len
       len_past_limit busy_record unknown_type size_mismatch short_event no_hello
       health_empty health_nested health_inner_size health_inner_claims_more
       health_unknown_inner_size health_short_header"
# Health records the collector takes: a heartbeat, a kind it does not know.
OPEN_CASES="health_heartbeat health_unknown_inner"
plan $(( $(echo $CASES $OPEN_CASES | wc -w) + 11 ))
OUT="$T_DIR/out.json"

start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --hello-timeout 1 --frame-timeout 1 \
	--max-conns 80 --max-conns-per-addr 100 || exit 1
PORT=$COLL_PORT
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"

for c in $CASES; do
	is "$($H "$HOSTILE" $PORT $c)" closed "$c: the collector closes that connection"
done
for c in $OPEN_CASES; do
	is "$($H "$HOSTILE" $PORT $c)" open "$c: the collector keeps that connection"
done
$H "$HOSTILE" $PORT truncated_then_close >/dev/null
grep -q 'closed inside a record' "$T_DIR/c.err"
ok $? "a stream cut inside a record is noticed"
for why in 'bad magic' 'unknown stream version' 'record length past the limit' \
	'event type not in the hello' 'no hello in time'; do
	grep -q "closing .*: $why" "$T_DIR/c.err"
	ok $? "the reason is logged: $why"
done

# Slow senders that never finish a frame: bounded memory, then closed.
RSS0=$(awk '/VmRSS/ {print $2}' /proc/$COLL_PID/status)
$H "$HOSTILE" $PORT slow 60 2.5 >"$T_DIR/slow.out" &
SLOW=$!
on_exit "kill $SLOW"
sleep 1
RSS1=$(awk '/VmRSS/ {print $2}' /proc/$COLL_PID/status)
diag "collector RSS ${RSS0} KiB idle, ${RSS1} KiB with 60 stalled connections"
# 256 KiB of buffer per connection at most, plus slack for the allocator.
[ $((RSS1 - RSS0)) -le $((60 * 256 + 8192)) ]
ok $? "memory stays within 256 KiB per connection"
wait $SLOW
is "$(cat "$T_DIR/slow.out")" closed "connections that never finish a frame are closed"

# A well-behaved synthetic agent is served beside all this.
is "$($H "$HOSTILE" $PORT good 100)" "acked $((100 * 88))" "a good stream is acknowledged to its end"

# And the real agent's events still flow.
TAG="ho$$"
run_markers "$TAG" 1 100
wait_for 20 sh -c "grep -q '\"$TAG-100\"' '$OUT'"
check "the real agent's events arrive, in order, each once" -- markers_in_order "$TAG" 100 "$OUT"
kill -0 $COLL_PID
ok $? "the collector is still running"
done_testing
