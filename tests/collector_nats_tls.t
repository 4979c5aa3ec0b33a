#!/usr/bin/env bash
# vigil-collector --publish over TLS with a client certificate and user
# authentication, against a private nats-server that requires both: events
# reach JetStream; a wrong CA, a missing client certificate, a refused
# password and a refused permission each stop the collector at start with
# an error naming which. Certificates are made here with openssl.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v nats-server >/dev/null || skip_all "nats-server is not installed"
plan 10
. "$(dirname "$0")/tls_lib.sh"

ca ca && ca other && cert ca server server 'IP:127.0.0.1,DNS:localhost' &&
	cert ca client vigil-collector 'DNS:vigil-collector'
ok $? "test certificates made"

cat >"$T_DIR/nats.conf" <<CONF
jetstream { store_dir: "$T_DIR/js" }
tls { cert_file: "$P/server.pem", key_file: "$P/server.key", ca_file: "$P/ca.pem", verify: true, timeout: 3 }
authorization {
  users = [
    { user: vigil, password: s3cret, permissions: { publish: ["vigil.>", "\$JS.API.>"], subscribe: ["_INBOX.>"] } }
    { user: nojs, password: s3cret, permissions: { publish: ["vigil.>"], subscribe: ["_INBOX.>"] } }
  ]
}
CONF
log="$T_DIR/nats.log"
nats-server -c "$T_DIR/nats.conf" -a 127.0.0.1 -p -1 -m -1 -l "$log" &
NATS_PID=$!
on_exit "kill -9 $NATS_PID; wait $NATS_PID"
wait_for 10 grep -qs 'Listening for client connections' "$log" || { diag "nats-server did not start"; sed 's/^/#   /' "$log"; exit 1; }
NPORT=$(grep -o 'Listening for client connections on [0-9.]*:[0-9]*' "$log" | tail -1 | sed 's/.*://')
MPORT=$(grep -o 'Starting http monitor on [0-9.]*:[0-9]*' "$log" | tail -1 | sed 's/.*://')
URL="tls://vigil:s3cret@127.0.0.1:$NPORT"
TLS=(--publish-tls-ca "$P/ca.pem" --publish-tls-cert "$P/client.pem" --publish-tls-key "$P/client.key")

# refused NAME WORDS ARGS...: the collector exits non-zero at start and its
# error says WORDS.
refused() {
	local name=$1 words=$2; shift 2
	timeout 30 "$COLLECTOR" --listen tcp://127.0.0.1:0 --publish-wait 2 "$@" 2>"$T_DIR/$name.err"
	local rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$words" "$T_DIR/$name.err" ||
		{ sed 's/^/#   /' "$T_DIR/$name.err"; return 1; }
}
check "a server certificate the CA did not sign is refused, naming --publish-tls-ca" -- \
	refused ca "not signed by --publish-tls-ca" --publish "$URL" --publish-tls-ca "$P/other.pem" \
	--publish-tls-cert "$P/client.pem" --publish-tls-key "$P/client.key"
check "without a client certificate the handshake refusal names --publish-tls-cert" -- \
	refused nocert "publish-tls-cert" --publish "$URL" --publish-tls-ca "$P/ca.pem"
check "a refused password names the credentials" -- \
	refused pass "refused the credentials" --publish "tls://vigil:wrong@127.0.0.1:$NPORT" "${TLS[@]}"
! grep -q "wrong" "$T_DIR/pass.err" && grep -q "tls://vigil:\*\*\*@" "$T_DIR/pass.err"
ok $? "the password in the URL is not written to the log"
check "a user without JetStream's API gets a permission error at start" -- \
	refused perm "refused permission" --publish "tls://nojs:s3cret@127.0.0.1:$NPORT" "${TLS[@]}"
check "a certificate without its key is a usage error" -- \
	refused half "go together" --publish "$URL" --publish-tls-cert "$P/client.pem"

# The good settings: events reach JetStream.
OUT="$T_DIR/out.json"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --publish "$URL" "${TLS[@]}" || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" --no-procfs --poll-ms 20 || exit 1
run_markers "nt$$" 1 20
wait_for 20 sh -c "grep -q '\"nt$$-20\"' '$OUT'"
check "events go out through the collector" -- markers_in_order "nt$$" 20 "$OUT"
stop_agent
ok $? "the agent stops cleanly"
js_msgs() {
	curl -s "http://127.0.0.1:$MPORT/jsz?streams=true" |
		jq '[.account_details[]?.stream_detail[]? | select(.name == "VIGIL") | .state.messages] | add // 0'
}
# A batch is written to the file, then published: the last may be on its way.
all_published() { [ "$(js_msgs)" -eq "$(wc -l <"$OUT")" ]; }
wait_for 10 all_published
lines=$(wc -l <"$OUT")
is "$(js_msgs)" "$lines" "JetStream over TLS holds every line the collector wrote ($lines)"
done_testing
