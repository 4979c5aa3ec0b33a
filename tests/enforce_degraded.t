#!/usr/bin/env bash
# Packet enforcement on a kernel that lacks a feature, whatever kernel runs
# the suite: VIGIL_TEST_REFUSE (test-only, docs/kernels.md) makes vigild act
# as on a kernel that refuses the feature, down the same path (for
# xdp_meta the verifier really refuses vigil_xdp_ingress), and each run
# re-checks what enforcement must still do:
#   xdp_meta      an :xdp interface still resets both ends, XDP handing the
#                 trigger to TC by packet identity, with GRO on and RPS
#                 running TC ingress on another CPU than XDP;
#   tcx           TC enforcement as clsact filters still rejects;
#   sock_destroy  a reset rule naming a namespace still resets by packets.
# And an interface that is not there is said to be so. Only namespaces and a
# veth pair this test creates.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 21

enf_pair c s || exit 1
state() { cut -d' ' -f1 "$1/state"; }
reset_seen() { [ "$(state "$1/a")" = ECONNRESET ] && [ "$(state "$1/b")" = ECONNRESET ]; }
status_has() { "$VIGIL" --pin-dir "$T_PIN" status | grep -q "$1"; }
# degraded FEATURE ARGS...: vigild started as if the kernel refused FEATURE.
degraded() {
	local f=$1; shift
	printf 'rules:\n  - name: keep\n    action: allow\n    protocol: udp\n' >"$T_DIR/policy.yaml"
	VIGIL_TEST_REFUSE=$f start_agent --no-procfs -o "$T_DIR/events-$f.json" \
		--policy "$T_DIR/policy.yaml" "$@"
}
# Each run starts from nothing pinned: no link an earlier run left.
next_run() { stop_agent; "$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1; }

# --- xdp_meta: the handoff by identity, under GRO and RPS -------------------
# The client runs on CPU 0, so veth runs XDP there; RPS sends the server's
# receive processing (TC ingress) to the other CPUs only.
ncpu=$(nproc)
ip netns exec "$NS_s" ethtool -K vs gro on >/dev/null
if [ "$ncpu" -ge 2 ]; then
	ip netns exec "$NS_s" sh -c "printf %x $(( (1 << ncpu) - 2 )) >/sys/class/net/vs/queues/rx-0/rps_cpus"
fi
# Packets other CPUs took from RPS (softnet_stat's 10th column; CPU 0 first).
rps_on_others() {
	local f n=0
	while read -ra f; do n=$((n + 16#${f[9]})); done < <(tail -n +2 /proc/net/softnet_stat)
	echo $n
}
degraded xdp_meta --enforce-on "$NS_s/vs:xdp" || exit 1
# The verifier's words for a helper a program type may not call: "program
# of this type cannot use helper" (6.18), "unknown func" (6.1); vigild knows
# both (agent/core/feature_load.c).
check "xdp_meta: the start log names the refused feature, in one line" -- \
	grep -qE '^[0-9TZ:.-]* vigild: kernel: no XDP metadata \(bpf_xdp_adjust_meta in XDP programs\) \(the verifier: .*(cannot use helper|unknown func|invalid func).*\): XDP hands resets to TC by packet identity' "$T_DIR/agent.err"
check "xdp_meta: no verifier log without -v" -- sh -c "! grep -q 'BEGIN PROG LOAD LOG\|^libbpf:' '$T_DIR/agent.err'"
check "xdp_meta: the interface is enforced with XDP, handing over by identity" -- \
	grep -q 'enforcing on vs in .*XDP (resets through TC, handed over by packet identity)' "$T_DIR/agent.err"
check "xdp_meta: vigil status lists it with its effect" -- \
	status_has '^kernel .*: no XDP metadata .*by packet identity'
# A feature present is listed too; before 6.6 TCX is not, and is listed so.
if has_tcx; then
	check "xdp_meta: and what the kernel has (TCX links)" -- status_has '^kernel .*: has TCX links'
else
	check "xdp_meta: and TCX, which this kernel lacks (before 6.6)" -- status_has '^kernel .*: no TCX links'
fi

rps0=$(rps_on_others)
for c in "7400 10.77.0.2" "7401 fd77::2"; do
	set -- $c
	d="$T_DIR/x$1"
	if ! enf_flow "$NS_c" "$NS_s" "$d" "$1" "$2" bulk 0; then
		ok 1 "$2: bulk flow up (for GRO)"; ok 1 "$2: bulk flow up (for the reset)"
		continue
	fi
	sleep 0.5
	# GRO merged what XDP saw as frames: TC ingress sees segments longer
	# than one frame. (tshark itself takes seconds to start under TCG.)
	big=$(ip netns exec "$NS_s" timeout $((5 * T_SLOW)) tshark -q -n -i vs -a duration:1 -T fields -e frame.len \
		-f "tcp port $1" 2>/dev/null | sort -n | tail -1)
	ok $([ "${big:-0}" -gt 1514 ] && echo 0 || echo 1) "$2: GRO merges the flow's frames (largest ${big:-none} bytes)"
	printf 'rules:\n  - { name: cut, action: reset, protocol: tcp, port: %s }\n' "$1" >"$T_DIR/policy.yaml"
	enf_policy "$T_DIR/policy.yaml" >/dev/null
	if wait_for $((3 * T_SLOW)) reset_seen "$d"; then
		ok 0 "$2: both ends see ECONNRESET (XDP to TC by identity)"
	else
		ok 1 "$2: both ends see ECONNRESET (client: $(state "$d/a"), server: $(state "$d/b"))"
	fi
done
rps1=$(rps_on_others)
if [ "$ncpu" -ge 2 ]; then
	ok $([ "$rps1" -gt "$rps0" ] && echo 0 || echo 1) "RPS ran receive processing on another CPU than XDP's ($((rps1 - rps0)) times)"
else
	skip "one CPU: RPS cannot move TC ingress"
fi
check "xdp_meta: events say reset at ingress, RSTs both ways" -- \
	grep -q '"action":"reset","reply":"rst_to_both","direction":"ingress"' "$T_DIR/events-xdp_meta.json"
next_run

# --- tcx: clsact filters ------------------------------------------------------
degraded tcx --enforce-on "$NS_s/vs" || exit 1
check "tcx: the start log says TC enforcement is clsact filters" -- \
	grep -q '^[0-9TZ:.-]* vigild: kernel: no TCX links (6.6+): TC enforcement is netlink clsact filters' "$T_DIR/agent.err"
check "tcx: vigil's filter is on the interface's ingress" -- \
	sh -c "tc -n '$NS_s' filter show dev vs ingress | grep -q 'handle 0x7669 vigil_tc_ingres'"
printf 'rules:\n  - { name: no, action: reject, protocol: tcp, port: 7410 }\n' >"$T_DIR/policy.yaml"
enf_policy "$T_DIR/policy.yaml" >/dev/null
enf_listen "$NS_s" 7410
read -r res ms < <(ip netns exec "$NS_c" "$PY" "$EPEER" connect 10.77.0.2 7410 2)
is "$res" refused "tcx: a connection the reject rule names is refused (${ms:-?} ms)"
check "tcx: vigil status lists it" -- status_has '^kernel .*: no TCX links'
next_run
check "tcx: the stopped agent took its filters back" -- \
	sh -c "! tc -n '$NS_s' filter show dev vs ingress | grep -q vigil_tc"

# --- sock_destroy: resets by packets ----------------------------------------
degraded sock_destroy --enforce-on "$NS_s/vs" || exit 1
check "sock_destroy: the start log says live sockets are not destroyed" -- \
	grep -q '^[0-9TZ:.-]* vigild: kernel: no bpf_sock_destroy kfunc (6.5+): reset rules do not destroy live local sockets' "$T_DIR/agent.err"
d="$T_DIR/s7420"
enf_flow "$NS_c" "$NS_s" "$d" 7420 10.77.0.2 busy || diag "sock_destroy: the flow did not come up"
printf 'rules:\n  - { name: cut, action: reset, protocol: tcp, port: 7420, netns: %s }\n' "$NS_s" >"$T_DIR/policy.yaml"
enf_policy "$T_DIR/policy.yaml" >/dev/null
if wait_for $((3 * T_SLOW)) reset_seen "$d"; then
	ok 0 "sock_destroy: both ends see ECONNRESET (by packets)"
else
	ok 1 "sock_destroy: both ends see ECONNRESET (client: $(state "$d/a"), server: $(state "$d/b"))"
fi
check "sock_destroy: vigil status lists it" -- status_has '^kernel .*: no bpf_sock_destroy'
next_run

# --- an interface that is not there -------------------------------------------
"$VIGILD" --pin-dir "$T_PIN" --no-procfs -o /dev/null --enforce-on "$NS_s/nosuchif0" 2>"$T_DIR/nosuch.err"
ok $([ $? -ne 0 ] && echo 0 || echo 1) "--enforce-on NS/nosuchif0: vigild does not start"
check "and says: no such interface" -- grep -q 'no such interface nosuchif0' "$T_DIR/nosuch.err"
done_testing
