#!/bin/bash
# reset at XDP on a host: the server's interface enforced with XDP
# (--enforce-on NETNS/IFNAME:xdp, nothing else: no program on the client's
# side), a busy connection from the client, IPv4 and IPv6. When the reset
# rule lands, XDP hands the next segment to vigil's TC ingress program,
# which sends a RST back to the client and one on to the server's socket:
# both ends see ECONNRESET. (XDP_TX alone answered the client only, and
# over veth reached it only with an XDP program on the client's end.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 8

enf_pair c s || exit 1
printf 'rules:\n  - name: keep\n    action: allow\n    protocol: udp\n' >"$T_DIR/policy.yaml"
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/vs:xdp" || exit 1

state() { cut -d' ' -f1 "$1/state"; }
reset_seen() { [ "$(state "$1/a")" = ECONNRESET ] && [ "$(state "$1/b")" = ECONNRESET ]; }

for c in "7300 10.77.0.2" "7301 fd77::2"; do
	set -- $c
	d="$T_DIR/f$1"
	check "port $1: connection up" -- enf_flow "$NS_c" "$NS_s" "$d" "$1" "$2" busy
	printf 'rules:\n  - { name: cut, action: reset, protocol: tcp, port: %s }\n' "$1" >"$T_DIR/policy.yaml"
	enf_policy "$T_DIR/policy.yaml" >/dev/null
	t0=$(date +%s%3N)
	if wait_for $((2 * T_SLOW)) reset_seen "$d"; then
		ta=$(cut -d' ' -f2 "$d/a/state"); tb=$(cut -d' ' -f2 "$d/b/state")
		diag "$2: client reset $((ta - t0)) ms, server $((tb - t0)) ms after the load returned"
		ok 0 "$2: both ends see ECONNRESET"
	else
		ok 1 "$2: both ends see ECONNRESET (client: $(state "$d/a"), server: $(state "$d/b"))"
	fi
done
# A reset rule refuses new connections too: the SYN is answered RST|ACK.
for a in 10.77.0.2 fd77::2; do
	read -r res ms < <(ip netns exec "$NS_c" "$PY" "$EPEER" connect "$a" 7301 2)
	is "$res" refused "$a: a new connection under the reset rule is refused (${ms:-?} ms)"
done
check "events: reset at ingress, RSTs both ways" -- \
	grep -q '"action":"reset","reply":"rst_to_both","direction":"ingress"' "$T_DIR/events.json"
check "the client's end runs no XDP program" -- \
	sh -c "! ip -n '$NS_c' link show vc | grep -q prog/xdp"
done_testing
