#!/usr/bin/env bash
# IPv6 connections, and the filters: --no-listen-events drops the events
# about listening sockets, --no-loopback-events those of connections within
# loopback; other connections keep all their events. In namespaces this
# test creates.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 14

EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 --no-listen-events --no-loopback-events || exit 1

# 1. IPv4 over the veth pair: kept, except what concerns the listener.
net_run v4 client_fin 300 700
C=$(pid_of v4 client)
S=$(pid_of v4 server)
flushed process_close "$C"
flushed process_close "$S"
sleep 0.2
is "$(nev process_connect "$C")/$(nev process_accept "$S")/$(nev process_close "$C")" 1/1/1 \
	"a connection between namespaces keeps its events"
is "$(nev process_listen "$S")" 0 "--no-listen-events: no listen event"
is "$(nev process_close "$S" '.process_close.direction == "listen"')" 0 "--no-listen-events: no listener close"
is "$(nev process_close "$S" '.process_close.direction == "incoming"')" 1 "the accepted socket's close is kept"

# 2. IPv6 over the veth pair.
NET_PEER_V6=1 ADDR=$NET_S6 net_run v6 server_fin 300 700
C=$(pid_of v6 client)
S=$(pid_of v6 server)
flushed process_close "$C"
flushed process_close "$S"
sleep 0.2
CONN=$(ev process_connect "$C")
is "$(field '.process_connect | [.family, .source_ip, .destination_ip, .destination_port] | join(" ")' "$CONN")" \
	"AF_INET6 $NET_C6 $NET_S6 8000" "IPv6 connect names both ends"
is "$(field '.process_close | [.closed_by, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$(ev process_close "$C")")" \
	"peer_fin 300 700" "IPv6 close: who closed, exact bytes"
is "$(field '.process_accept | [.family, .destination_ip] | join(" ")' "$(ev process_accept "$S")")" \
	"AF_INET6 $NET_C6" "IPv6 accept names the client"

# A dual-stack [::] listener and an IPv4 client: the accepted socket still
# names the listener's owner (found by the wildcard of the other family).
NET_PEER_V6=1 ADDR=$NET_S net_run dual client_fin 100 100
S=$(pid_of dual server)
flushed process_close "$S"
sleep 0.2
is "$(nev process_accept "$S")" 1 "a dual-stack listener's IPv4 connection is accepted by its owner"

# A refused IPv6 connect: the refusing side's RST is read from the segment.
ADDR=$NET_S6 PORT=8001 net_client refused6 refused 0 0
C=$(pid_of refused6 client)
flushed process_connect "$C"
is "$(field '.process_connect | [.family, .error] | join(" ")' "$(ev process_connect "$C")")" \
	"AF_INET6 ECONNREFUSED" "refused IPv6 connect"
NETNS_S=$(stat -L -c %i "/run/netns/$NS_S")
# (6.1's tcp_send_reset, which has no reason argument as vigild logs, does
# not fire for a RST sent without a socket: tests/net_events.t.)
if grep -q 'kernel: no reason in tcp_send_reset' "$T_DIR/agent.err"; then
	skip "this kernel's tcp_send_reset does not fire for a RST sent without a socket"
else
	wait_for 5 sh -c "grep -q '\"netns\":$NETNS_S,\"direction\":\"sent\"' '$EV'"
	is "$(jq -r -R --argjson ns "$NETNS_S" 'fromjson? | .process_reset | select(.netns? == $ns and .direction == "sent" and .source_port == 8001) | [.source_ip, .destination_ip, .owner_unknown] | join(" ")' "$EV")" \
		"$NET_S6 $NET_C6 true" "the refusing side's RST sent, its IPv6 ends read from the segment"
fi

# 3. Loopback inside the client namespace: no events at all.
ip netns exec "$NS_C" /usr/bin/python3 -c '
import os, socket, sys
open(sys.argv[1], "w").write(str(os.getpid()))
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    ls = socket.socket(fam); ls.bind((addr, 0)); ls.listen()
    c = socket.create_connection(ls.getsockname()[:2]); a, _ = ls.accept()
    c.sendall(b"x" * 10); a.recv(10); c.close(); a.close(); ls.close()
' "$T_DIR/lo.pid"
L=$(cat "$T_DIR/lo.pid")
# A marker after it: once the marker is out, so would the loopback events be.
net_run mark client_fin 1 1
flushed process_close "$(pid_of mark client)"
sleep 0.2
is "$(jq -c -R --argjson pid "$L" 'fromjson? | select(to_entries[0].value.process.pid? == $pid) | keys[0] | select(test("connect|accept|listen|close|reset"))' "$EV" | wc -l)" 0 \
	"--no-loopback-events: no event for connections over 127.0.0.1 and ::1"
is "$(nev process_connect "$(pid_of mark client)")" 1 "but the connection after them has its events"
# What the filters held back is counted, and vigil status says how much.
FILTERED=$("$VIGIL" --pin-dir "$T_PIN" status | awk '$1 == "net_events_filtered" {print $2}')
[ "${FILTERED:-0}" -ge 8 ]
ok $? "vigil status counts the events the filters held back (${FILTERED:-none}, at least 8)"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
