#!/usr/bin/env bash
# The real agent to the real collector over tls:// (docs/stream.md, "TLS"):
# mutual TLS 1.3, every event once and in order, each line naming the node
# its certificate names; the collector restarted mid-stream: the agent makes
# a new handshake and resumes where the collector's state says, nothing lost
# or doubled; its --status-file names the agent, its address and its
# certificate. Certificates are made here (tests/tls_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
plan 13
NODE="tlse2e$$"
ca ca && cert ca collector collector 'IP:127.0.0.1' && cert ca agent "$NODE" "DNS:$NODE"
ok $? "test certificates made"
OUT="$T_DIR/out.json"
CTLS=(--tls-cert "$P/collector.pem" --tls-key "$P/collector.key" --tls-ca "$P/ca.pem")
ATLS=(--tls-cert "$P/agent.pem" --tls-key "$P/agent.key" --tls-ca "$P/ca.pem")

start_collector c "" --listen tls://127.0.0.1:0 -o "$OUT" "${CTLS[@]}" || exit 1
PORT=$COLL_PORT
start_agent --send "tls://127.0.0.1:$PORT" --node-name "$NODE" --no-procfs --poll-ms 20 \
	"${ATLS[@]}" || exit 1
wait_for 10 grep -q "agent $NODE (cert .*connected from .* over TLS" "$T_DIR/c.err"
ok $? "the collector names the agent by its certificate"
grep -q "tls: \(user-space\|kernel\) TLS" "$T_DIR/agent.err"
ok $? "the agent says which TLS path runs ($(grep -o 'tls: [a-z-]* TLS' "$T_DIR/agent.err" | head -1))"
run_markers "te$$" 1 100
wait_for 20 grep -q "\"te$$-100\"" "$OUT"
check "every event arrives once, in order" -- markers_in_order "te$$" 100 "$OUT"
is "$(grep -vc "\"node_name\":\"$NODE\"" "$OUT")" 0 "every line names the certificate's node ($(wc -l <"$OUT") lines)"

# The collector restarted while events wait in the agent's ring.
kill -TERM $COLL_PID; wait $COLL_PID
ok $? "the collector stops cleanly"
run_markers "tf$$" 1 100
start_collector c2 "" --listen "tls://127.0.0.1:$PORT" -o "$OUT" "${CTLS[@]}" \
	--status-file "$T_DIR/status" || exit 1
wait_for 30 grep -q "\"tf$$-100\"" "$OUT"
check "after the restart, the events made meanwhile arrive, each once" -- markers_in_order "tf$$" 100 "$OUT"
check "and none of before it twice" -- markers_in_order "te$$" 100 "$OUT"
grep -q "agent $NODE (cert .*connected from .* over TLS" "$T_DIR/c2.err"
ok $? "the agent made a new handshake with the new collector"
wait_for 5 grep -q "^agent $NODE (boot [0-9a-f]*, ring [0-9]*): connected from 127.0.0.1:[0-9]* over TLS, certificate $NODE (CN $NODE, issuer /CN=ca); written to offset [1-9]" "$T_DIR/status"
ok $? "the collector's status file names the agent, its address and certificate" ||
	sed 's/^/#   /' "$T_DIR/status"
grep -q "^listening on tls://127.0.0.1:$PORT (mutual TLS)" "$T_DIR/status" &&
	grep -q "^vigil-collector .*: 1 connections" "$T_DIR/status"
ok $? "and its listener and connections"
st=$("$VIGIL" --pin-dir "$T_PIN" status)
grep -q "^stream tls://127.0.0.1:$PORT: up, \(user-space\|kernel\) TLS" <<<"$st"
ok $? "vigil status names the stream's TLS path ($(grep '^stream' <<<"$st"))"
stop_agent
ok $? "the agent stops cleanly"
done_testing
