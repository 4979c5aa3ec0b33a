#!/usr/bin/env bash
# Sockets carried into a denied cgroup and kept where no file table shows
# them (issue 32): a TCP socket connected outside the cgroup, passed in by
# SCM_RIGHTS, and then held as an io_uring fixed file or in flight in a unix
# socketpair (tests/carried_hide.c), sending once a second. The walk of file
# tables cannot see them; the send hook names the task that sends, so the
# first send after the policy lands shows vigild the socket, and it is
# destroyed before the next. The same two ways from outside the cgroup are
# left alone. Hooks and iterators touch only a cgroup and a network
# namespace this test creates.
. "$(dirname "$0")/lib.sh"
needs sock-destroy
needs io-tracepoints
plan 15

[ -n "$(cgroup2_mount)" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup hidden) || exit 1
NS=$(new_netns a) || exit 1
HIDE="$TOP/$BUILD/tests/carried_hide"

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: tcp-deny
    action: deny
    protocol: tcp
    cidr: 127.0.0.1/32
    port: 7001
    cgroup: $CG
POL

ip netns exec "$NS" /usr/bin/python3 "$TOP/tests/deny_server.py" "$T_DIR" &
on_exit "kill $!"
wait_for 5 test -e "$T_DIR/server.ready" || exit 1
start_agent -o "$T_DIR/events.json" --no-procfs ${VT_AGENT_ARGS:-} || exit 1

# hide MODE CGROUP TAG: a socket to the denied port, hidden by MODE, sending
# "TAG N" once a second for 14 s.
hide() {
	# nsenter, not ip netns exec: that one mounts a /sys without the cgroups
	nsenter --net="/run/netns/$NS" "$HIDE" "$1" 7001 "$2" "$T_DIR" "$3" 14 1000 &
	on_exit "kill $!"
}
hide uring "$CG" uring
hide inflight "$CG" inflight
hide uring - uring-out
hide inflight - inflight-out
wait_for 5 test -e "$T_DIR/uring.up" -a -e "$T_DIR/inflight.up" -a -e "$T_DIR/uring-out.up" \
	-a -e "$T_DIR/inflight-out.up" || exit 1
# received TAG: how many of TAG's sends reached the server.
received() { grep -c "^$1 " "$T_DIR/recv.7001" 2>/dev/null; }
# sent TAG [AFTER_MS [FAILED]]: TAG's sends logged after AFTER_MS that went
# out (FAILED: that failed), by count.
sent() {
	awk -v t="${2:-0}" -v f="${3:-}" '$2 > t && (f ? $3 !~ /^[0-9]+$/ : $3 ~ /^[0-9]+$/)' \
		"$T_DIR/$1.log" 2>/dev/null | wc -l
}
wait_for 5 sh -c "[ \$(grep -c '^uring ' '$T_DIR/recv.7001') -ge 2 ] &&
	[ \$(grep -c '^inflight ' '$T_DIR/recv.7001') -ge 2 ]" 2>/dev/null
check "before the policy, both hidden sockets' sends arrive" -- \
	test "$(received uring)" -ge 2 -a "$(received inflight)" -ge 2
P_URING=$(cat "$T_DIR/uring.up") P_INFLIGHT=$(cat "$T_DIR/inflight.up")
check "no file table shows either socket (ss names no holder)" -- \
	sh -c "! ip netns exec '$NS' ss -tnp | grep -Eq 'pid=($P_URING|$P_INFLIGHT),'"

"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null || exit 1
T0=$(date +%s%3N)
counter() { "$VIGIL" --pin-dir "$T_PIN" status | awk -v n="$1" '$1 == n { print $2 }'; }
# Past the rescan 5 s after the policy landed, which cannot see them.
sleep 8
T_BOUND=$((T0 + 2000))

for tag in uring inflight; do
	is "$(sent $tag "$T0")" 1 "$tag: one send went out after the policy landed, the one that showed the socket"
	check "$tag: every send from 2 s after the policy landed failed ($(sent $tag "$T_BOUND" failed) of them)" -- \
		test "$(sent $tag "$T_BOUND")" -eq 0 -a "$(sent $tag "$T_BOUND" failed)" -ge 5
	is "$(received $tag)" "$(sent $tag)" "$tag: the server got exactly the sends that went out"
done
grep -q "^[0-9]* [0-9]* ECONNABORTED$" "$T_DIR/uring.log"
ok $? "the io_uring holder sees the socket ended (ECONNABORTED)"
is "$(counter enforce_carried_found_in_use)" 2 "found by their sends (enforce_carried_found_in_use)"
is "$(counter enforce_carried_destroyed)" 2 "and destroyed (enforce_carried_destroyed)"
said() { grep -q "deny rule 'tcp-deny': pid $1 sent or received on a socket made outside its cgroup, to port 7001: destroyed" "$T_DIR/agent.err"; }
check "the agent says so, naming the rule and each sender" -- \
	eval "said $P_URING && said $P_INFLIGHT"
for tag in uring-out inflight-out; do
	check "$tag: the same hiding outside the cgroup is left alone (all $(sent $tag) sends went out and arrived)" -- \
		test "$(sent $tag 0 failed)" -eq 0 -a "$(sent $tag)" -ge 10 -a "$(received $tag)" -eq "$(sent $tag)"
done
stop_agent
ok $? "the agent stops cleanly"
done_testing
