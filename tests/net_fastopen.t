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

PORT=8010 net_run tfo fastopen 100 50
P=$(pid_of tfo server)

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
