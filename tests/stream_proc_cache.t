#!/usr/bin/env bash
# The collector's process cache names what the agent's names (issue 38,
# point 5; docs/stream.md, "Memory"). With 1500 long-lived processes on the
# node, a marker started after them: its parent, and its parent's exit, are
# named in the collector's lines as in the agent's own file. Before, the
# collector kept 1024 processes per agent (the agent 65536), so the marker's
# parent was null and the parent's exit was "miss" there, silently. The
# collector counts and reports what its cache could not name (status file,
# stop line), and its memory stays within its bound.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 7
N=1500
start_collector c "" --listen tcp://127.0.0.1:0 -o "$T_DIR/out.json" --status-file "$T_DIR/status" || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" -o "$T_DIR/local.json" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q "connected" "$T_DIR/agent.err"
RSS0=$(awk '/VmHWM/ {print $2}' /proc/$COLL_PID/status)

# N long-lived processes (killed at exit), started at a capped pace.
# (In a subshell: not this shell's jobs.)
(for ((i = 0; i < N; i++)); do
	sleep 120 &
	echo $!
	((i % 100 == 99)) && sleep 0.05
done) >"$T_DIR/sleepers"
on_exit "xargs -r kill -9 <'$T_DIR/sleepers' 2>/dev/null"
TAG="pc$$"
# The parent, exec'd after the N: a shell that runs the marker, then exits.
/bin/bash -c "/bin/true $TAG-1; /bin/true $TAG-2; exit 0"
wait_for 20 sh -c "grep -q '\"$TAG-2\"' '$T_DIR/out.json' && grep -q '\"$TAG-2\"' '$T_DIR/local.json'"
ok $? "the markers reach the collector and the agent's own file"

parent_of() {	# FILE: the marker's parent's binary, "null" when not named
	jq -r --arg t "$TAG-1" 'select(.process_exec.process.arguments == $t) | .process_exec.parent.binary // "null"' "$1"
}
is "$(parent_of "$T_DIR/local.json")" /usr/bin/bash "the agent's file names the marker's parent"
is "$(parent_of "$T_DIR/out.json")" /usr/bin/bash "so does the collector's, with $N processes alive"
BASH_PID=$(jq -r --arg t "$TAG-1" 'select(.process_exec.process.arguments == $t) | .process_exec.process.ppid' "$T_DIR/out.json")
FLAGS=$(jq -r --argjson p "${BASH_PID:-0}" 'select(.process_exit.process.pid == $p) | .process_exit.process.flags' "$T_DIR/out.json" | head -1)
[ -n "$FLAGS" ] && [[ "$FLAGS" != *miss* ]]
ok $? "the parent's exit is named in the collector's file (flags '$FLAGS')"

wait_for 5 grep -q "process cache [0-9]* processes ([0-9]* KiB), 0 not cached (full), [0-9]* lookups found none" "$T_DIR/status"
ok $? "the status file counts what the cache could not name" || sed 's/^/#   /' "$T_DIR/status"
RSS1=$(awk '/VmHWM/ {print $2}' /proc/$COLL_PID/status)
diag "collector peak RSS ${RSS0} KiB before the $N processes, ${RSS1} KiB after"
# The stream's share of the bound (1 MiB + 80 KiB), and the batch of JSON
# lines, part of the base (up to 4 MiB: docs/stream.md, "Memory").
[ $((RSS1 - RSS0)) -le $((1024 + 80 + 4096)) ]
ok $? "its memory grew within the stream's bound and the batch ($((RSS1 - RSS0)) KiB)"
stop_agent
xargs -r kill -9 <"$T_DIR/sleepers" 2>/dev/null
kill -TERM $COLL_PID
wait $COLL_PID
grep -q "process cache: [0-9]* processes ([0-9]* KiB), 0 not cached (full), [0-9]* lookups found none" "$T_DIR/c.err"
ok $? "the stop line reports the cache's counts" || tail -3 "$T_DIR/c.err" | sed 's/^/#   /'
