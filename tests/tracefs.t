#!/usr/bin/env bash
# vigild on a machine where tracefs is not mounted, as on a fresh one: the
# syscall tracepoints (tamper, file rules, accept) are attached by their id
# in tracefs, so vigild mounts it before its first program, and starts.
# The agent runs in a private mount namespace (unshare -m) in which this
# test unmounts every tracefs and debugfs (debugfs would mount tracefs
# again under it on first access); the host's mounts are left alone.
. "$(dirname "$0")/lib.sh"
plan 6
host_mounts() { awk '$3 == "tracefs" || $3 == "debugfs" { print $2 }' /proc/self/mounts | sort; }
BEFORE=$(host_mounts)
EV="$T_DIR/events.json"

: >"$T_DIR/agent.err"
# shellcheck disable=SC2016	# expanded by the inner shell
unshare -m --propagation private sh -c '
	for i in 1 2 3; do
		awk "\$3 == \"tracefs\" || \$3 == \"debugfs\" { print \$2 }" /proc/self/mounts |
			sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
	done
	[ "$(stat -f -c %T /sys/kernel/tracing)" != tracefs ] || { echo "tracefs still mounted" >&2; exit 3; }
	echo "no tracefs here" >&2
	exec "$@"' sh "$VIGILD" --pin-dir "$T_PIN" -o "$EV" --poll-ms 20 2>>"$T_DIR/agent.err" &
AGENT_PID=$!
on_exit "kill -TERM $AGENT_PID; wait $AGENT_PID"
# (Under TCG, 6.1's verifier takes seconds per enforcement program.)
wait_for $((20 * T_SLOW)) grep -qs 'attached\|resumed' "$T_DIR/agent.err"
ok $? "with no tracefs mounted, vigild starts"
[ $_t_fail -eq 0 ] || sed 's/^/#   /' "$T_DIR/agent.err"
grep -q "no tracefs here" "$T_DIR/agent.err"
ok $? "(its mount namespace had no tracefs when it started)"
grep -q "mounted tracefs at /sys/kernel/tracing" "$T_DIR/agent.err"
ok $? "and says it mounted tracefs"

/bin/true vigil-tracefs-marker &
M=$!
wait $M
wait_for $((5 * T_SLOW)) event_seen "$EV" ".process_exec.process.pid == $M"
ok $? "it sees processes (an exec of pid $M)"
stop_agent
ok $? "it stops cleanly"
is "$(host_mounts)" "$BEFORE" "the host's tracefs and debugfs mounts are as they were"
done_testing
