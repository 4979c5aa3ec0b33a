#!/usr/bin/env bash
# The /proc snapshot and live events (issue 34, point 4): one exec_id has
# one process_exec line, on a fresh start with execs racing the start and
# on a resumed agent; the snapshot precedes live events, so their parents
# are known; and a resumed agent knows the processes the earlier one saw
# (their children's parents, their exits).
. "$(dirname "$0")/lib.sh"
plan 7

EV="$T_DIR/events.json"
dups() { jq -r '.process_exec.process.exec_id // empty' "$1" | sort | uniq -d | wc -l; }

# Execs racing the start: a loop of 20 a second, capped at 10 s.
(for _ in $(seq 200); do /bin/true race; sleep 0.05; done) &
RACE=$!
on_exit "kill $RACE 2>/dev/null"
# A parent running before the agent, whose child execs after the start.
mkfifo "$T_DIR/go" "$T_DIR/go2"
/bin/sh -c 'read _ <"$1"; /bin/echo snapshot-child >/dev/null' sh "$T_DIR/go" &
PARENT=$!
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1
timeout 5 sh -c 'echo go >"$1"' sh "$T_DIR/go"
wait $PARENT
sleep 0.5
is "$(dups "$EV")" 0 "fresh start: no exec_id on two process_exec lines"
# The snapshot's lines all precede the first live exec.
FIRST_LIVE=$(jq -r -s 'map(.process_exec.process.flags // "" | startswith("execve")) | index(true)' "$EV")
LAST_PROCFS=$(jq -r -s 'map(.process_exec.process.flags // "" | startswith("procFS")) | rindex(true)' "$EV")
[ "$LAST_PROCFS" != null ] && [ "$FIRST_LIVE" != null ] && [ "$LAST_PROCFS" -lt "$FIRST_LIVE" ]
ok $? "the snapshot precedes live execs (last procFS line $LAST_PROCFS, first live exec $FIRST_LIVE)"
is "$(jq -r 'select(.process_exec.process.arguments == "snapshot-child") | .process_exec.parent.pid' "$EV")" "$PARENT" \
	"a live exec's parent from the snapshot is known"

# A process exec'd under this agent outlives it; the next agent resumes.
/bin/sh -c 'read _ <"$1"; /bin/echo resumed-child >/dev/null; exit 4' sh "$T_DIR/go2" &
P2=$!
wait_for 5 grep -q "\"pid\":$P2," "$EV"
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1
grep -q resumed "$T_DIR/agent.err"
ok $? "the agent resumed"
timeout 5 sh -c 'echo go >"$1"' sh "$T_DIR/go2"
wait $P2
wait_for 5 grep -q "\"process_exit\":{\"process\":{[^}]*\"pid\":$P2," "$EV"
kill "$RACE" 2>/dev/null; wait "$RACE" 2>/dev/null
sleep 0.3
stop_agent
is "$(dups "$EV")" 0 "resumed: still no exec_id on two process_exec lines"
is "$(jq -r 'select(.process_exec.process.arguments == "resumed-child") | .process_exec.parent.pid' "$EV")" "$P2" \
	"resumed: a child's parent exec'd under the earlier agent is known"
is "$(jq -r --argjson p "$P2" 'select(.process_exit.process.pid == $p) | [.process_exit.process.flags, .process_exit.status] | join(" ")' "$EV")" \
	"execve 4" "resumed: its exit is known (not 'miss')"
done_testing
