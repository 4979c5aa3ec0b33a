#!/usr/bin/env bash
# Connections that time out: a connect whose SYNs are dropped, and an
# established connection whose segments start being dropped or answered
# with ICMP host unreachable, all with TCP_USER_TIMEOUT so the kernel gives
# up within about a second. nftables drops or rejects them inside the
# server namespace this test creates.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 8

EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
ip netns exec "$NS_S" nft -f - <<'NFT' || { diag "nft refused the rules"; exit 1; }
table inet vigil_test {
	set dropped { type inet_service; }
	set unreachable { type inet_service; }
	chain input {
		type filter hook input priority 0;
		tcp dport @dropped drop;
		tcp dport @unreachable reject with icmpx type host-unreachable;
	}
}
NFT
ip netns exec "$NS_S" nft add element inet vigil_test dropped '{ 8002 }'
# A small socket table, so that its dump (entries, below) is quick.
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 --max-sockets 8192 || exit 1

cat >"$T_DIR/to.py" <<'PY'
import os, socket, sys, time
mode, addr, port, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
open(os.path.join(d, mode + ".pid"), "w").write(str(os.getpid()))
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, 1000)
if mode == "syn":
    try:
        s.connect((addr, port))
    except OSError as e:
        print(e.errno)
    sys.exit(0)
s.connect((addr, port))
s.sendall(b"a" * 100)
open(os.path.join(d, "established"), "w").close()
while not os.path.exists(os.path.join(d, "dropping")):
    time.sleep(0.02)
try:
    s.sendall(b"b" * 100)
    s.recv(1)  # blocks until the kernel gives up
except OSError as e:
    print(e.errno)
PY

# 1. The SYNs are dropped.
ERR=$(ip netns exec "$NS_C" /usr/bin/python3 "$T_DIR/to.py" syn "$NET_S" 8002 "$T_DIR")
P=$(cat "$T_DIR/syn.pid")
flushed process_connect "$P"
is "$ERR" 110 "the caller got ETIMEDOUT"
is "$(jq -r '.process_connect.error' <<<"$(ev process_connect "$P")")" ETIMEDOUT \
	"process_connect says ETIMEDOUT"

# entries PID: the socket table's entries owned by PID (in use: a key
# that is not 0), in its sets and its spill.
entries() {
	{ bpftool map dump pinned "$T_PIN/vigil_socks" -j |
		jq '.[].formatted.value | [.key, .sk] | transpose[] | select(.[0] != 0) | .[1]'
	  bpftool map dump pinned "$T_PIN/vigil_socks_spill" -j | jq '.[].formatted.value'
	} | jq -s --argjson p "$1" '[.[] | select(.owner.pid == $p)] | length'
}
# silenced NAME PORT SET: an established connection to PORT, whose segments
# then go to the nftables set SET, until the client's kernel gives up. Sets
# P (the client) and OPEN_ENTRIES (its socket entries while it was open).
# The server holds its end longer than that takes (a slow machine, TCG,
# included): its close with unread data would send a RST.
silenced() {
	local d="$T_DIR/$1"
	mkdir -p "$d"
	ip netns exec "$NS_S" /usr/bin/python3 -c '
import socket, sys, time
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("0.0.0.0", int(sys.argv[2]))); ls.listen(); open(sys.argv[1], "w").close()
s, _ = ls.accept(); time.sleep(float(sys.argv[3]))' "$d/ready" "$2" $((8 * T_SLOW)) &
	on_exit "kill -9 $!"
	wait_for 5 test -e "$d/ready"
	ip netns exec "$NS_C" /usr/bin/python3 "$T_DIR/to.py" est "$NET_S" "$2" "$d" >"$d/err" &
	wait_for 5 test -e "$d/established"
	P=$(cat "$d/est.pid")
	OPEN_ENTRIES=$(entries "$P")
	ip netns exec "$NS_S" nft add element inet vigil_test "$3" "{ $2 }"
	touch "$d/dropping"
	wait_for 20 test -s "$d/err"	# the client's errno, once the kernel gave up
	flushed process_close "$P"
}

# 2. An established connection whose peer goes silent.
silenced est 8003 dropped
is "$(cat "$T_DIR/est/err")" 110 "the caller got ETIMEDOUT"
is "$(jq -r '.process_close | [.closed_by, .error, .stats.bytes_sent] | join(" ")' <<<"$(ev process_close "$P")")" \
	"timeout ETIMEDOUT 200" "process_close: closed_by timeout, 200 bytes sent (each once, dropped or not)"

# 3. The same, but the segments get ICMP host unreachable: a soft error the
# kernel gives up with, no RST. The socket's entry goes with its close.
silenced unr 8004 unreachable
is "$(cat "$T_DIR/unr/err")" 113 "the caller got EHOSTUNREACH"
is "$(jq -r '.process_close | [.closed_by, .error] | join(" ")' <<<"$(ev process_close "$P")")" \
	"timeout EHOSTUNREACH" "process_close: closed_by timeout, the ICMP's error"
is "$OPEN_ENTRIES $(entries "$P")" "1 0" \
	"the connection's socket entry, there while it was open, goes with its close"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
