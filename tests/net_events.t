#!/usr/bin/env bash
# TCP lifecycle events from a real kernel: a client and a server in two
# namespaces this test creates exchange known byte counts, then close in
# each way; every exchange must give exactly the expected events, with the
# right process, tuple, bytes and close reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 54

EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
NETNS_C=$(stat -L -c %i "/run/netns/$NS_C")
NETNS_S=$(stat -L -c %i "/run/netns/$NS_S")

# A connection open before the agent starts: 100 bytes each way, then both
# sides wait for a go file to send 50 more and close.
mkdir -p "$T_DIR/pre"
cat >"$T_DIR/pre.py" <<'PY'
import os, socket, sys, time
role, d = sys.argv[1], sys.argv[2]
open(os.path.join(d, role + ".pid"), "w").write(str(os.getpid()))
def recv_exact(s, n):
    while n:
        b = s.recv(n)
        assert b
        n -= len(b)
if role == "server":
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", 8100)); ls.listen(); open(os.path.join(d, "server.ready"), "w").close()
    s, _ = ls.accept()  # the listener stays open: it too predates the agent
else:
    s = socket.create_connection((sys.argv[3], 8100))
s.sendall(b"p" * 100); recv_exact(s, 100)
open(os.path.join(d, role + ".open"), "w").close()
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
if role == "client":
    s.sendall(b"q" * 50); s.close()
else:
    recv_exact(s, 50)
    while s.recv(100):
        pass
    s.close()
    ls.close()
PY
ip netns exec "$NS_S" /usr/bin/python3 "$T_DIR/pre.py" server "$T_DIR/pre" &
PRE_S=$!
wait_for 5 test -e "$T_DIR/pre/server.ready"
ip netns exec "$NS_C" /usr/bin/python3 "$T_DIR/pre.py" client "$T_DIR/pre" "$NET_S" &
PRE_C=$!
wait_for 5 test -e "$T_DIR/pre/client.open" -a -e "$T_DIR/pre/server.open"

start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1

# exchange NAME MODE: 1000 bytes from the client, 2000 from the server.
exchange() {
	net_run "$1" "$2" 1000 2000
	C=$(pid_of "$1" client)
	S=$(pid_of "$1" server)
	flushed process_close "$C"
	flushed process_close "$S"
	sleep 0.2	# the other side's last events
}

# close_is NAME CLOSED_BY_CLIENT CLOSED_BY_SERVER
close_is() {
	local cc sc
	cc=$(ev process_close "$C")
	sc=$(ev process_close "$S" '.process_close.direction == "incoming"')
	is "$(nev process_connect "$C")/$(nev process_accept "$S")/$(wc -l <<<"$cc")/$(wc -l <<<"$sc")" \
		1/1/1/1 "$1: one connect, one accept, one close each side"
	is "$(field '.process_close | [.closed_by, .direction, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$cc")" \
		"$2 outgoing 1000 2000" "$1: client closed_by $2, exact bytes"
	is "$(field '.process_close | [.closed_by, .direction, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$sc")" \
		"$3 incoming 2000 1000" "$1: server closed_by $3, exact bytes"
}

# 1. The client closes first.
exchange client_fin client_fin
close_is client_fin local_fin peer_fin
CONN=$(ev process_connect "$C")
ACC=$(ev process_accept "$S")
CCL=$(ev process_close "$C")
is "$(field '.process_connect | [.source_ip, .destination_ip, .destination_port, .protocol, .family] | join(" ")' "$CONN")" \
	"$NET_C $NET_S 8000 TCP AF_INET" "connect names both ends"
is "$(field .process_connect.netns "$CONN")" "$NETNS_C" "connect names the client's network namespace"
is "$(field .process_connect.process.binary "$CONN")" "$(readlink -f /usr/bin/python3)" "connect names the client's binary"
is "$(field .process_connect.process.exec_id "$CONN")" \
	"$(exec_id "$C")" \
	"connect's exec_id is the client's process_exec exec_id"
is "$(field '.process_accept | [.source_ip, .source_port, .destination_ip, .destination_port] | join(" ")' "$ACC")" \
	"$NET_S 8000 $NET_C $(field .process_connect.source_port "$CONN")" "accept names both ends, client port included"
is "$(field '.process_close.source_port' "$CCL")" "$(field .process_connect.source_port "$CONN")" \
	"close keeps the local port the kernel already released"
is "$(nev process_listen "$S")" 1 "the server's listen is reported"
is "$(nev process_close "$S" '.process_close.direction == "listen"')" 1 "and its listener's close"
is "$(nev process_reset "$C")$(nev process_reset "$S")" 00 "a FIN close has no reset"
[ "$(field .process_close.duration_ns "$CCL")" -gt 0 ]
ok $? "close has a duration"

# 2. The server closes first.
exchange server_fin server_fin
close_is server_fin peer_fin local_fin
is "$(nev process_reset "$C")$(nev process_reset "$S")" 00 "server_fin: no reset"

# 3. The client resets.
exchange client_rst client_rst
close_is client_rst local_rst peer_rst
is "$(nev process_reset "$C" '.process_reset.direction == "sent"')" 1 "client_rst: the client's RST sent is reported"
is "$(nev process_reset "$S" '.process_reset.direction == "received"')" 1 "client_rst: the server's RST received is reported"
is "$(nev process_reset "$C" '.process_reset.direction == "received"')$(nev process_reset "$S" '.process_reset.direction == "sent"')" \
	00 "client_rst: no reset the other way"

# 4. The server resets.
exchange server_rst server_rst
close_is server_rst peer_rst local_rst
is "$(nev process_reset "$S" '.process_reset.direction == "sent"')" 1 "server_rst: the server's RST sent is reported"
is "$(nev process_reset "$C" '.process_reset.direction == "received"')" 1 "server_rst: the client's RST received is reported"

# 4b. The server's FIN, then the client aborts (SO_LINGER 0) from
# CLOSE_WAIT: the kernel reports the close before it sends the RST, and that
# RST still names the client.
exchange server_fin_client_rst server_fin_client_rst
close_is server_fin_client_rst peer_fin local_fin
is "$(nev process_reset "$C" '.process_reset.direction == "sent" and .process_reset.state == "TCP_CLOSE"')" 1 \
	"server_fin_client_rst: the client's RST after its close names the client"
is "$(nev process_reset "$S" '.process_reset.direction == "received"')" 1 \
	"server_fin_client_rst: the server's RST received is reported"

# 4c. A pre-forked worker: the listener's owner forks, the worker accepts
# and does the I/O. The accept event is written when accept() returns, and
# names the worker that called it (tests/net_prefork.t: 4 workers); the
# close names it too.
net_server prefork prefork 1000 2000
net_client prefork client_fin 1000 2000
wait "$SERVER_PID"
C=$(pid_of prefork client)
S=$(pid_of prefork server)
W=$(pid_of prefork worker)
flushed process_close "$W"
sleep 0.2
is "$(nev process_accept "$W")/$(nev process_accept "$S")" 1/0 "prefork: the accept names the worker, not the listener's owner"
WC=$(ev process_close "$W" '.process_close.direction == "incoming"')
is "$(wc -l <<<"$WC")/$(nev process_close "$S" '.process_close.direction == "incoming"')" 1/0 \
	"prefork: the connection's close names the worker, not the listener's owner"
is "$(field '.process_close | [.owner_refined, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$WC")" \
	"true 2000 1000" "prefork: marked owner_refined, exact bytes"

# 5. A refused connect: no listener on 8001.
PORT=8001 net_client refused refused 0 0
C=$(pid_of refused client)
flushed process_connect "$C"
sleep 0.2
RC=$(ev process_connect "$C")
is "$(wc -l <<<"$RC")" 1 "refused: one connect event"
is "$(field '.process_connect | [.error, .destination_port] | join(" ")' "$RC")" "ECONNREFUSED 8001" \
	"refused: error ECONNREFUSED, to port 8001"
is "$(nev process_reset "$C" '.process_reset.direction == "received"')" 1 "refused: the client's RST received"
is "$(nev process_close "$C")" 0 "refused: no close (there was no connection)"
CPORT=$(field .process_reset.source_port "$(ev process_reset "$C")")
# A kernel whose tcp_send_reset has no reason argument (Debian 12's 6.1,
# as vigild logs) does not fire it for a RST sent without a socket.
if grep -q 'kernel: no reason in tcp_send_reset' "$T_DIR/agent.err"; then
	skip "this kernel's tcp_send_reset does not fire for a RST sent without a socket"
else
	is "$(jq -c -R --argjson p "$CPORT" --argjson ns "$NETNS_S" 'fromjson? | .process_reset | select(.direction == "sent" and .netns == $ns and .source_port == 8001 and .destination_port == $p) | .owner_unknown' "$EV")" \
		true "refused: the server side's RST sent, with no owner"
fi

# 6. The client exits with the socket open: its close completes after its
# exit, and is still attributed to it.
exchange client_exits client_exits
close_is client_exits local_fin peer_fin
EXIT_SEQ=$(jq -r -R --argjson pid "$C" 'fromjson? | select(.process_exit.process.pid == $pid) | .seq' "$EV")
CLOSE_SEQ=$(field .seq "$(ev process_close "$C")")
[ -n "$EXIT_SEQ" ] && [ "$CLOSE_SEQ" -gt "$EXIT_SEQ" ]
ok $? "client_exits: the close ($CLOSE_SEQ) comes after the client's exit ($EXIT_SEQ)"
is "$(field .process_close.process.exec_id "$(ev process_close "$C")")" \
	"$(exec_id "$C")" \
	"client_exits: the close names the exited client's exec_id"

# 7. The connection that predates the agent: found by the socket iterator in
# the test's namespaces, then named by its first send/receive. A kernel
# without the send/receive tracepoints (before 6.3, as vigild logs) names
# no owner for it: its closes are found by port, and say so.
touch "$T_DIR/pre/go"
wait $PRE_C $PRE_S
C=$(cat "$T_DIR/pre/client.pid")
S=$(cat "$T_DIR/pre/server.pid")
IO_HOOKS=1
grep -q 'kernel: no sock:sock_send_length' "$T_DIR/agent.err" && IO_HOOKS=0
if [ $IO_HOOKS = 1 ]; then
	flushed process_close "$C"
	flushed process_close "$S"
	PC=$(ev process_close "$C")
	PS=$(ev process_close "$S")
else
	pre_close() { jq -c -R --argjson ns "$1" "fromjson? | select(.process_close.preexisting == true and .process_close.netns == \$ns and $2)" "$EV"; }
	wait_for 10 sh -c "grep -c '\"preexisting\":true' '$EV' | grep -qv '^[01]$'"
	PC=$(pre_close "$NETNS_C" '.process_close.destination_port == 8100')
	PS=$(pre_close "$NETNS_S" '.process_close.source_port == 8100 and .process_close.destination_port != 0')
fi
is "$(field '.process_close | [.preexisting, .stats.bytes_sent, .stats.bytes_received, .destination_port] | join(" ")' "$PC")" \
	"true 150 100 8100" "pre-existing client socket: closed with its totals over its whole life"
is "$(field '.process_close | [.preexisting, .stats.bytes_sent, .stats.bytes_received, .source_port] | join(" ")' "$PS")" \
	"true 100 150 8100" "pre-existing server socket: the same"
is "$(field .process_close.closed_by "$PC")/$(field .process_close.closed_by "$PS")" local_fin/peer_fin \
	"pre-existing: who closed"
if [ $IO_HOOKS = 1 ]; then
	is "$(field .process_close.owner_refined "$PC")/$(field .process_close.process.binary "$PS")" \
		"true/$(readlink -f /usr/bin/python3)" "pre-existing: the owner is named by its first send or receive"
else
	is "$(field .process_close.owner_unknown "$PC")/$(field .process_close.owner_unknown "$PS")" \
		"true/true" "pre-existing, no send/receive hook on this kernel: no owner, and said so"
fi
is "$(nev process_connect "$C")$(nev process_accept "$S")" 00 "pre-existing: no connect or accept invented"
wait_for 5 sh -c "grep -q '\"owner_unknown\":true,\"uid\":0,\"preexisting\":true,[^}]*\"source_port\":8100,[^}]*\"netns\":$NETNS_S' '$EV'"
ok $? "pre-existing listener, never read from: closed with no owner, its uid, preexisting"

# 8. Every line is JSON and nothing was lost.
stop_agent
jq -e . "$EV" >/dev/null
ok $? "every line parses as JSON"
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
