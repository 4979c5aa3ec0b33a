#!/bin/bash
# Fail closed: a SYN vigil's parser cannot read far enough to match a rule
# (an IPv4 or IPv6 first fragment with 8 bytes of TCP, an IPv6 chain of 20
# destination-options headers, a truncated TCP header, a data offset past
# the segment's end) is dropped where a port-scoped rule covers its sender,
# and never answered, under drop, reject and reset, at TC and at XDP. IPv6
# with 5 and 12 destination-options headers is walked and matched as any
# other SYN. The server is never seen answering SYN-ACK (captured at the
# client), and the counters count each shape. Where no rule covers the
# sender (a cidr-scoped rule elsewhere), the same shapes pass: the server
# reassembles the IPv4 fragments and answers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 45

enf_pair c s || exit 1		# vigil's TC on s/vs
enf_pair c3 s3 || exit 1	# vigil's XDP on s3/vs
ip netns exec "$NS_c3" "$TOP/$BUILD/bench/xdp_pass" vc || exit 1
enf_listen "$NS_s" 7000 7001 || exit 1
enf_listen "$NS_s3" 7000 7001 || exit 1

# policy ACTION: one port-scoped rule, the sender's traffic to 7000.
policy() {
	cat >"$T_DIR/$1.yaml" <<YAML
rules:
  - name: port-$1
    action: $1
    direction: ingress
    protocol: tcp
    port: 7000
YAML
	enf_policy "$T_DIR/$1.yaml" >/dev/null
}
start_agent --no-procfs -o "$T_DIR/events.json" --enforce-on "$NS_s/vs" --enforce-on "$NS_s3/vs:xdp" || exit 1

# counts: the three fail-closed counters, "fragments ext truncated".
counts() {
	"$VIGIL" --pin-dir "$T_PIN" status | awk '
		$1 == "enforce_unparsed_fragments" { f = $2 }
		$1 == "enforce_unparsed_ext_headers" { e = $2 }
		$1 == "enforce_unparsed_truncated" { t = $2 }
		END { print f + 0, e + 0, t + 0 }'
}
# answered C S DST PORT: sends the shapes from C to DST:PORT; prints the
# source ports the server answered with a SYN-ACK, then those it answered
# with a RST, and writes what the counters counted meanwhile to $T_DIR/delta.
answered() {
	local pcap="$T_DIR/$1-$3-$4.pcap" src before after
	[[ $3 == *:* ]] && src=fd77::1 || src=10.77.0.1
	before=$(counts)
	capture "$1" vc "$pcap" || return 1
	ip netns exec "$1" "$PY" "$EPEER" shapes vc "$(mac_of "$2" vs)" $src "$3" "$4" >/dev/null
	stop_capture
	after=$(counts)
	paste -d' ' <(tr ' ' '\n' <<<"$before") <(tr ' ' '\n' <<<"$after") |
		awk '{ printf "%s%d", (NR > 1 ? " " : ""), $2 - $1 } END { print "" }' >"$T_DIR/delta"
	echo "synack:" $(tshark -n -r "$pcap" -Y "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.srcport == $4" \
		-T fields -e tcp.dstport 2>/dev/null | sort -n | uniq)
	echo "rst:" $(tshark -n -r "$pcap" -Y "tcp.flags.reset == 1 && tcp.srcport == $4" \
		-T fields -e tcp.dstport 2>/dev/null | sort -n | uniq)
}

# What each family's shapes should count: fragments, ext headers, truncated.
# IPv4: the 8-byte first fragment and the rest at offset 8 (inside where the
# TCP header is), two truncated; IPv6 the same plus the 20-header chain.
for action in drop reject reset; do
	policy $action || { diag "policy load failed"; exit 1; }
	for hook in tc xdp; do
		if [ $hook = tc ]; then c=$NS_c s=$NS_s; else c=$NS_c3 s=$NS_s3; fi
		for dst in 10.77.0.2 fd77::2; do
			got=$(answered "$c" "$s" $dst 7000); DELTA=$(cat "$T_DIR/delta")
			diag "$action $hook $dst: $got; counted $DELTA"
			is "$(grep synack: <<<"$got")" "synack:" "$action, $hook, $dst: no shape draws a SYN-ACK"
			# 5 and 12 headers are parsed: reject and reset answer those.
			is "$(grep rst: <<<"$got" | tr ' ' '\n' | grep -v -e rst: -e 41003 -e 41004 | tr '\n' ' ')" "" \
				"$action, $hook, $dst: what cannot be parsed is never answered"
			[[ $dst == *:* ]] && want="2 1 2" || want="2 0 2"
			is "$DELTA" "$want" "$action, $hook, $dst: counted (fragments, ext headers, truncated)"
		done
	done
done

ev='.network_enforce | select(.reply == "dropped_unparsed" and .action == "reset"
	and .destination_port == 0 and .rule_id >= 0)'
wait_for 5 event_seen "$T_DIR/events.json" "$ev"
ok $? "an event says what was dropped unparsed, under which rule (reply dropped_unparsed)"

# A rule covering other senders only: the shapes to a port no rule names pass.
cat >"$T_DIR/cidr.yaml" <<'YAML'
rules:
  - name: cidr-elsewhere
    action: drop
    cidr: [10.99.0.0/24, "fd99::/64"]
YAML
enf_policy "$T_DIR/cidr.yaml" >/dev/null || exit 1
for hook in tc xdp; do
	if [ $hook = tc ]; then c=$NS_c s=$NS_s; else c=$NS_c3 s=$NS_s3; fi
	for dst in 10.77.0.2 fd77::2; do
		got=$(answered "$c" "$s" $dst 7001); DELTA=$(cat "$T_DIR/delta")
		diag "cidr-only $hook $dst: $got; counted $DELTA"
		# The kernel drops two IPv6 shapes itself, vigil or not: the first
		# fragment without its whole TCP header (RFC 7112) and, on 6.18
		# (not on 6.1, which answers it), the 20-header chain (seen
		# unanswered without any rule too): that one is left out.
		[[ $dst == *:* ]] && want="synack: 41003 41004" || want="synack: 41001"
		is "$(grep synack: <<<"$got" | sed 's/ 41005$//')" "$want" "no rule covers the sender, $hook, $dst: the shapes pass (SYN-ACK)"
		is "$DELTA" "0 0 0" "no rule covers the sender, $hook, $dst: nothing counted"
	done
done
stop_agent
done_testing
