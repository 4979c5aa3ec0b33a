#!/usr/bin/env bash
# TCP Fast Open: the server's child is created by a SYN that carries data,
# accept() returns it and it does its I/O while still in SYN_RECV; it only
# becomes ESTABLISHED when the client's ACK comes, with a socket already.
# Its connection must still be reported, accept and close, with its bytes.
# Namespaces, sysctls and peers are this test's own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 4

EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
# Client and server side, no cookie needed (TFO_CLIENT_NO_COOKIE,
# TFO_SERVER_COOKIE_NOT_REQD): the first connection is a Fast Open one.
for ns in "$NS_C" "$NS_S"; do
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_fastopen=0x207 || { diag "no tcp_fastopen sysctl"; exit 1; }
done
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1

mkdir -p "$T_DIR/tfo"
ip netns exec "$NS_S" /usr/bin/python3 -c '
import os, socket, sys
d = sys.argv[1]
open(os.path.join(d, "server.pid"), "w").write(str(os.getpid()))
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
ls.bind(("0.0.0.0", 8010)); ls.listen(); open(os.path.join(d, "ready"), "w").close()
s, _ = ls.accept()
n = 0
while n < 100:
    b = s.recv(100 - n)
    if not b:
        sys.exit(1)
    n += len(b)
s.sendall(b"s" * 50)
while s.recv(100):
    pass
s.close()' "$T_DIR/tfo" &
SRV=$!
on_exit "kill -9 $SRV 2>/dev/null"
wait_for 5 test -e "$T_DIR/tfo/ready"
ip netns exec "$NS_C" /usr/bin/python3 -c '
import socket, sys
s = socket.socket()
s.sendto(b"c" * 100, socket.MSG_FASTOPEN, (sys.argv[1], 8010))
n = 0
while n < 50:
    b = s.recv(50 - n)
    if not b:
        sys.exit(1)
    n += len(b)
s.close()' "$NET_S"
wait_for 5 test ! -d "/proc/$SRV"
P=$(cat "$T_DIR/tfo/server.pid")

PASSIVE=$(ip netns exec "$NS_S" nstat -az TcpExtTCPFastOpenPassive | awk '/TcpExtTCPFastOpenPassive/ {print $2}')
[ "${PASSIVE:-0}" -ge 1 ]
ok $? "the connection was a Fast Open one (TcpExtTCPFastOpenPassive $PASSIVE)"
flushed process_close "$P"
is "$(nev process_accept "$P")" 1 "process_accept names the listener's process"
CHILD=$(ev process_close "$P" '.process_close.closed_by != "listener_closed"')
is "$(field '.process_close | [.closed_by, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$CHILD")" \
	"peer_fin 50 100" "process_close of the Fast Open child: the peer's FIN, its bytes each way"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
