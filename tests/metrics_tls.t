#!/usr/bin/env bash
# vigil-collector's TLS refusals by reason, through a real Prometheus
# (tests/prom_lib.sh): each refusal this test can make on a tls:// listener
# is made a known number of times, and vigil_collector_tls_refusals_total
# reads back exactly that count for its reason, and nothing under any
# other: clear text, TLS 1.2, no client certificate, a certificate of
# another CA, an expired one, one for servers only, one without a DNS
# name, a hello naming another node, another certificate claiming a
# stream, a client that distrusts the collector, a peer that hangs up, a
# handshake that stalls past --hello-timeout. A good agent is not counted.
# A second collector, with --max-handshakes 1, refuses a stranger's
# handshakes past that rate: counted as refused by rate, not as TLS
# refusals.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
. "$(dirname "$0")/prom_lib.sh"
plan 19
H=/usr/bin/python3
C=$TLS_CLIENT

ca ca && ca other && cert ca collector vigil-collector 'IP:127.0.0.1,DNS:localhost' &&
	cert ca node-a node-a 'DNS:node-a' && cert ca node-b node-b 'DNS:node-b' &&
	cert other rogue node-a 'DNS:node-a' && cert ca nosan node-c 'IP:127.0.0.9' &&
	cert ca expired node-e 'DNS:node-e' 0 &&
	cert ca server-only node-s 'DNS:node-s' 2 'extendedKeyUsage=serverAuth'
ok $? "test certificates made"
start_collector c "" --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key" --tls-ca "$P/ca.pem" -o "$T_DIR/out.json" \
	--hello-timeout 1 --metrics 127.0.0.1:0 || exit 1
PORT=$COLL_PORT
start_prometheus collector="$(metrics_addr "$T_DIR/c.err")"
ok $? "Prometheus scrapes the collector"

# Each reason a different number of times: a mix-up of two shows.
BOOT=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
is "$($H "$C" $PORT "$P" good node-a node-a "$BOOT" 1 3)" "acked $((3 * 88))" "a good agent streams"
sleep 1	# the expired certificate's second has passed
for i in 1 2; do $H "$C" $PORT "$P" plain; done >/dev/null
for i in 1 2 3; do $H "$C" $PORT "$P" nocert; done >/dev/null
$H "$C" $PORT "$P" cert rogue >/dev/null
$H "$C" $PORT "$P" cert expired node-e >/dev/null
$H "$C" $PORT "$P" cert server-only node-s >/dev/null
$H "$C" $PORT "$P" cert nosan node-c >/dev/null		# no DNS SAN: name
$H "$C" $PORT "$P" cert node-b node-a >/dev/null	# hello names another node: name
is "$($H "$C" $PORT "$P" good node-b node-b "$BOOT" 1 1 $((3 * 88)))" closed \
	"node-b claiming node-a's stream is refused"
for i in 1 2; do $H "$C" $PORT "$P" tls12 node-a; done >/dev/null
$H "$C" $PORT "$P" distrust node-a other >/dev/null
for i in 1 2 3 4; do $H "$C" $PORT "$P" hangup; done >/dev/null
$H "$C" $PORT "$P" stall >/dev/null

# reason count: as Prometheus has it.
want() {
	wait_for 10 query_is "vigil_collector_tls_refusals_total{reason=\"$1\"}" "$2"
	is "$(query "vigil_collector_tls_refusals_total{reason=\"$1\"}")" "$2" "$3: $2 under reason=$1"
}
want not_tls 2 "clear text to the TLS port"
want no_certificate 3 "no client certificate"
want untrusted 1 "a certificate of another CA"
want expired 1 "an expired certificate"
want usage 1 "a certificate for servers only (extended key usage)"
want name 2 "no DNS name, and a hello naming another node"
want binding 1 "another certificate claiming a stream"
want protocol 2 "TLS 1.2"
want peer_alert 1 "a client that does not trust the collector's certificate"
want closed 4 "a peer that hangs up"
want timeout 1 "a handshake stalled past --hello-timeout"
is "$(query 'sum(vigil_collector_tls_refusals_total)') $(query 'vigil_collector_tls_refusals_total{reason="other"}')" "19 0" \
	"19 refusals in all, none unexplained"
start_collector r "" --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key" --tls-ca "$P/ca.pem" -o "$T_DIR/out-r.json" \
	--max-handshakes 1 --metrics 127.0.0.1:0 || exit 1
RM=http://$(metrics_addr "$T_DIR/r.err")
# Five connections at once from one process; a stranger may start one a
# second (half the burst of 2): the first hangs up, the others are refused
# at accept unless the bucket refilled meanwhile.
$H -c 'import socket, sys
for _ in range(5): socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()' $COLL_PORT
rm_metric() { curl -s --max-time 2 "$RM/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
rate='vigil_collector_refused_total{reason="handshake_rate_all"}' closed='vigil_collector_tls_refusals_total{reason="closed"}'
both_are() { [ $(($(rm_metric "$rate") + $(rm_metric "$closed"))) -eq 5 ]; }
wait_for 5 both_are
ok $? "--max-handshakes: each of the 5 connections refused by rate or hung up ($(rm_metric "$rate") and $(rm_metric "$closed"))"
r=$(rm_metric "$rate")
[ "${r:-0}" -ge 1 ]
ok $? "past the rate: counted under handshake_rate_all ($r)"

undocumented=$(curl -s "http://$(metrics_addr "$T_DIR/c.err")/metrics" | awk '/^# TYPE/ { print $3 }' |
	while read -r f; do grep -q "\`$f[{\`]" "$TOP/docs/operations.md" || echo "$f"; done)
is "$undocumented" "" "every series a TLS collector serves is documented in docs/operations.md"
done_testing
