#!/bin/bash
# No answer to or from a directed broadcast address: a SYN sent (with
# scapy) to the server's subnet broadcast 10.77.0.255, one sent from it, one
# to the broadcast of a prefix added after the agent started (on another,
# unenforced interface of the server's namespace), and one to an explicit
# `brd` address, under a reject and a reset rule, at TC and at XDP: none
# draws a RST. A SYN to the server's own address does (the control).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 20

enf_pair c s || exit 1	# TC
enf_pair c3 s3 || exit 1	# XDP
# XDP_TX over veth reaches the peer only when it runs NAPI: an XDP program.
ip netns exec "$NS_c3" "$TOP/$BUILD/bench/xdp_pass" vc || exit 1
cat >"$T_DIR/policy.yaml" <<'YAML'
rules:
  - { name: rej, action: reject, protocol: tcp, port: 9000 }
  - { name: rst, action: reset, protocol: tcp, port: 9001 }
YAML
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/vs" --enforce-on "$NS_s3/vs:xdp" || exit 1
# Prefixes added later, on an interface vigil does not enforce on.
for ns in "$NS_s" "$NS_s3"; do
	ip -n "$ns" link add d0 type veth peer name d1 && ip -n "$ns" link set d0 up &&
		ip -n "$ns" addr add 10.66.5.1/24 dev d0 &&
		ip -n "$ns" addr add 10.55.0.1/16 brd 10.55.0.77 dev d0 || exit 1
done

# CASES: sport src dst dstmac-kind what
CASES=(
	"50001 10.77.0.1 10.77.0.255 bcast to-subnet-broadcast"
	"50002 10.77.0.255 10.77.0.2 peer from-subnet-broadcast"
	"50003 10.77.0.1 10.66.5.255 bcast to-broadcast-of-a-prefix-added-later"
	"50004 10.77.0.1 10.55.0.77 bcast to-an-explicit-brd-address"
	"50009 10.77.0.1 10.77.0.2 peer control:to-the-server"
)
for hook in tc xdp; do
	c=$NS_c s=$NS_s
	[ $hook = xdp ] && c=$NS_c3 s=$NS_s3
	for port in 9000 9001; do
		pcap="$T_DIR/$hook-$port.pcap"
		capture "$c" vc "$pcap" || diag "capture did not start"
		for cs in "${CASES[@]}"; do
			set -- $cs
			mac=ff:ff:ff:ff:ff:ff
			[ "$4" = peer ] && mac=$(mac_of "$s" vs)
			ip netns exec "$c" "$PY" "$EPEER" syn vc "$mac" "$2" "$3" "$1" $port >/dev/null
		done
		stop_capture
		got=$(rsts "$pcap" $port | cut -f1 | sort -u | tr '\n' ' ')
		for cs in "${CASES[@]}"; do
			set -- $cs
			if [ "$1" = 50009 ]; then
				check "$hook, port $port: $5 draws a RST" -- grep -qw "$1" <<<"$got"
			else
				check "$hook, port $port: $5: no answer" -- sh -c "! echo '$got' | grep -qw $1"
			fi
		done
	done
done
done_testing
