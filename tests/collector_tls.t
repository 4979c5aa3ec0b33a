#!/usr/bin/env bash
# vigil-collector --listen tls:// (docs/stream.md, "TLS"): mutual TLS 1.3,
# the agent's node name taken from its certificate. On a fresh collector,
# hostile peers first: clear text to the TLS port, no client certificate, a
# certificate of another CA, a handshake that stalls, random bytes after the
# handshake and inside TLS, a certificate without a DNS name, an expired
# one; each is closed with its reason logged. Then a good agent (certificate
# node-a) streams and is acknowledged, its lines say node-a; node-b may
# neither claim node-a's name nor its stream, and clear text on the other
# listeners may neither take that stream nor start one in node-a's name.
# SIGHUP reads rotated files again, and keeps the old ones when the new do
# not load. The collector stays up, holds TLS sessions within its memory
# bound, and exits cleanly. Restarted on the same output, it still binds
# node-a's stream to node-a's certificate (the state file keeps a hash of
# the name). A handshake flood from one address is cut at
# --max-handshakes-per-addr while another address streams. Usage errors at
# start name the option.
# Certificates are made here (tests/tls_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
H=/usr/bin/python3
C=$TLS_CLIENT
F="$TOP/tests/collector_forge.py"
OUT="$T_DIR/out.json"
plan 65

ca ca && ca other && cert ca collector vigil-collector 'IP:127.0.0.1,DNS:localhost' &&
	cert ca node-a node-a 'DNS:node-a' && cert ca node-b node-b 'DNS:node-b,DNS:node-a' &&
	cert other rogue node-a 'DNS:node-a' && cert ca nosan node-c 'IP:127.0.0.9' &&
	cert ca expired node-e 'DNS:node-e' 0 && cert other node-r node-r 'DNS:node-r' &&
	cert ca collector2 vigil-collector-2 'IP:127.0.0.1'
ok $? "test certificates made"
TLS=(--tls-cert "$P/collector.pem" --tls-key "$P/collector.key" --tls-ca "$P/ca.pem")

# usage NAME WORDS ARGS...: the collector exits 2 at start, its error says WORDS.
usage() {
	local name=$1 words=$2; shift 2
	timeout 10 "$COLLECTOR" "$@" 2>"$T_DIR/$name.err"
	local rc=$?
	[ $rc -eq 2 ] && grep -q -- "$words" "$T_DIR/$name.err" ||
		{ diag "exit $rc"; sed 's/^/#   /' "$T_DIR/$name.err"; return 1; }
}
check "tls:// without --tls-ca is a usage error naming it" -- \
	usage noca "needs --tls-ca" --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key"
check "an unreadable --tls-cert is a usage error naming it" -- \
	usage nofile "--tls-cert $T_DIR/missing.pem" --listen tls://127.0.0.1:0 \
	--tls-cert "$T_DIR/missing.pem" --tls-key "$P/collector.key" --tls-ca "$P/ca.pem"
check "a key that does not match the certificate is a usage error naming both" -- \
	usage mismatch "--tls-key .* does not match --tls-cert" --listen tls://127.0.0.1:0 \
	--tls-cert "$P/collector.pem" --tls-key "$P/node-a.key" --tls-ca "$P/ca.pem"
check "a --tls-ca that holds no certificate is a usage error naming it" -- \
	usage badca "--tls-ca" --listen tls://127.0.0.1:0 --tls-cert "$P/collector.pem" \
	--tls-key "$P/collector.key" --tls-ca "$P/collector.key"
check "--tls-cert without a tls:// listener is a usage error" -- \
	usage notls "--tls-cert without a tls://" --listen tcp://127.0.0.1:0 "${TLS[@]}"

# The clear-text warning: on an address that is not loopback (in a network
# namespace of its own, where nothing can reach it), and not on loopback.
unshare -n timeout -s INT 1 "$COLLECTOR" --listen tcp://0.0.0.0:0 2>"$T_DIR/clear.err"
grep -q "warning: tcp://0.0.0.0 listens in clear text.*for labs and for links already encrypted" \
	"$T_DIR/clear.err"
ok $? "listening in clear text on a non-loopback address is warned about"
unshare -n timeout -s INT 1 "$COLLECTOR" --listen tcp://127.0.0.1:0 2>"$T_DIR/lo.err"
! grep -q "warning" "$T_DIR/lo.err" && grep -q "listening on tcp://127.0.0.1" "$T_DIR/lo.err"
ok $? "not on loopback"

# A fresh collector, TLS and clear text side by side; hostile peers first.
start_collector c "" --listen tcp://127.0.0.1:0 --listen udp://127.0.0.1:0 --listen tls://127.0.0.1:0 "${TLS[@]}" \
	-o "$OUT" --hello-timeout 2 --frame-timeout 2 || exit 1
wait_for 10 grep -q 'listening on tls://' "$T_DIR/c.err"
PORT=$(grep -o 'listening on tls://[^ ]*' "$T_DIR/c.err" | sed 's/.*://')
TPORT=$(grep -o 'listening on tcp://[^ ]*' "$T_DIR/c.err" | sed 's/.*://')
UPORT=$(grep -o 'listening on udp://[^ ]*' "$T_DIR/c.err" | sed 's/.*://')
CERR="$T_DIR/c.err"
grep -q "agent .* connected" "$CERR" && diag "an agent before the hostile peers?"

is "$($H "$C" $PORT "$P" plain)" closed "clear text sent to the TLS port is closed"
is "$($H "$C" $PORT "$P" nocert)" closed "a client without a certificate is closed"
is "$($H "$C" $PORT "$P" cert rogue)" closed "a certificate of another CA is closed"
t0=$(date +%s.%N)
r=$($H "$C" $PORT "$P" stall)
diag "stalled handshake: $r"
awk -v r="${r#closed after }" 'BEGIN { exit !(r + 0 >= 1.5 && r + 0 <= 3.5) }'
ok $? "a handshake that stalls is closed within --hello-timeout (2 s): $r"
is "$($H "$C" $PORT "$P" garbage node-a)" closed "random bytes after the handshake are closed"
is "$($H "$C" $PORT "$P" garbage_inside node-a)" closed "random bytes inside TLS are closed"
is "$($H "$C" $PORT "$P" cert nosan node-c)" closed "a certificate without a DNS name is closed"
sleep 1
is "$($H "$C" $PORT "$P" cert expired node-e)" closed "an expired certificate is closed"
for why in 'TLS: wrong version number' 'TLS: peer did not return a certificate' \
	'TLS: certificate refused: unable to get local issuer certificate' \
	'no TLS handshake in time' 'TLS: .*' 'bad magic' \
	'its certificate has no DNS subject alternative name' \
	'TLS: certificate refused: certificate has expired'; do
	grep -q "closing 127.0.0.1:[0-9]*: $why" "$CERR"
	ok $? "the reason is logged: $why"
done
! grep -q "agent .* connected" "$CERR"
ok $? "no hostile peer was taken as an agent"
kill -0 $COLL_PID
ok $? "the collector is still running"

# A good agent: node-a's certificate, node-a's hello.
BOOT=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
is "$($H "$C" $PORT "$P" good node-a node-a "$BOOT" 1 50)" "acked $((50 * 88))" \
	"node-a streams over TLS and is acknowledged to its end"
grep -q "agent node-a (cert CN node-a, DNS SAN node-a, issuer /CN=ca) connected from 127.0.0.1:[0-9]* over TLS" "$CERR"
ok $? "who connected is logged: name, certificate, issuer, address"
wait_for 5 sh -c "[ \$(grep -c '\"node_name\":\"node-a\"' '$OUT') -ge 50 ]"
[ "$(grep -c . "$OUT")" -eq 50 ] && [ "$(grep -c '"node_name":"node-a"' "$OUT")" -eq 50 ]
ok $? "its 50 lines are written and say node-a"

# node-b's certificate carries node-a as its second DNS name: only the first counts.
is "$($H "$C" $PORT "$P" cert node-b node-a)" closed "node-b's certificate claiming node-a's name in its hello is refused"
grep -q "hello names node node-a, its certificate node-b: refused" "$CERR"
ok $? "the refusal names both"
is "$($H "$C" $PORT "$P" good node-b node-b "$BOOT" 1 5 $((50 * 88)))" closed \
	"node-b claiming node-a's stream (boot id, ring id) under its own name is refused"
grep -q "with certificate node-b claims agent node-a (boot $BOOT, ring 1) proved by certificate node-a, which was proved by another certificate name: refused" "$CERR"
ok $? "the refusal names both certificates"
is "$($H "$F" $TPORT forge 127.0.0.1 "$BOOT" 1 $((50 * 88)) 100 5)" closed \
	"a clear-text connection on the other listener may not take the stream TLS proved"
grep -q "claims agent node-a (boot $BOOT, ring 1) proved by certificate node-a, which was proved over TLS: a clear-text connection may not take it: refused" "$CERR"
ok $? "that refusal is logged"

B2=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
is "$($H "$F" $TPORT forge 127.0.0.1 "$B2" 1 0 1 5 node-a)" closed \
	"a clear-text hello naming node-a (a new stream) is refused: a certificate proved that name"
grep -q "clear-text hello names node node-a, which a certificate proved: refused" "$CERR"
ok $? "that refusal is logged"
$H -c "import socket, sys; sys.path.insert(0, '$TOP/tests'); from collector_hostile import hello
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(hello(name=b'node-a', boot=bytes.fromhex('$B2'), ring=2), ('127.0.0.1', $UPORT))"
wait_for 5 grep -q "refusing a hello datagram from 127.0.0.1 for the stream of boot $B2, ring 2: its node name was proved by a certificate over TLS" "$CERR"
ok $? "a hello datagram naming node-a is refused too"
is "$($H "$F" $TPORT forge 127.0.0.1 "$B2" 1 0 1 5 lab-node)" "acked $((5 * 88))" \
	"clear text under another name still works beside TLS"

# node-a resumes where it was acknowledged; nothing of the refused peers went out.
is "$($H "$C" $PORT "$P" good node-a node-a "$BOOT" 1 10 $((50 * 88)))" "acked $((60 * 88))" \
	"node-a reconnects and resumes at its ack"
wait_for 5 sh -c "[ \$(grep -c . '$OUT') -ge 65 ]"
[ "$(grep -c . "$OUT")" -eq 65 ] && [ "$(grep -c '"node_name":"node-a"' "$OUT")" -eq 60 ] &&
	[ "$(grep -c '"node_name":"lab-node"' "$OUT")" -eq 5 ]
ok $? "60 lines of node-a and 5 of lab-node: nothing from the refused peers"

# Rotation: SIGHUP reads the files again. A new collector certificate, and
# a CA file that also holds the other CA: node-r (signed by it) gets in.
is "$($H "$C" $PORT "$P" server node-a)" vigil-collector "the collector shows its certificate"
is "$($H "$C" $PORT "$P" good node-r node-r "$B2" 3 2)" closed "node-r (the other CA) is refused"
cp "$P/collector2.pem" "$P/collector.pem" && cp "$P/collector2.key" "$P/collector.key" &&
	cat "$P/other.pem" >>"$P/ca.pem"
kill -HUP $COLL_PID
wait_for 5 grep -q "SIGHUP: TLS certificate .* read again" "$CERR"
ok $? "SIGHUP reads the TLS files again"
is "$($H "$C" $PORT "$P" server node-a)" vigil-collector-2 "new connections see the rotated certificate"
is "$($H "$C" $PORT "$P" good node-r node-r "$B2" 3 2)" "acked $((2 * 88))" \
	"a CA added to --tls-ca is trusted after SIGHUP"
echo broken >"$P/collector.key"
kill -HUP $COLL_PID
wait_for 5 grep -q "SIGHUP: keeping the TLS certificate, key and CA read before" "$CERR"
ok $? "a broken key file on SIGHUP is refused, the files in use stay"
grep -q -- "--tls-key $P/collector.key: cannot load the private key" "$CERR"
ok $? "and the reason names --tls-key"
is "$($H "$C" $PORT "$P" good node-a node-a "$BOOT" 1 1 $((60 * 88)))" "acked $((61 * 88))" \
	"node-a still connects after the failed reload"

# Memory: TLS sessions stalled in a record stay within the bound.
RSS0=$(awk '/VmRSS/ {print $2}' /proc/$COLL_PID/status)
$H "$C" $PORT "$P" hold node-a 40 2 >"$T_DIR/hold.out" &
HOLD=$!
on_exit "kill $HOLD"
sleep 1.5
RSS1=$(awk '/VmRSS/ {print $2}' /proc/$COLL_PID/status)
diag "collector RSS ${RSS0} KiB, ${RSS1} KiB with 40 TLS connections in a record"
if ldd "$COLLECTOR" | grep -q libasan; then
	echo "ok $((_t_n += 1)) # SKIP RSS under ASan (its shadow memory and quarantine)"
else
	[ $((RSS1 - RSS0)) -le $((40 * (256 + 64) + 8192)) ]
	ok $? "memory stays within (256 + 64) KiB per TLS connection, with its stream"
fi
wait $HOLD
is "$(cat "$T_DIR/hold.out")" "held 40" "40 TLS connections were held"
kill -0 $COLL_PID
ok $? "the collector is still running after all of it"
kill -TERM $COLL_PID
wait $COLL_PID
ok $? "the collector exits cleanly"

# Restarted: the stream stays bound to node-a's certificate.
TLS2=(--tls-cert "$P/collector2.pem" --tls-key "$P/collector2.key" --tls-ca "$P/ca.pem")
start_collector c2 "" --listen tcp://127.0.0.1:0 --listen tls://127.0.0.1:0 "${TLS2[@]}" \
	-o "$OUT" --hello-timeout 2 --frame-timeout 2 --status-file "$T_DIR/status" || exit 1
CERR="$T_DIR/c2.err"
PORT=$(grep -o 'listening on tls://[^ ]*' "$CERR" | sed 's/.*://')
TPORT=$(grep -o 'listening on tcp://[^ ]*' "$CERR" | sed 's/.*://')
is "$($H "$C" $PORT "$P" good node-b node-b "$BOOT" 1 5 $((61 * 88)))" closed \
	"after a restart, node-b may still not take node-a's stream"
is "$($H "$F" $TPORT forge 127.0.0.1 "$BOOT" 1 $((61 * 88)) 100 5)" closed \
	"nor may clear text"
grep -q "claims agent node-b (boot $BOOT, ring 1), which was proved by another certificate name: refused" "$CERR" &&
	grep -q "claims agent .* (boot $BOOT, ring 1), which was proved over TLS: a clear-text connection may not take it: refused" "$CERR"
ok $? "both refusals are logged" || sed 's/^/#   /' "$CERR"
is "$($H "$F" $TPORT forge 127.0.0.1 "$B2" 5 0 1 5 node-a)" closed \
	"a clear-text hello naming node-a is still refused"
is "$($H "$C" $PORT "$P" good node-a node-a "$BOOT" 1 1 $((61 * 88)))" "acked $((62 * 88))" \
	"node-a resumes at its ack"
wait_for 5 grep -q "^agent node-a (boot $BOOT, ring 1): gone [0-9]* s ago, last from 127.0.0.1 with certificate node-a; written to offset $((62 * 88)); 1 records" "$T_DIR/status" &&
	! grep -q "node-b\|forger" "$T_DIR/status"
ok $? "its status file lists node-a by its certificate, none of the refused peers" ||
	sed 's/^/#   /' "$T_DIR/status"
kill -TERM $COLL_PID
wait $COLL_PID
ok $? "the restarted collector exits cleanly"

# A handshake flood from one address: past --max-handshakes-per-addr (5 a
# second, bursts of 10) connections are closed before any TLS byte, said in
# the log; an agent from another address is not held up.
start_collector c3 "" --listen tls://127.0.0.1:0 "${TLS2[@]}" --max-handshakes-per-addr 5 \
	-o "$T_DIR/c3.json" || exit 1
CERR="$T_DIR/c3.err"
PORT=$COLL_PORT
r=$($H "$C" $PORT "$P" flood node-a 60)
read -r _ done _ _ _ secs _ <<<"$r"
[ "$done" -ge 10 ] && [ "$done" -le $((11 + 5 * (${secs%.*} + 1))) ]
ok $? "60 handshakes in a row from one address: the burst and the rate get through ($r)"
grep -q "refusing TLS handshakes from 127.0.0.1: more than 5 a second (--max-handshakes-per-addr)" "$CERR"
ok $? "the refusal is logged, naming the address and the option"
B3=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
is "$(TLS_SRC=127.0.0.2 $H "$C" $PORT "$P" good node-r node-r "$B3" 1 3)" "acked $((3 * 88))" \
	"an agent from another address streams meanwhile"
sleep 2.5
is "$($H "$C" $PORT "$P" good node-a node-a "$B3" 2 3)" "acked $((3 * 88))" \
	"and the flooding address gets in again once its rate allows"
kill -TERM $COLL_PID
wait $COLL_PID
ok $? "that collector exits cleanly"
done_testing
