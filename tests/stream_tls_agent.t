#!/usr/bin/env bash
# vigild --send tls://: mutual TLS 1.3 to a private TLS peer (tests/tls_peer.py,
# a minimal collector in Python's ssl that requires a client certificate).
# Events arrive and are acknowledged over TLS; a peer whose certificate
# another CA signed is refused with one log line naming --tls-ca while events
# wait, then delivered to a good peer on the same port; the agent's own
# certificate refused by the peer is logged naming --tls-cert; a wrong name
# names --tls-server-name; bad options stop the start naming the option; the
# log names the user-space path where the kernel has no TLS; a backlog past
# half a small ring goes to the spool and is sent over TLS from there; TLS
# to a plaintext collector, a collector that stalls the handshake, and an
# expired collector certificate are each refused with a message saying so;
# a connection dropped mid-stream resumes the TLS session and loses and
# doubles nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 40
PEER="$TOP/tests/tls_peer.py"

. "$(dirname "$0")/tls_lib.sh"
NODE="tlsnode$$"
ca ca && ca other && cert ca server collector 'IP:127.0.0.1,DNS:localhost' &&
	cert other badserver collector 'IP:127.0.0.1,DNS:localhost' &&
	cert ca agent "$NODE" "DNS:$NODE"
ok $? "test certificates made"

# peer NAME CA-FOR-CLIENTS CERT [PORT [DROP]]: a TLS peer writing to
# $T_DIR/NAME.out (DROP: tests/tls_peer.py); sets PEER_PID and PORT.
peer() {
	local name=$1 ca=$2 crt=$3 port=${4:-0}
	: >"$T_DIR/$name.log"
	/usr/bin/python3 "$PEER" "$port" "$P/$crt.pem" "$P/$crt.key" "$P/$ca.pem" "$T_DIR/$name.out" \
		${5:-} 2>>"$T_DIR/$name.log" &
	PEER_PID=$!
	on_exit "kill -9 $PEER_PID 2>/dev/null; wait $PEER_PID 2>/dev/null"
	wait_for 10 grep -q 'listening on' "$T_DIR/$name.log" ||
		{ diag "peer $name did not start:"; sed 's/^/#   /' "$T_DIR/$name.log"; return 1; }
	PORT=$(sed -n 's/listening on //p' "$T_DIR/$name.log" | head -1)
}
stop_peer() { kill -9 "$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null; }
# markers FILE TAG: TAG's markers in FILE in order, from /usr/bin/true's
# exec events only (the test's own grep and seq carry TAG in their arguments).
markers() { grep -a '^[0-9]* 1 .*/usr/bin/tru[e]/bin/true ' "$1" | grep -ao "$2-[0-9]*"; }
has_marker() { markers "$1" "${2%-*}" | grep -qx -- "$2"; }
# in_order FILE TAG FROM TO: exactly TAG-FROM..TAG-TO, in order, in FILE.
in_order() {
	[ "$(markers "$1" "$2" | tr '\n' ' ')" = "$(seq -f "$2-%g" "$3" "$4" | tr '\n' ' ')" ] ||
		{ grep -a "$2" "$1" | head -20 | sed 's/^/#   /'; tail -5 "$T_DIR/agent.err" | sed 's/^/#   /'; return 1; }
}
TLS=(--tls-cert "$P/agent.pem" --tls-key "$P/agent.key" --tls-ca "$P/ca.pem")

# 1. Bad options stop the start, naming the option, before anything loads.
# refused NAME WORDS ARGS...
refused() {
	local name=$1 words=$2; shift 2
	timeout 20 "$VIGILD" --pin-dir "$T_PIN" --no-procfs "$@" 2>"$T_DIR/$name.err"
	local rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$words" "$T_DIR/$name.err" &&
		[ ! -e "$T_PIN/vigil_ring" ] || { sed 's/^/#   /' "$T_DIR/$name.err"; return 1; }
}
check "tls:// without --tls-cert is a usage error naming it" -- \
	refused nocert "needs --tls-cert" --send tls://127.0.0.1:1 --tls-key "$P/agent.key" --tls-ca "$P/ca.pem"
check "an unreadable --tls-ca is named with its path" -- \
	refused noca "--tls-ca $T_DIR/nope.pem: No such file" --send tls://127.0.0.1:1 \
	--tls-cert "$P/agent.pem" --tls-key "$P/agent.key" --tls-ca "$T_DIR/nope.pem"
check "a key that is not the certificate's is refused" -- \
	refused mismatch "does not match --tls-cert" --send tls://127.0.0.1:1 \
	--tls-cert "$P/agent.pem" --tls-key "$P/server.key" --tls-ca "$P/ca.pem"
check "a CA file with no certificate is refused naming --tls-ca" -- \
	refused notca "--tls-ca $P/agent.key" --send tls://127.0.0.1:1 \
	--tls-cert "$P/agent.pem" --tls-key "$P/agent.key" --tls-ca "$P/agent.key"
check "--tls-* without a tls:// URL is a usage error" -- \
	refused notls "apply to --send tls://" --send tcp://127.0.0.1:1 "${TLS[@]}"
check "--send-path uring with tls:// is refused with the reason" -- \
	refused uring "does not apply to tls://" --send tls://127.0.0.1:1 --send-path uring "${TLS[@]}"

# 2. A good peer: events arrive over TLS, acknowledged.
peer good1 ca server || exit 1
start_agent --send "tls://127.0.0.1:$PORT" "${TLS[@]}" --node-name "$NODE" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
# The kernel's TLS when it has it (the tls ULP registered: CONFIG_TLS, the
# module loaded), else SSL_write; this machine's 6.18 has none.
if grep -qw tls /proc/sys/net/ipv4/tcp_available_ulp 2>/dev/null; then
	PATH_WANT='tls: kernel TLS (send from the ring)'
else
	PATH_WANT='tls: user-space TLS (SSL_write from the ring)'
fi
grep -q "$PATH_WANT (TLSv1.3" "$T_DIR/agent.err"
ok $? "the log names the path: $PATH_WANT, TLS 1.3" || tail -3 "$T_DIR/agent.err" | sed 's/^/#   /' 
grep -q "accepted TLSv1.3 client dns=$NODE" "$T_DIR/good1.log"
ok $? "the peer verified the agent's certificate (its DNS name is the node's)"
grep -q "hello node=$NODE" "$T_DIR/good1.log"
ok $? "the hello comes through TLS"
TAG="tls$$"
run_markers "$TAG" 1 50
wait_for 20 has_marker "$T_DIR/good1.out" "$TAG-50"
check "50 events arrive over TLS, in order, each once" -- in_order "$T_DIR/good1.out" "$TAG" 1 50
sleep 0.5	# the last ack reaches the agent

# 3. A peer whose certificate another CA signed, on the same port: refused,
# logged once naming --tls-ca; events wait.
stop_peer
peer bad other badserver "$PORT" || exit 1
run_markers "$TAG" 51 80
wait_for 20 grep -q 'check --tls-ca' "$T_DIR/agent.err"
ok $? "a collector certificate from another CA is refused, the log names --tls-ca"
sleep 3	# several retries
is "$(grep -c 'check --tls-ca' "$T_DIR/agent.err")" 1 "logged once for the episode, not at each retry"
grep -q 'handshake refused' "$T_DIR/bad.log" && [ ! -s "$T_DIR/bad.out" ]
ok $? "the bad peer got no event"
stop_peer

# 4. A good peer again on the same port: what waited arrives, nothing that
# was acknowledged is sent again.
peer good2 ca server "$PORT" || exit 1
wait_for 20 has_marker "$T_DIR/good2.out" "$TAG-80"
check "the events that waited arrive at the good peer, in order, each once" -- \
	in_order "$T_DIR/good2.out" "$TAG" 51 80
start=$(sed -n 's/.*hello node=[^ ]* start=//p' "$T_DIR/good2.log" | head -1)
[ "${start:-0}" -gt 0 ]
ok $? "the reconnect resumes at the acknowledged offset ($start), after a new handshake"
[ "$(grep -c 'connected, sending' "$T_DIR/agent.err")" -eq 2 ]
ok $? "the reconnect is logged once"
stop_peer

# 5. A peer that does not trust the agent's CA: the refusal of our
# certificate is logged naming --tls-cert, also when the episode began with
# another failure (nobody listening for a second: connection refused); then a
# good peer gets the events.
sleep 1
peer refuse other server "$PORT" || exit 1
run_markers "$TAG" 81 90
wait_for 20 grep -q 'refused our certificate' "$T_DIR/agent.err"
grep 'refused our certificate' "$T_DIR/agent.err" | grep -q -- '--tls-cert'
ok $? "the agent's certificate refused by the peer is logged naming --tls-cert" ||
	{ tail -8 "$T_DIR/agent.err"; cat "$T_DIR/refuse.log"; } | sed 's/^/#   /' 
sleep 2
is "$(grep -c 'refused our certificate' "$T_DIR/agent.err")" 1 "logged once for the episode"
stop_peer
peer good3 ca server "$PORT" || exit 1
wait_for 20 has_marker "$T_DIR/good3.out" "$TAG-90"
check "then delivered to a good peer" -- in_order "$T_DIR/good3.out" "$TAG" 81 90

# 6. SIGHUP re-reads the files: a key that is not the certificate's is
# refused and the files in force stay; a rotated certificate is presented at
# the next connection.
cp "$P/agent.key" "$P/agent.key.good"
cp "$P/server.key" "$P/agent.key"
kill -HUP "$AGENT_PID"
wait_for 10 grep -q 'SIGHUP: the TLS files are refused' "$T_DIR/agent.err" &&
	grep -q 'does not match --tls-cert' "$T_DIR/agent.err"
ok $? "SIGHUP with a key that does not match: refused, naming it; the files in force stay"
cert ca agent2 "rotated-$NODE" "DNS:$NODE" && cp "$P/agent2.pem" "$P/agent.pem" &&
	cp "$P/agent2.key" "$P/agent.key"
kill -HUP "$AGENT_PID"
wait_for 10 grep -q 'SIGHUP: --tls-cert, --tls-key and --tls-ca read again' "$T_DIR/agent.err"
ok $? "SIGHUP with a rotated certificate: read again"
stop_peer
peer good3b ca server "$PORT" || exit 1
run_markers "$TAG" 91 95
wait_for 20 has_marker "$T_DIR/good3b.out" "$TAG-95"
grep -q "cn=rotated-$NODE" "$T_DIR/good3b.log"
ok $? "the next connection presents the rotated certificate (a full handshake, no resumption)"
check "events flow after the rotation" -- in_order "$T_DIR/good3b.out" "$TAG" 91 95
stop_agent
ok $? "the agent stops cleanly"
stop_peer

# 7. A name the collector's certificate does not carry; a node name that is
# not the certificate's is warned about at start.
peer good4 ca server "$PORT" || exit 1
start_agent --send "tls://127.0.0.1:$PORT" "${TLS[@]}" --tls-server-name collector.example \
	--node-name "other$$" --no-procfs --poll-ms 20 || exit 1
grep -q "is for node '$NODE', this agent's node name is 'other$$'" "$T_DIR/agent.err"
ok $? "a node name that is not the certificate's DNS name is warned about at start"
wait_for 10 grep -q 'check --tls-server-name' "$T_DIR/agent.err"
ok $? "a collector certificate without the expected name is refused naming --tls-server-name"
stop_agent
stop_peer

# 8. The spool over TLS: a peer away for longer than a 256 KiB ring holds
# (about 650 KB of events); the backlog goes to the spool, then reaches a
# good peer from there (a plain buffer of ours, SSL_write as from the ring),
# each once, in order. The ring leaves the agent 128 KiB of headroom (the
# spool takes what passes half of it), some 600 ms of these markers: a
# 64 KiB ring's 80 ms was less than a loaded CI host stalls the agent.
RING=262144
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1
start_agent --ring-size $RING --send "tls://127.0.0.1:$PORT" "${TLS[@]}" --spool-dir "$T_DIR/spool" \
	--node-name "$NODE" --no-procfs --poll-ms 10 || exit 1
TAG="tsp$$"
N=1200
for ((i = 1; i <= N; i += 25)); do run_markers "$TAG" $i $((i + 24)); sleep 0.02; done
ls "$T_DIR/spool"/*.spool >/dev/null 2>&1
ok $? "the backlog went to the spool while no peer was there"
peer good5 ca server "$PORT" || exit 1
wait_for 30 has_marker "$T_DIR/good5.out" "$TAG-$N"
check "spool over TLS: every event once, in order" -- in_order "$T_DIR/good5.out" "$TAG" 1 $N
wait_for 10 sh -c "! ls '$T_DIR/spool'/*.spool >/dev/null 2>&1"
ok $? "the spool is emptied as the peer acknowledges"
stop_agent
SPOOLED=$(sed -n 's/.*spooled \([0-9]*\) bytes.*/\1/p' "$T_DIR/agent.err" | tail -1)
[ "${SPOOLED:-0}" -gt $RING ]
ok $? "the spool took more than the ring holds (${SPOOLED:-none} bytes)"
grep -q 'BPF counted 0 ring-full losses' "$T_DIR/agent.err"
ok $? "BPF dropped nothing: the ring never filled" ||
	grep -E 'ring-full|spool syncs' "$T_DIR/agent.err" | sed 's/^/#   /'
stop_peer

# 9. One agent, three broken collectors: the real vigil-collector listening
# in clear (it gets a ClientHello where it wants a hello and closes), a peer
# that accepts and never answers (the handshake is cut after 10 s), a peer
# with an expired certificate.
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1
start_collector plain "" --listen tcp://127.0.0.1:0 -o "$T_DIR/plain.json" || exit 1
PLAIN=$COLL_PORT
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    conns.append(s.accept()[0])
' >"$T_DIR/stall.port" &
STALL_PID=$!
on_exit "kill -9 $STALL_PID 2>/dev/null; wait $STALL_PID 2>/dev/null"
wait_for 10 test -s "$T_DIR/stall.port"
STALL=$(cat "$T_DIR/stall.port")
cert ca expired expired 'IP:127.0.0.1' 0
sleep 1.1	# -days 0: it expires now
peer expired ca expired || exit 1
start_agent --send "tls://127.0.0.1:$PLAIN" --send "tls://127.0.0.1:$STALL" --send "tls://127.0.0.1:$PORT" \
	"${TLS[@]}" --node-name "$NODE" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q "tls://127.0.0.1:$PLAIN: TLS handshake: the collector closed the connection (is it listening with tls://?)" \
	"$T_DIR/agent.err"
ok $? "TLS to a collector listening in clear: it closes, the log asks whether it listens with tls://"
[ ! -s "$T_DIR/plain.json" ]
ok $? "the plaintext collector wrote nothing"
wait_for 10 grep -q "tls://127.0.0.1:$PORT: TLS handshake: the collector's certificate is out of its validity period (certificate has expired)" \
	"$T_DIR/agent.err"
ok $? "an expired collector certificate is refused, saying so"
wait_for 15 grep -q "tls://127.0.0.1:$STALL: TLS handshake: the collector did not finish it in time" "$T_DIR/agent.err"
ok $? "a handshake the collector stalls is cut after 10 s"
stop_agent
ok $? "the agent stops cleanly"
stop_peer

# 10. A peer that drops the connection in the middle, with records written
# but not acknowledged: the agent reconnects, resuming the TLS session, and
# sends again from the acknowledged offset; each event is written once.
peer drop ca server 0 25 || exit 1
start_agent --send "tls://127.0.0.1:$PORT" "${TLS[@]}" --node-name "$NODE" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
TAG="tdr$$"
for ((i = 1; i <= 60; i += 10)); do run_markers "$TAG" $i $((i + 9)); sleep 0.05; done
wait_for 20 has_marker "$T_DIR/drop.out" "$TAG-60"
grep -q 'connection ended: dropped by the peer' "$T_DIR/drop.log"
ok $? "the peer dropped the first connection"
check "after the drop every event arrives once, in order" -- in_order "$T_DIR/drop.out" "$TAG" 1 60
grep 'accepted' "$T_DIR/drop.log" | sed -n 2p | grep -q 'reused=True'
ok $? "the reconnect resumed the TLS session with the peer's ticket" ||
	sed 's/^/#   /' "$T_DIR/drop.log"
stop_agent
stop_peer
done_testing
