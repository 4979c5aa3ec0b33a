#!/bin/bash
# Idle flows reset from their state, on a router whose links are not plain
# Ethernet: namespaces A -- R -- B. A is on VLAN 100 of R's veth ra: this
# kernel has no 802.1Q devices, so both ends of that link are VLAN access
# ports made of TC programs (tests/bpf/vlan_port.bpf.c) that drop untagged
# frames, after vigil's programs on ra, where the stack keeps the tag
# outside the frame's data. B is behind a point-to-point IP link without an
# Ethernet header: tun devices tr (in R) and tb (in B), joined by a relay
# (no IP tunnels in this kernel either). With per-flow state on R, a reset
# rule landing on an idle A-B connection makes R inject a RST toward each
# end; each must be framed as that end's packets came (tagged toward A,
# bare IP into tr toward B) or it never arrives. IPv4 and IPv6.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 6

VLAN_OBJ="$TOP/$BUILD/tests/vlan_port.bpf.o"
A=$(new_netns a) && R=$(new_netns r) && B=$(new_netns b) || exit 1
setup() {
	ip link add va netns "$A" type veth peer name ra netns "$R" &&
	ip -n "$A" addr add 10.81.1.1/24 dev va && ip -n "$A" addr add fd81:1::1/64 dev va nodad &&
	ip -n "$R" addr add 10.81.1.254/24 dev ra && ip -n "$R" addr add fd81:1::254/64 dev ra nodad &&
	ip -n "$A" link set va up && ip -n "$R" link set ra up &&
	ip -n "$R" tuntap add dev tr mode tun && ip -n "$B" tuntap add dev tb mode tun &&
	ip -n "$R" addr add 10.81.2.254/24 dev tr && ip -n "$B" addr add 10.81.2.1/24 dev tb &&
	ip -n "$R" addr add fd81:2::254/64 dev tr nodad && ip -n "$B" addr add fd81:2::1/64 dev tb nodad &&
	ip -n "$R" link set tr up && ip -n "$B" link set tb up &&
	ip -n "$A" route add default via 10.81.1.254 && ip -n "$A" -6 route add default via fd81:1::254 &&
	ip -n "$B" route add default dev tb && ip -n "$B" -6 route add default dev tb &&
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 &&
	v6_settled "$A" && v6_settled "$R" && v6_settled "$B" || return 1
	mkdir -p "$T_DIR/relay"
	ip netns exec "$R" "$PY" "$EPEER" tunrelay tr "/run/netns/$(basename "$B")" tb "$T_DIR/relay" &
	wait_for $((5 * T_SLOW)) test -e "$T_DIR/relay/ready"
}
setup || { diag "cannot build the namespaces"; exit 1; }
printf 'rules:\n  - name: keep\n    action: allow\n    protocol: udp\n' >"$T_DIR/policy.yaml"
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$R/ra" --enforce-on "$R/tr" --track-flows || exit 1
# The VLAN ports go on after vigil's programs (clsact filters run after
# TCX), so vigil sees the tags.
for port in "$A va" "$R ra"; do
	set -- $port
	ip netns exec "$1" tc qdisc add dev "$2" clsact 2>/dev/null
	ip netns exec "$1" tc filter add dev "$2" ingress bpf da obj "$VLAN_OBJ" sec tc &&
	ip netns exec "$1" tc filter add dev "$2" egress bpf da obj "$VLAN_OBJ" sec classifier ||
		{ diag "cannot make $2 a VLAN port"; exit 1; }
done

state() { cut -d' ' -f1 "$T_DIR/$1/$2/state"; }
reset_seen() { [ "$(state "$1" a)" = ECONNRESET ] && [ "$(state "$1" b)" = ECONNRESET ]; }
ports=""
for c in "7201 10.81.2.1" "7202 fd81:2::1"; do
	set -- $c
	name="idle-$1"
	check "$name: connection A -> $2 up through R" -- enf_flow "$A" "$B" "$T_DIR/$name" "$1" "$2" idle
	sleep 0.3	# idle: nothing crosses R from here on
	ports="$ports $1"
	{ echo rules:; for p in $ports; do
		printf '  - name: reset-%s\n    action: reset\n    direction: ingress\n    protocol: tcp\n    port: %s\n' "$p" "$p"
	done; } >"$T_DIR/policy.yaml"
	"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null
	if wait_for $((3 * T_SLOW)) reset_seen "$name"; then
		ok 0 "$name: both ends see ECONNRESET (a tagged RST to A, a bare IP one to B)"
	else
		ok 1 "$name: both ends see ECONNRESET (A: $(state "$name" a), B: $(state "$name" b))"
	fi
done
# The agent writes the events after the packets left: wait for them.
injected() { grep -c '"action":"reset","reply":"rst_injected"' "$T_DIR/events.json"; }
four_injected() { [ "$(injected)" -ge 4 ]; }
wait_for $((3 * T_SLOW)) four_injected
is "$(injected)" 4 \
	"events: four injected RSTs, one toward each end of each flow"
check "no RST failed to go out" -- bash -c "! grep -q 'cannot send a RST\|no RST toward' '$T_DIR/agent.err'"
