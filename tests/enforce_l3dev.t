#!/bin/bash
# Devices without an Ethernet header (tun here; WireGuard, IP tunnels and
# PPP are the same to vigil: frames start with the IP header): vigil reads
# the IP header at offset 0, by the device's type. Into a tun device in a
# namespace of its own, SYNs and UDP datagrams are written (scapy), IPv4 and
# IPv6, at TC and at (generic) XDP: to a port a drop rule names nothing
# comes back; to a reject port a RST (an ICMP port unreachable for UDP) comes back out of the tun device without an Ethernet header; to a
# port no rule names, the server's SYN-ACK (the control).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 16

for n in s s3; do
	ns=$(new_netns $n) || exit 1
	ip -n "$ns" tuntap add dev tun0 mode tun || exit 1
	ip -n "$ns" addr add 10.79.0.1/24 dev tun0 && ip -n "$ns" addr add fd79::1/64 dev tun0 nodad &&
		ip -n "$ns" link set tun0 up || exit 1
	enf_listen "$ns" 7000 7001 7002 || exit 1
	eval "NS_$n=$ns"
done
cat >"$T_DIR/policy.yaml" <<'YAML'
rules:
  - { name: drop-7000, action: drop, direction: ingress, port: 7000 }
  - { name: reject-7002, action: reject, direction: ingress, port: 7002 }
YAML
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/tun0" --enforce-on "$NS_s3/tun0:xdp" || exit 1

for hook in tc xdp; do
	[ $hook = tc ] && ns=$NS_s || ns=$NS_s3
	for src in 10.79.0.2 fd79::2; do
		[[ $src == *:* ]] && dst=fd79::1 || dst=10.79.0.1
		tun() { ip netns exec "$ns" "$PY" "$EPEER" tun tun0 $src $dst "$@"; }
		# (a slow machine may see the SYN-ACK retransmitted: SA SA)
		r=$(tun 7001 tcp)
		[[ $r =~ ^SA( SA)*$ ]]
		ok $? "$hook, $dst: a SYN to a port no rule names draws a SYN-ACK (the control: $r)"
		is "$(tun 7000 tcp)" none "$hook, $dst: a SYN to a dropped port draws nothing"
		is "$(tun 7002 tcp)" RA "$hook, $dst: a SYN to a reject port draws a RST, out of the tun device"
		is "$(tun 7002 udp)" icmp-unreach "$hook, $dst: UDP to a reject port draws ICMP port unreachable"
	done
done
stop_agent
done_testing
