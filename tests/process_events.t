#!/usr/bin/env bash
# Process events from a real kernel: exec and exit of known commands, as a
# user reads them in the JSON export.
. "$(dirname "$0")/lib.sh"
plan 26

EV="$T_DIR/events.json"
WD="$T_DIR/work dir"
mkdir -p "$WD"

# A process started before the agent: a shell with a sleeping child.
bash -c 'sleep 30; true' &
PRE_PARENT=$!
on_exit "kill -9 $PRE_PARENT"
wait_for 5 pgrep -P $PRE_PARENT sleep >/dev/null
PRE_CHILD=$(pgrep -P $PRE_PARENT sleep)
on_exit "kill -9 $PRE_CHILD"

start_agent -o "$EV" --poll-ms 20 || exit 1

# jq over the events of one pid and kind
ev() { jq -c --argjson pid "$1" "select(.$2.process.pid == \$pid)" "$EV"; }
nev() { ev "$@" | wc -l; }
flush_wait() { wait_for 5 event_seen "$EV" ".$2.process.pid == $1"; }

# 1. A known command in a known directory.
(cd "$WD" && exec /usr/bin/printf '%s-' "arg one" two >/dev/null) &
P1=$!
wait $P1
flush_wait $P1 process_exit
is "$(nev $P1 process_exec)" 1 "exactly one exec event for a known command"
is "$(nev $P1 process_exit)" 1 "exactly one exit event"
E=$(ev $P1 process_exec)
is "$(jq -r .process_exec.process.binary <<<"$E")" /usr/bin/printf "binary is the full path"
is "$(jq -r .process_exec.process.arguments <<<"$E")" '%s- "arg one" two' "arguments, quoted where a word holds a space"
is "$(jq -r .process_exec.process.cwd <<<"$E")" "$WD" "cwd is the full path"
is "$(jq -r .process_exec.process.uid <<<"$E")" "$(id -u)" "uid"
is "$(jq -r .process_exec.process.flags <<<"$E")" execve "flags: execve"
MYID=$(jq -r --argjson pid $$ 'select(.process_exec.process.pid == $pid) | .process_exec.process.exec_id' "$EV" | tail -1)
is "$(jq -r .process_exec.process.parent_exec_id <<<"$E")" "$MYID" "parent_exec_id is the test shell's exec_id"
is "$(jq -r .process_exec.parent.pid <<<"$E")" "$$" "parent object names the test shell"
is "$(jq -r .process_exit.status <<<"$(ev $P1 process_exit)")" null "status 0 is left out, as Tetragon does"
is "$(jq -r .process_exit.process.exec_id <<<"$(ev $P1 process_exit)")" "$(jq -r .process_exec.process.exec_id <<<"$E")" "exit names the same exec_id"

# 2. An exit status.
/bin/sh -c 'exit 7' &
P2=$!
wait $P2
flush_wait $P2 process_exit
is "$(jq -r .process_exit.status <<<"$(ev $P2 process_exit)")" 7 "exit status reported"

# 3. Killed by a signal.
sleep 30 &
P3=$!
sleep 0.1
kill -9 $P3
wait $P3 2>/dev/null
flush_wait $P3 process_exit
is "$(jq -r .process_exit.signal <<<"$(ev $P3 process_exit)")" SIGKILL "SIGKILL reported as the signal"

# 4. Over-long arguments are cut and flagged.
LONG=$(head -c 3000 /dev/zero | tr '\0' a)
/bin/true "$LONG" &
P4=$!
wait $P4
flush_wait $P4 process_exit
E4=$(ev $P4 process_exec)
jq -e '.process_exec.process.flags | split(" ") | index("truncArgs")' <<<"$E4" >/dev/null
ok $? "over-long arguments flagged truncArgs"
L=$(jq -r '.process_exec.process.arguments | length' <<<"$E4")
[ "$L" -gt 900 ] && [ "$L" -lt 1100 ]
ok $? "arguments cut near 1 KiB ($L bytes)"

# 5. Processes found at start carry procFS and a correct parent chain.
PE=$(jq -c --argjson pid $PRE_CHILD 'select(.process_exec.process.pid == $pid)' "$EV" | head -1)
jq -e '.process_exec.process.flags | split(" ") | index("procFS")' <<<"$PE" >/dev/null
ok $? "a process running before the agent has the procFS flag"
PPE=$(jq -c --argjson pid $PRE_PARENT 'select(.process_exec.process.pid == $pid)' "$EV" | head -1)
is "$(jq -r .process_exec.process.parent_exec_id <<<"$PE")" "$(jq -r .process_exec.process.exec_id <<<"$PPE")" "its parent_exec_id is its parent's exec_id"
is "$(jq -r .process_exec.process.binary <<<"$PE")" "$(readlink -f "$(command -v sleep)")" "its binary is resolved"
kill -9 $PRE_CHILD
wait_for 5 event_seen "$EV" ".process_exit.process.pid == $PRE_CHILD"
is "$(jq -r .process_exit.process.flags <<<"$(ev $PRE_CHILD process_exit)")" procFS "its exit names it from the procFS entry"

# 6. A process that outlives its parent: its exit still names the parent.
ORPH_PARENT_OUT="$T_DIR/orphan"
/bin/sh -c '/bin/sleep 0.5 & echo $! >"$1"; /bin/sleep 0.1; exit 0' sh "$ORPH_PARENT_OUT" &
OP=$!
wait $OP
ORPH=$(cat "$ORPH_PARENT_OUT")
wait_for 5 event_seen "$EV" ".process_exit.process.pid == $ORPH"
is "$(jq -r .process_exit.parent.binary <<<"$(ev $ORPH process_exit)")" "$(readlink -f /bin/sh)" \
	"an exit after the parent's exit still names the parent's binary"

# 7. Every line is JSON; exec ids are Tetragon's base64(node:ktime:pid).
jq -e . "$EV" >/dev/null
ok $? "every line parses as JSON ($(wc -l <"$EV") lines)"
DEC=$(jq -r .process_exec.process.exec_id <<<"$E" | base64 -d)
[[ "$DEC" =~ ^$(uname -n):[0-9]+:$P1$ ]]
ok $? "exec_id decodes to node:ktime:pid ($DEC)"

# What the kernel lacks, as the agent logged it, is in vigil status.
st=$("$VIGIL" --pin-dir "$T_PIN" status)
lacks=$(grep -c 'kernel: no ' "$T_DIR/agent.err")
if [ "$lacks" -eq 0 ]; then
	grep -q "^kernel $(uname -r): nothing vigild uses is missing" <<<"$st"
else
	[ "$(grep -c "^kernel $(uname -r): no " <<<"$st")" -eq "$lacks" ]
fi
ok $? "vigil status says what this kernel lacks ($lacks: $(grep '^kernel' <<<"$st" | head -3 | tr '\n' ' '))"
grep -q "^records by kind: exec [1-9][0-9]*, exit [1-9]" <<<"$st"
ok $? "and the records the agent took, by kind ($(grep '^records by kind' <<<"$st"))"
stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
n=$(grep -c '^{"process_exec"' "$EV")
kinds=$(sed -n 's/.*records by kind: //p' "$T_DIR/agent.err")
[[ "$kinds" =~ (^|, )exec\ $n(,|$) ]]
ok $? "the stop line counts records by kind, as many execs as lines ($kinds)"
done_testing
