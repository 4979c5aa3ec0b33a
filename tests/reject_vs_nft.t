#!/bin/bash
# vigil's RSTs agree with netfilter's: the same trigger packets (SYN; ACK
# with data; FIN|ACK; FIN without ACK; SYN with data; a bare ACK padded to a
# 60-byte frame; and RST, a bad checksum, a non-first fragment, which get no
# answer) are sent with scapy to a rejected port behind vigil's TC program,
# and, in a twin pair of namespaces, behind nftables `reject with tcp reset`.
# The RSTs captured with tshark must agree in port, seq, ack, flags and
# window, IPv4 and IPv6; vigil's XDP program (a third pair) answers alike.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 12

enf_pair c s || exit 1	# vigil's
enf_pair c2 s2 || exit 1	# nftables'
enf_pair c3 s3 || exit 1	# vigil's XDP
# XDP_TX over veth reaches the peer only when it runs NAPI: an XDP program.
ip netns exec "$NS_c3" "$TOP/$BUILD/bench/xdp_pass" vc || exit 1
cat >"$T_DIR/policy.yaml" <<'YAML'
rules:
  - name: reject-7000
    action: reject
    direction: ingress
    protocol: tcp
    port: 7000
YAML
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/vs" --enforce-on "$NS_s3/vs:xdp" || exit 1
ip netns exec "$NS_s2" nft -f - <<'NFT' || exit 1
table inet vigil_test {
	chain input {
		type filter hook input priority 0;
		tcp dport 7000 reject with tcp reset
	}
}
NFT

# answers NS_C NS_S SRC DST: the RSTs the triggers drew, one line each.
answers() {
	local pcap="$T_DIR/$1-$4.pcap" smac
	smac=$(mac_of "$2" vs)
	capture "$1" vc "$pcap" || return 1
	ip netns exec "$1" "$PY" "$EPEER" triggers vc "$smac" "$3" "$4" 7000 >/dev/null
	stop_capture
	rsts "$pcap" 7000
}

for fam in 4 6; do
	if [ $fam = 4 ]; then src=10.77.0.1 dst=10.77.0.2; else src=fd77::1 dst=fd77::2; fi
	v=$(answers "$NS_c" "$NS_s" $src $dst)
	n=$(answers "$NS_c2" "$NS_s2" $src $dst)
	x=$(answers "$NS_c3" "$NS_s3" $src $dst)
	diag "IPv$fam vigil:"; echo "$v" | sed 's/^/#   /'
	diag "IPv$fam nftables:"; echo "$n" | sed 's/^/#   /'
	is "$(echo "$n" | wc -l)" 6 "IPv$fam: nftables answers the 6 triggers that want an answer"
	is "$v" "$n" "IPv$fam: vigil's RSTs match nftables' in port, seq, ack, flags, window"
	check "IPv$fam: no answer to RST, bad checksum or fragment (ports 40007-40009)" -- \
		test -z "$(echo "$v" | awk '$1 >= 40007')"
	is "$x" "$n" "IPv$fam: vigil's XDP RSTs match nftables' too"
	is "$(echo "$x" | awk '$1 >= 40007')" "" "IPv$fam: XDP: no answer to RST, bad checksum or fragment"
done
stop_agent
if has_tcx; then
	ip -n "$NS_s3" link show vs | grep -q "prog/xdp"
	ok $? "agent stopped: its XDP program stays on the interface (a pinned link)"
	"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
	ip -n "$NS_s3" link show vs | grep -q "prog/xdp"
	ok $((! $?)) "vigil unpin: the XDP program is off the interface"
else
	# Without TCX the resets XDP hands over are built by a clsact filter the
	# stopping agent removes; the XDP link goes with it.
	ip -n "$NS_s3" link show vs | grep -q "prog/xdp"
	ok $((! $?)) "no TCX: the stopped agent took its XDP program off the interface"
	skip "this kernel has no TCX links (Linux 6.6+): enforcement does not outlive the agent"
fi
done_testing
