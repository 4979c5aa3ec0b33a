#!/usr/bin/env bash
# A stream bound to a certificate name stays bound however many streams
# other nodes bring (issue 38, point 1; docs/stream.md, "Streams are bound
# to certificate names"). At small limits (--max-agents 4 --max-conns 4):
# node-a streams and stops; node-b, with its own valid certificate, opens
# more streams than the tables hold, then claims node-a's stream (boot id,
# ring id). Before, node-b's streams pushed node-a's entry out of both the
# agent table and the offset table, node-b's claim was accepted and from
# then on node-a was refused for good. Now an entry bound to a certificate
# makes room only for that certificate's own streams: node-b is refused,
# node-a streams on; with an export file (the state file keeps the binding,
# also across a restart) and without one (stdout: the table in memory).
# Certificates are made here (tests/tls_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
H=/usr/bin/python3
C=$TLS_CLIENT
plan 15

ca ca && cert ca collector vigil-collector 'IP:127.0.0.1' &&
	cert ca node-a node-a 'DNS:node-a' && cert ca node-b node-b 'DNS:node-b'
ok $? "test certificates made"
TLS=(--tls-cert "$P/collector.pem" --tls-key "$P/collector.key" --tls-ca "$P/ca.pem")
LIMITS=(--max-agents 4 --max-conns 4)
BOOT=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
E=88	# bytes of one exit record

# sequence NAME: on the collector just started, node-a streams 5 records,
# node-b streams 8 new streams of one record each, then claims node-a's;
# node-a resumes. Four checks.
sequence() {
	local name=$1 got b i
	is "$($H "$C" $COLL_PORT "$P" good node-a node-a "$BOOT" 1 5)" "acked $((5 * E))" \
		"$name: node-a streams, then stops"
	got=0
	for i in 1 2 3 4 5 6 7 8; do
		b=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
		[ "$($H "$C" $COLL_PORT "$P" good node-b node-b "$b" 1 1)" = "acked $E" ] && got=$((got + 1))
	done
	is "$got" 8 "$name: node-b streams 8 streams of its own through tables of 4"
	is "$($H "$C" $COLL_PORT "$P" good node-b node-b "$BOOT" 1 5 $((5 * E)))" closed \
		"$name: node-b's claim on node-a's stream is refused"
	is "$($H "$C" $COLL_PORT "$P" good node-a node-a "$BOOT" 1 5 $((5 * E)))" "acked $((10 * E))" \
		"$name: node-a resumes its stream at its ack"
}

OUT="$T_DIR/out.json"
start_collector c1 "" --listen tls://127.0.0.1:0 "${TLS[@]}" "${LIMITS[@]}" -o "$OUT" || exit 1
sequence c1
grep -q "claims agent .*(boot $BOOT, ring 1).*which was proved by another certificate name: refused" "$T_DIR/c1.err"
ok $? "the refusal is logged" || sed 's/^/#   /' "$T_DIR/c1.err"
is "$(grep -c '"node_name":"node-a"' "$OUT")" 10 "node-a's 10 records are written under node-a"
kill -TERM $COLL_PID
wait $COLL_PID
grep -q "stopping: " "$T_DIR/c1.err"
ok $? "the collector stops cleanly"

# Restarted on the same output: the state file kept the binding, and
# node-b, streaming more of its own first, still cannot free it.
start_collector c2 "" --listen tls://127.0.0.1:0 "${TLS[@]}" "${LIMITS[@]}" -o "$OUT" || exit 1
for i in 1 2 3 4 5 6; do
	b=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	$H "$C" $COLL_PORT "$P" good node-b node-b "$b" 1 1 >/dev/null
done
is "$($H "$C" $COLL_PORT "$P" good node-b node-b "$BOOT" 1 5 $((10 * E)))" closed \
	"after a restart, node-b's claim is still refused"
is "$($H "$C" $COLL_PORT "$P" good node-a node-a "$BOOT" 1 1 $((10 * E)))" "acked $((11 * E))" \
	"and node-a streams on"
kill -TERM $COLL_PID
wait $COLL_PID

# No export file: the lines go to stdout, the bindings stay in memory.
BOOT=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
exec 5>&1 >"$T_DIR/stdout.json"
start_collector c3 "" --listen tls://127.0.0.1:0 "${TLS[@]}" "${LIMITS[@]}"
rc=$?
exec >&5 5>&-
[ $rc -eq 0 ] || exit 1
sequence c3
kill -TERM $COLL_PID
wait $COLL_PID
is "$(grep -c '"node_name":"node-a"' "$T_DIR/stdout.json")" 10 \
	"c3: node-a's 10 records are written under node-a"
