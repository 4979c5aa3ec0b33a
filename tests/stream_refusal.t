#!/usr/bin/env bash
# An agent whose hello the collector refuses backs off as for any other
# refusal, and says the collector's reason once (issue 38, point 2;
# docs/stream.md, "Refusals"). vigild --send tls:// with a certificate for
# node N and --node-name other: the collector refuses each hello (the name
# is not the certificate's). Before, the agent counted the connection as
# working at the hello (backoff reset), so it reconnected at once, 79 times
# in 8 s, and logged each time; now it backs off to 5 s (8 tries at most in
# 8 s: 100 ms doubling), and logs the collector's reason, sent in a refusal
# frame, once. Then the same agent with the right name streams: its events
# arrive.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
plan 6
NODE="refnode$$"
ca ca && cert ca collector vigil-collector 'IP:127.0.0.1' && cert ca agent "$NODE" "DNS:$NODE"
ok $? "test certificates made"
start_collector c "" --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key" --tls-ca "$P/ca.pem" -o "$T_DIR/out.json" || exit 1
TLS=(--tls-cert "$P/agent.pem" --tls-key "$P/agent.key" --tls-ca "$P/ca.pem")

start_agent --send "tls://127.0.0.1:$COLL_PORT" "${TLS[@]}" --node-name "other$$" \
	--no-procfs --poll-ms 20 || exit 1
sleep 8
N=$(grep -c "hello names node other$$, its certificate $NODE: refused" "$T_DIR/c.err")
[ "$N" -ge 2 ] && [ "$N" -le 8 ]
ok $? "a refused hello backs off: $N tries in 8 s (100 ms doubling to 5 s)"
is "$(grep -c "the collector refused our hello: our hello's node name (--node-name, default the host name) is not our certificate's first DNS name" "$T_DIR/agent.err")" 1 \
	"the agent logs the collector's reason once" || sed 's/^/#   /' "$T_DIR/agent.err"
is "$(grep -c 'connected, sending' "$T_DIR/agent.err")" 1 "and says connected once, not at each try"
stop_agent

# The right name: accepted, events arrive.
TAG="ref$$"
start_agent --send "tls://127.0.0.1:$COLL_PORT" "${TLS[@]}" --node-name "$NODE" \
	--no-procfs --poll-ms 20 || exit 1
run_markers "$TAG" 1 20
wait_for 10 sh -c "grep -q '\"$TAG-20\"' '$T_DIR/out.json'"
check "with its certificate's name the agent streams: every event once, in order" -- \
	markers_in_order "$TAG" 20 "$T_DIR/out.json"
stop_agent
ok $? "the agent stops cleanly"
