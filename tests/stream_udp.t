#!/usr/bin/env bash
# The UDP variant: whole records in datagrams, no acknowledgement. Events
# arrive in order and once; datagrams lost on the way (dropped here by an
# nftables rule in the test's own namespace) show at the collector as a gap
# event and in its counters, and the stream goes on after them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 11
OUT="$T_DIR/out.json"
stream_netns u && NS=$STREAM_NS || exit 1

start_collector c "$NS" --listen udp://127.0.0.1:0 -o "$OUT" || exit 1
UPORT=$(grep -o 'listening on udp://[^ ]*' "$T_DIR/c.err" | sed 's/.*://')
agent_in_netns "$NS" "$T_DIR/agent.err" --send "udp://127.0.0.1:$UPORT"
A=$AGENT_NS_PID
wait_for 20 grep -q 'sends datagrams' "$T_DIR/c.err"
ok $? "the collector learns the agent from its hello datagram"

TAG="u1$$"
run_markers "$TAG" 1 300
wait_for 20 sh -c "grep -q '\"$TAG-300\"' '$OUT'"
check "udp: 300 events arrive, in order, each once" -- markers_in_order "$TAG" 300 "$OUT"

# Datagrams dropped on the way out, in the test's namespace only.
ip netns exec "$NS" nft -f - <<NFT
table inet vt_udp_drop {
	chain out { type filter hook output priority 0; udp dport $UPORT drop; }
}
NFT
ok $? "an nftables rule drops the stream's datagrams (in the test namespace)"
TAG2="u2$$"
run_markers "$TAG2" 1 100
sleep 0.3
ip netns exec "$NS" nft delete table inet vt_udp_drop
TAG3="u3$$"
run_markers "$TAG3" 1 100
wait_for 20 sh -c "grep -q '\"$TAG3-100\"' '$OUT'"
check "after the loss, events arrive again, in order, each once" -- markers_in_order "$TAG3" 100 "$OUT"
is "$(marker_count "$TAG2" "$OUT")" 0 "what was dropped did not arrive"
jq -c 'select(.vigil_gap.lost_bytes > 0)' "$OUT" | grep -q .
ok $? "the collector reports the lost datagrams as a gap event"
check "no sequence number twice" -- no_dup_seq "$OUT"

# Garbage datagrams, and data for an agent never announced: dropped, counted.
nsenter --net="/run/netns/$NS" /usr/bin/python3 - "$UPORT" <<'PY'
import os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in (1, 7, 40, 300, 65000):
    s.sendto(os.urandom(n), ('127.0.0.1', int(sys.argv[1])))
s.sendto(struct.pack('<IHH16sIIQ', 0x44474956, 1, 0, os.urandom(16), 9, 8, 0) + b'\0' * 8,
         ('127.0.0.1', int(sys.argv[1])))
PY
TAG4="u4$$"
run_markers "$TAG4" 1 50
wait_for 20 sh -c "grep -q '\"$TAG4-50\"' '$OUT'"
check "after garbage datagrams the stream goes on, in order, each once" -- markers_in_order "$TAG4" 50 "$OUT"
grep -q 'dropping a bad datagram' "$T_DIR/c.err"
ok $? "the collector says it drops bad datagrams"
kill -TERM $A; wait $A
grep -q 'datagrams, .* bytes, [1-9][0-9]* not sent' "$T_DIR/agent.err"
ok $? "the agent counts the datagrams it could not send"
kill -TERM $COLL_PID; wait $COLL_PID
grep -q '[1-9][0-9]* bytes lost on its side' "$T_DIR/c.err"
ok $? "the collector's counters show the loss"
done_testing
