#!/usr/bin/env bash
# One cgroup's exec storm cannot flush another's history (issue 17): with a
# per-cgroup budget for process events (--proc-budget), a storm from a
# test-made cgroup leaves a marker exec from another cgroup in a small
# export file, and what the budget held back is reported: per cgroup as
# vigil_throttle events, in all as the proc_events_throttled counter.
# Without the budget the same storm pushes the marker out (the control).
# The storm is serial (one core at most) and capped in count and time.
. "$(dirname "$0")/lib.sh"
plan 14

# The storm binary, copied where any uid can run it: the by-uid storm runs
# as an unprivileged uid, which a checkout only root may enter (a clone
# under umask 077, a mktemp -d folder) refuses.
install -d -m 755 "$T_DIR/bin" && install -m 755 "$TOP/$BUILD/bench/exec_storm" "$T_DIR/bin/" &&
	chmod 711 "$T_DIR" || exit 1
STORM="$T_DIR/bin/exec_storm"
CG_STORM=$(new_cgroup storm) || skip_all "no cgroup v2"
CG_MARK=$(new_cgroup mark) || skip_all "no cgroup v2"
CG_STORM2=$(new_cgroup storm2) || skip_all "no cgroup v2"
STORM_ID=$(stat -c %i "$CG_STORM")

# storm N [CGROUP [UID]]: N fork+execs of /bin/true from CGROUP (the storm
# cgroup), as UID (root), at most 20 s (times T_SLOW: under TCG a storm
# runs about 50 execs a second).
storm() {
	(echo $BASHPID >"${2:-$CG_STORM}/cgroup.procs" &&
		exec setpriv --reuid="${3:-0}" --regid="${3:-0}" --clear-groups \
			timeout $((20 * T_SLOW)) "$STORM" "$1") >/dev/null
}
# marker TAG [UID]: one exec from the marker cgroup, as UID (root).
marker() {
	(echo $BASHPID >"$CG_MARK/cgroup.procs" &&
		exec setpriv --reuid="${2:-0}" --regid="${2:-0}" --clear-groups /bin/echo "$1") >/dev/null
}
# in_export FILE TAG: the marker's exec is in FILE or its rotated files.
in_export() { cat "$1" "$1".* 2>/dev/null | grep -q "\"arguments\":\"$2\""; }
flushed() { wait_for 10 in_export "$1" "$2"; }

# Process events only: the machine's network events (other tests, other
# users) are no budget's to hold, and would flush the small file by
# themselves on a busy machine.
AGENT_OPTS="--export-file-max-size-mb 1 --export-file-max-backups 0 --poll-ms 20 --report-only --report-interval 0"

# Control: no budget, a 1 MiB export file with no backups, 2500 execs.
EV="$T_DIR/nobudget.json"
start_agent -o "$EV" $AGENT_OPTS || exit 1
marker "vt-mark-a$$"
flushed "$EV" "vt-mark-a$$"
ok $? "control: the marker exec is written"
storm 2500
sleep 1
! in_export "$EV" "vt-mark-a$$"
ok $? "control: without a budget the storm pushes the marker out of the export file"
stop_agent

# With a budget of 10 events a second per cgroup (bursts of 20): low enough
# that other cgroups on a busy machine cannot fill the file either.
EV="$T_DIR/budget.json"
rm -rf "$T_PIN"
start_agent -o "$EV" $AGENT_OPTS \
	--proc-budget 10:20 || exit 1
marker "vt-mark-b$$"
flushed "$EV" "vt-mark-b$$"
ok $? "budget: the marker exec is written"
storm 2500
sleep 2	# the last throttle report is due a second after the storm
in_export "$EV" "vt-mark-b$$"
ok $? "budget: the storm from another cgroup leaves the marker in the export file"
HELD=$(jq -n --argjson cg "$STORM_ID" '[inputs | select(.vigil_throttle.cgroup_id == $cg) | .vigil_throttle.throttled] | add // 0' "$EV")
[ "$HELD" -gt 1000 ]
ok $? "budget: vigil_throttle events name the storm's cgroup and what it held ($HELD)"
sleep 1	# the stop is due a second after the last report
T=$(jq -r --argjson cg "$STORM_ID" 'select(.vigil_throttle.cgroup_id == $cg) | .vigil_throttle.type' "$EV" | uniq | tr '\n' ' ')
is "$T" "start held stop " "budget: the storm starts (at its first held event), is counted, and stops"
CNT=$("$VIGIL" --pin-dir "$T_PIN" status | awk '$1 == "proc_events_throttled" { print $2 }')
[ -n "$CNT" ] && [ "$CNT" -ge "$HELD" ]
ok $? "budget: the counter proc_events_throttled counts them too ($CNT >= $HELD)"
N=$(jq -n --argjson cg "$STORM_ID" '[inputs | select(.process_exec.process.cgroup_id == $cg)] | length' "$EV")
[ "$N" -lt 500 ]
ok $? "budget: few of the storm's execs were written ($N of 2500)"
marker "vt-mark-c$$"
flushed "$EV" "vt-mark-c$$"
ok $? "budget: the marker cgroup's next exec is written at once"
stop_agent

# By uid: an unprivileged user's storm spread over two cgroups (as a user
# who can make cgroups would) spends one budget; another user's marker (not
# root's: every root process of this shared machine spends root's budget).
# Both uids are this run's own, unlike nobody's (65534), which other tests
# on the machine run as: their processes would spend the same budget and be
# counted here.
U_STORM=$((1000000000 + 2 * $$)) U_MARK=$((1000000001 + 2 * $$))
EV="$T_DIR/byuid.json"
rm -rf "$T_PIN"
start_agent -o "$EV" $AGENT_OPTS \
	--proc-budget 10:20 --proc-budget-by uid || exit 1
marker "vt-mark-d$$" $U_MARK
flushed "$EV" "vt-mark-d$$"
storm 1200 "$CG_STORM" $U_STORM &
S1=$!
storm 1200 "$CG_STORM2" $U_STORM
R2=$?
wait $S1
R1=$?
# Else the checks below hold for a storm that never ran, but one.
ok $((R1 || R2)) "by uid: both storms ran all their execs as uid $U_STORM (exit $R1, $R2)"
sleep 2
in_export "$EV" "vt-mark-d$$"
ok $? "by uid: another user's marker stays in the export file"
HELD=$(jq -n --argjson u $U_STORM '[inputs | select(.vigil_throttle.uid == $u) | .vigil_throttle.throttled] | add // 0' "$EV")
[ "$HELD" -gt 1000 ]
ok $? "by uid: vigil_throttle events name the uid and what it held ($HELD)"
N=$(jq -n --argjson u $U_STORM '[inputs | select(.process_exec.process.uid == $u)] | length' "$EV")
[ "$N" -lt 250 ]
ok $? "by uid: both cgroups together wrote few of the 2400 execs ($N)"
marker "vt-mark-e$$" $U_MARK
flushed "$EV" "vt-mark-e$$"
ok $? "by uid: that user's next exec is written at once"
stop_agent
done_testing
