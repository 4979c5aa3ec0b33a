#!/usr/bin/env bash
# A connection that outlives a switch from --report-only to per-event mode
# (the agent restarted on its pins): --report-only reads no clock, so its
# close is reported with its owner and bytes and without a duration, never a
# made-up one; connections made after the switch have theirs. In
# namespaces this test creates.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 6

EV1="$T_DIR/report-only.json"
EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
start_agent -o "$EV1" --export-file-max-size-mb 0 --poll-ms 20 --report-only || exit 1

# Both ends hold the connection until $T_DIR/go exists; then the server
# closes first.
HOLD='
import os, socket, sys, time
role, addr, d = sys.argv[1], sys.argv[2], sys.argv[3]
def until_go():
    while not os.path.exists(d + "/go"):
        time.sleep(0.02)
def recv_exact(s, n):
    got = 0
    while got < n:
        b = s.recv(n - got)
        if not b:
            sys.exit("early end of stream")
        got += len(b)
if role == "server":
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, 8000)); ls.listen()
    open(d + "/server.pid", "w").write(str(os.getpid()))
    c, _ = ls.accept(); ls.close()
    recv_exact(c, 100); until_go(); c.sendall(b"s" * 50); c.close()
else:
    c = socket.create_connection((addr, 8000))
    open(d + "/client.pid", "w").write(str(os.getpid()))
    c.sendall(b"c" * 100); until_go()
    recv_exact(c, 50)
    while c.recv(4096):
        pass
    c.close()
'
mkdir -p "$T_DIR/hold"
ip netns exec "$NS_S" /usr/bin/python3 -c "$HOLD" server "$NET_S" "$T_DIR/hold" &
SRV=$!
wait_for 5 test -s "$T_DIR/hold/server.pid" || { diag "the server did not start"; exit 1; }
ip netns exec "$NS_C" /usr/bin/python3 -c "$HOLD" client "$NET_S" "$T_DIR/hold" &
CLI=$!
wait_for 5 test -s "$T_DIR/hold/client.pid" || { diag "the client did not connect"; exit 1; }
C=$(cat "$T_DIR/hold/client.pid")
S=$(cat "$T_DIR/hold/server.pid")
sleep 0.3	# the server has read the client's bytes: both ends are open

stop_agent
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1
grep -q resumed "$T_DIR/agent.err"
ok $? "the per-event agent resumed the report-only agent's programs"
touch "$T_DIR/hold/go"
wait "$SRV" && wait "$CLI"
ok $? "the held connection ended normally"
flushed process_close "$C"
flushed process_close "$S"
sleep 0.2
is "$(field '.process_close | [.closed_by, .stats.bytes_sent, .stats.bytes_received, has("duration_ns")] | join(" ")' "$(ev process_close "$C")")" \
	"peer_fin 100 50 false" "client close: its owner, who closed, exact bytes, no duration"
is "$(field '.process_close | [.direction, .closed_by, .stats.bytes_sent, .stats.bytes_received, has("duration_ns")] | join(" ")' "$(ev process_close "$S" '.process_close.direction == "incoming"')")" \
	"incoming local_fin 50 100 false" "server close: the same"

# A connection made after the switch has its latency and duration.
net_run after client_fin 10 10
C2=$(pid_of after client)
flushed process_close "$C2"
[ "$(field .process_connect.latency_ns "$(ev process_connect "$C2")")" -gt 0 ] &&
	[ "$(field .process_close.duration_ns "$(ev process_close "$C2")")" -gt 0 ]
ok $? "a connection made in per-event mode has its latency and duration"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
