#!/bin/bash
# VLAN-tagged frames meet the rules as untagged ones do. SYNs (crafted with
# scapy) behind one 802.1Q tag, QinQ (802.1ad then 802.1Q), two, three and
# four 802.1Q tags, all VLAN 0 (the kernel strips those and answers), to a
# port a drop rule names: none draws a SYN-ACK, at TC and at XDP, IPv4 and
# IPv6, with rx/tx VLAN offload off and on on both veth ends. A frame with
# more tags than vigil reads (two in the data, past the one TC finds in the
# skb's vlan fields) is dropped and counted (enforce_unparsed_vlan); the
# same shapes to a port no rule names are answered (the control).
# Replies keep the tag: at TC a tagged SYN (VLAN 5, or 0) to a reject port
# draws a RST carrying that tag, a UDP datagram an ICMP port unreachable
# carrying it; where tags are in the frame's data (QinQ at TC, any tag at
# XDP) vigil drops instead of answering (docs/resets.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 40

enf_pair c s || exit 1		# vigil's TC on s/vs
enf_pair c3 s3 || exit 1	# vigil's XDP on s3/vs
ip netns exec "$NS_c3" "$TOP/$BUILD/bench/xdp_pass" vc || exit 1
enf_listen "$NS_s" 7000 7001 7002 || exit 1
enf_listen "$NS_s3" 7000 7001 7002 || exit 1

cat >"$T_DIR/policy.yaml" <<'YAML'
rules:
  - { name: drop-7000, action: drop, direction: ingress, protocol: tcp, port: 7000 }
  - { name: reject-7002, action: reject, direction: ingress, port: 7002 }
YAML
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/vs" --enforce-on "$NS_s3/vs:xdp" || exit 1

counter() { "$VIGIL" --pin-dir "$T_PIN" status | awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'; }
# offload NS DEV on|off: rx and tx VLAN offload.
offload() { ip netns exec "$1" ethtool -K "$2" rxvlan "$3" txvlan "$3" >/dev/null 2>&1; }

# synacks C S DST PORT: sends the VLAN shapes from C; prints the source
# ports the server answered with a SYN-ACK; $T_DIR/delta gets how many
# frames enforce_unparsed_vlan counted meanwhile.
synacks() {
	local pcap="$T_DIR/$1-$3-$4.pcap" src before
	[[ $3 == *:* ]] && src=fd77::1 || src=10.77.0.1
	before=$(counter enforce_unparsed_vlan)
	capture "$1" vc "$pcap" || return 1
	ip netns exec "$1" "$PY" "$EPEER" vlan vc "$(mac_of "$2" vs)" $src "$3" "$4" >/dev/null
	stop_capture
	echo $(($(counter enforce_unparsed_vlan) - before)) >"$T_DIR/delta"
	echo $(tshark -n -r "$pcap" -Y "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.srcport == $4" \
		-T fields -e tcp.dstport 2>/dev/null | sort -n | uniq)
}

for o in off on; do
	for ns in "$NS_c" "$NS_c3"; do offload "$ns" vc $o; done
	for ns in "$NS_s" "$NS_s3"; do offload "$ns" vs $o; done
	diag "VLAN offload $o: $(ip netns exec "$NS_s" ethtool -k vs | grep -E 'vlan-offload' | tr -s '\n\t ' ' ')"
	for hook in tc xdp; do
		if [ $hook = tc ]; then c=$NS_c s=$NS_s; else c=$NS_c3 s=$NS_s3; fi
		for dst in 10.77.0.2 fd77::2; do
			got=$(synacks "$c" "$s" $dst 7000); delta=$(cat "$T_DIR/delta")
			diag "offload $o, $hook, $dst, to the drop port: SYN-ACK to [$got], unparsed_vlan +$delta"
			is "$got" "" "offload $o, $hook, $dst: no tagged SYN to a dropped port draws a SYN-ACK"
			# TC reads the outer tag from the skb and two in the data:
			# four tags are past it; XDP reads two: three and four are.
			[ $hook = tc ] && want=1 || want=2
			is "$delta" "$want" "offload $o, $hook, $dst: tags past the walk counted as unparsed"
			got=$(synacks "$c" "$s" $dst 7001)
			[ $hook = tc ] && want="42001 42002 42003 42004" || want="42001 42002 42003"
			is "$got" "$want" \
				"offload $o, $hook, $dst: the shapes vigil reads pass to a port no rule names"
		done
	done

	# Replies carry the tag back (TC), or none is sent (tags in the data).
	for hook in tc xdp; do
		if [ $hook = tc ]; then c=$NS_c s=$NS_s; else c=$NS_c3 s=$NS_s3; fi
		for dst in 10.77.0.2 fd77::2; do
			[[ $dst == *:* ]] && src=fd77::1 || src=10.77.0.1
			mac=$(mac_of "$s" vs) pcap="$T_DIR/rej-$hook-$o-$dst.pcap"
			capture "$c" vc "$pcap" "tcp or icmp or icmp6 or vlan" || exit 1
			ip netns exec "$c" "$PY" "$EPEER" vlan vc "$mac" $src $dst 7002 >/dev/null
			ip netns exec "$c" "$PY" "$EPEER" tagged vc "$mac" $src $dst 42101 7002 5 tcp >/dev/null
			ip netns exec "$c" "$PY" "$EPEER" tagged vc "$mac" $src $dst 42102 7002 5 udp >/dev/null
			stop_capture
			rst=$(tshark -n -r "$pcap" -Y "tcp.flags.reset == 1 && tcp.srcport == 7002" \
				-T fields -e tcp.dstport -e vlan.id 2>/dev/null | sort -n | tr '\t\n' ': ')
			icmp=$(tshark -n -r "$pcap" -Y "icmp.type == 3 || icmpv6.type == 1" \
				-T fields -e udp.srcport -e vlan.id 2>/dev/null | sort -n | tr '\t\n' ': ')
			synack=$(tshark -n -r "$pcap" -Y "tcp.flags.syn == 1 && tcp.flags.ack == 1" \
				-T fields -e tcp.dstport 2>/dev/null | tr '\n' ' ')
			diag "offload $o, $hook, $dst, reject port: RST [$rst], ICMP [$icmp], SYN-ACK [$synack]"
			if [ $hook = tc ]; then
				is "$rst" "42001:0 42101:5 " "offload $o, tc, $dst: RSTs go back with the trigger's one tag, none where tags are in the data"
				is "$icmp" "42102:5 " "offload $o, tc, $dst: the ICMP port unreachable goes back tagged VLAN 5"
			else
				is "$rst$icmp" "" "offload $o, xdp, $dst: tags in the data: dropped, not answered"
				is "$synack" "" "offload $o, xdp, $dst: and not let through"
			fi
		done
	done
done
stop_agent
done_testing
