#!/bin/bash
# The RST that a reset sends on to the receiver carries the receiver's
# RCV.NXT even when the trigger is an old segment (a retransmission, or a
# keepalive probe: seq = SND.NXT - 1), which a RST with the trigger's own seq
# would not be (the receiver drops it). Through a router (A -- R -- B, vigil
# on R with --track-flows), flows made of scapy packets: B's ACK tells R
# B's RCV.NXT, then A's segment meets the reset rule; the RST captured at B
# must carry the larger of the two.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 3

enf_router a r b || exit 1
printf 'rules:\n  - {name: cut, action: reset, direction: ingress, protocol: tcp, cidr: 10.78.1.1, port: 7500}\n' \
	>"$T_DIR/policy.yaml"
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_r/ra" --enforce-on "$NS_r/rb" --track-flows || exit 1
ra=$(mac_of "$NS_r" ra) rb=$(mac_of "$NS_r" rb)

capture "$NS_b" vb "$T_DIR/b.pcap" || diag "capture did not start"
# CASE: A's port, B's ack (its RCV.NXT; none: B never sent), A's seq.
for c in "41501 1100 1050" "41502 2100 2150" "41503 none 3050"; do
	set -- $c
	[ "$2" = none ] || ip netns exec "$NS_b" "$PY" "$EPEER" ack vb "$rb" 10.78.2.1 10.78.1.1 7500 "$1" 5000 "$2" >/dev/null
	ip netns exec "$NS_a" "$PY" "$EPEER" ack va "$ra" 10.78.1.1 10.78.2.1 "$1" 7500 "$3" 5000 >/dev/null
done
stop_capture
seq_to_b() { tshark -n -r "$T_DIR/b.pcap" -Y "tcp.flags.reset == 1 && tcp.srcport == $1" -T fields -e tcp.seq_raw 2>/dev/null | head -1; }
is "$(seq_to_b 41501)" 1100 "an old segment (seq 1050, B acked 1100): the RST to B carries 1100"
is "$(seq_to_b 41502)" 2150 "a segment ahead of B's last ack (2150 > 2100): the RST to B carries 2150"
is "$(seq_to_b 41503)" 3050 "B never seen: the RST to B carries the segment's seq"
done_testing
