#!/bin/bash
# reset from a host in the middle: namespaces A -- R -- B, vigil's TC on R's
# two interfaces with per-flow sequence state. An established A-B
# connection, once busy (the dropped trigger becomes RSTs both ways) and
# once idle (no trigger: RSTs built from the flow state and injected): when
# a reset rule lands on R, both ends see ECONNRESET promptly. IPv4 and IPv6.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 14

enf_router a r b || exit 1
# A second namespace with flow tracking too (its lo): the idle-flow watcher
# is restarted when a namespace joins, and must keep watching R.
NS_o=$(new_netns o) || exit 1
rule() { # rule PORT: a reset rule for TCP to PORT, as policy YAML
	printf '  - name: reset-%s\n    action: reset\n    direction: ingress\n    protocol: tcp\n    port: %s\n' "$1" "$1"
}
printf 'rules:\n  - name: keep\n    action: allow\n    protocol: udp\n' >"$T_DIR/policy.yaml"
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_o/lo" --enforce-on "$NS_r/ra" --enforce-on "$NS_r/rb" --track-flows || exit 1

# flow NAME PORT ADDR MODE: a connection A -> B:PORT held by both ends.
flow() { enf_flow "$NS_a" "$NS_b" "$T_DIR/$1" "$2" "$3" "$4"; }
state() { cut -d' ' -f1 "$T_DIR/$1/$2/state"; }
reset_seen() { [ "$(state "$1" a)" = ECONNRESET ] && [ "$(state "$1" b)" = ECONNRESET ]; }

ports=""
for c in "busy 7100 10.78.2.1" "idle 7101 10.78.2.1" "idle 7102 fd78:2::1"; do
	set -- $c
	name="$1-$2"
	check "$name: connection up through R" -- flow "$name" "$2" "$3" "$1"
	sleep 0.3	# idle: nothing crosses R from here on
	ip netns exec "$NS_a" ss -Htn state established "( dport = :$2 )" |
		awk '{n = split($3, l, ":"); print l[n]}' >"$T_DIR/$name/aport"
	ports="$ports $2"
	{ echo rules:; for p in $ports; do rule "$p"; done; } >"$T_DIR/policy.yaml"
	t0=$(date +%s%3N)
	"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null
	if wait_for $((3 * T_SLOW)) reset_seen "$name"; then
		ta=$(cut -d' ' -f2 "$T_DIR/$name/a/state"); tb=$(cut -d' ' -f2 "$T_DIR/$name/b/state")
		diag "$name: A reset after $((ta - t0)) ms, B after $((tb - t0)) ms from the policy load"
		ok 0 "$name: both ends see ECONNRESET"
		check "$name: within a second" -- test $((ta - t0)) -lt 1000 -a $((tb - t0)) -lt 1000
	else
		ok 1 "$name: both ends see ECONNRESET (A: $(state "$name" a), B: $(state "$name" b))"
		ok 1 "$name: within a second"
	fi
done
# A reset flow stays reset: B's next segment in the idle IPv4 flow (the rule
# matches A's direction only) is answered by vigil on R, not forwarded:
# the RST comes back to B with R's TTL 64 (A's own RST would arrive with 63).
aport=$(cat "$T_DIR/idle-7101/aport")
capture "$NS_b" vb "$T_DIR/stay.pcap" || diag "capture did not start"
ip netns exec "$NS_b" "$PY" "$EPEER" ack vb "$(mac_of "$NS_r" rb)" 10.78.2.1 10.78.1.1 7101 "$aport" >/dev/null
stop_capture
got=$(tshark -n -r "$T_DIR/stay.pcap" -Y "tcp.flags.reset == 1 && tcp.dstport == 7101" -T fields -e ip.ttl -e tcp.seq_raw 2>/dev/null)
is "$(echo "$got" | cut -f1)" 64 "reset flow stays reset: B's retransmission is answered by R (TTL 64)"
is "$(echo "$got" | cut -f2)" 67890 "  with seq = the segment's ack (B's RCV.NXT)"
# Once the rule is gone, R answers the reset flow no more: B's segment is
# forwarded, and only A (its socket gone) answers it, with TTL 63.
printf 'rules:\n  - name: keep\n    action: allow\n    protocol: udp\n' >"$T_DIR/policy.yaml"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null
capture "$NS_b" vb "$T_DIR/gone.pcap" || diag "capture did not start"
ip netns exec "$NS_b" "$PY" "$EPEER" ack vb "$(mac_of "$NS_r" rb)" 10.78.2.1 10.78.1.1 7101 "$aport" >/dev/null
stop_capture
got=$(tshark -n -r "$T_DIR/gone.pcap" -Y "tcp.flags.reset == 1 && tcp.dstport == 7101" -T fields -e ip.ttl 2>/dev/null)
is "$(echo "$got" | sort -u | tr '\n' ' ')" "63 " "rule unloaded: the reset flow is no longer answered by R (only A's RST, TTL 63)"
check "events: the idle flows' injected RSTs" -- \
	grep -q '"action":"reset","reply":"rst_injected"' "$T_DIR/events.json"
check "events: the busy flow's trigger answered with RSTs both ways" -- \
	grep -q '"action":"reset","reply":"rst_to_both"' "$T_DIR/events.json"
done_testing
