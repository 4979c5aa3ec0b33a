#!/usr/bin/env bash
# An agent that stops reading its acks over tls:// (docs/stream.md, "TLS"):
# the collector's acks back up until the socket takes no more, and TLS must
# wait to write one (SSL_ERROR_WANT_WRITE). The collector watches for
# EPOLLOUT, finishes that ack when it can, keeps taking the agent's
# records, serves another agent meanwhile, and the deaf agent, once it
# reads, gets every ack up to its last record: nothing is refused or lost.
# In a namespace of the test whose TCP send buffers are small
# (net.ipv4.tcp_wmem is per namespace): on loopback's defaults the buffer
# would hold tens of thousands of acks. Certificates are made here
# (tests/tls_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
OUT="$T_DIR/out.json"
N=1500
plan 7

ca ca && cert ca collector vigil-collector 'IP:127.0.0.1' &&
	cert ca node-a node-a 'DNS:node-a' && cert ca node-b node-b 'DNS:node-b'
ok $? "test certificates made"
stream_netns deaf && NS=$STREAM_NS || exit 1
ip netns exec "$NS" sysctl -qw net.ipv4.tcp_wmem="4096 4096 4096"
ok $? "a namespace whose TCP send buffers are 4 KiB"
H="ip netns exec $NS /usr/bin/python3"
start_collector c "$NS" -v --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key" --tls-ca "$P/ca.pem" -o "$OUT" || exit 1
CERR="$T_DIR/c.err"

# An exit record's footprint: 8 bytes of ring header and the 80-byte event.
$H "$TLS_CLIENT" "$COLL_PORT" "$P" deaf node-a node-a 0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a 1 $N 6 \
	>"$T_DIR/deaf.out" &
DEAF=$!
on_exit "kill $DEAF 2>/dev/null"
wait_for 10 grep -q "waits for the socket to take it" "$CERR"
ok $? "the deaf agent's acks back up until TLS must wait to write (EPOLLOUT)"
is "$($H "$TLS_CLIENT" "$COLL_PORT" "$P" good node-b node-b 0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b 1 20)" \
	"acked $((20 * 88))" "another agent streams and is acknowledged meanwhile"
wait $DEAF
is "$(cat "$T_DIR/deaf.out")" "acked $((N * 88))" \
	"the deaf agent, once it reads, is acknowledged up to its last record"
kill -TERM $COLL_PID
wait $COLL_PID
ok $? "the collector exits cleanly"
is "$(grep -c '"node_name":"node-a"' "$OUT")" $N "every one of the deaf agent's events written once"
done_testing
