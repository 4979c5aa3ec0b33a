#!/usr/bin/env bash
# vigil events: follows a running agent as a subscriber of its control
# socket, reads vigil's and Tetragon's JSON from a file or stdin, filters,
# neutralises escapes; a subscriber that never reads costs the agent's own
# outputs nothing, and its drops are counted and said.
. "$(dirname "$0")/lib.sh"
plan 12

# A subscriber that asks for events and never reads one.
cat >"$T_DIR/deaf.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(b"events\0vigil\0")
print("subscribed", flush=True)
time.sleep(float(sys.argv[2]))
PY

start_agent -o "$T_DIR/ev.json" --no-procfs || exit 1
SOCK=/run/vigil/$(basename "$T_PIN").sock

# Follow, see an exec, stop with Ctrl-C.
"$VIGIL" --pin-dir "$T_PIN" events --follow --kind process --no-color </dev/null >"$T_DIR/follow" 2>"$T_DIR/follow.err" &
FPID=$!
on_exit "kill $FPID"
sleep 0.5
/bin/echo vigil-events-marker >/dev/null
wait_for 5 grep -q '/bin/echo vigil-events-marker' "$T_DIR/follow"
ok $? "vigil events --follow shows a new exec ($(grep marker "$T_DIR/follow" | head -1))"
kill -INT $FPID; wait $FPID; rc=$?
is "$rc" 0 "Ctrl-C ends it with exit 0 ($(cat "$T_DIR/follow.err"))"
grep -v '🚀 process' "$T_DIR/follow" | head -3 >"$T_DIR/other"
is "$(cat "$T_DIR/other")" "" "--kind process shows execs only"

# Piped to head: it exits once head has its line.
( sleep 0.5; for i in 1 2 3 4 5; do /bin/true; sleep 0.2; done ) &
timeout 15 "$VIGIL" --pin-dir "$T_PIN" events --follow </dev/null | head -1 >"$T_DIR/head"
is "${PIPESTATUS[0]}" 0 "vigil events --follow | head -1 exits ($(cat "$T_DIR/head"))"

# The slow subscriber: it never reads while 3000 processes run.
python3 "$T_DIR/deaf.py" "$SOCK" 60 >"$T_DIR/deaf.out" &
DPID=$!
on_exit "kill $DPID"
wait_for 5 grep -q subscribed "$T_DIR/deaf.out"
sleep 0.3
N=3000
start=$(date +%s.%N)
for ((i = 0; i < N; i++)); do /bin/true "vigil-slow-$i"; done
secs=$(echo "$(date +%s.%N) - $start" | bc)
wait_for 10 sh -c "[ \$(jq -c 'select(.process_exec.process.arguments // \"\" | startswith(\"vigil-slow-\"))' '$T_DIR/ev.json' | wc -l) -ge $N ]"
got=$(jq -c 'select(.process_exec.process.arguments // "" | startswith("vigil-slow-"))' "$T_DIR/ev.json" | wc -l)
is "$got" "$N" "with a subscriber that never reads, the export file has every exec ($got of $N, ${secs}s)"
"$VIGIL" --pin-dir "$T_PIN" status >"$T_DIR/status"
sub=$(grep '^subscribers' "$T_DIR/status")
dropped=$(sed -n 's/.*lines, \([0-9]*\) dropped.*/\1/p' <<<"$sub")
[ "${dropped:-0}" -gt 0 ]
ok $? "vigil status counts the slow subscriber's drops ($sub)"
lost=$(awk '$1 == "lost_output" {print $2}' "$T_DIR/status")
is "${lost:-0}" 0 "the agent's own output lost nothing (lost_output ${lost:-?})"
grep -q "subscriber pid $DPID reads slower than events come" "$T_DIR/agent.err"
ok $? "the agent's log says the subscriber is slow ($(grep -m1 'reads slower' "$T_DIR/agent.err"))"
kill $DPID; wait $DPID 2>/dev/null
wait_for 3 grep -q "subscriber pid $DPID left (closed).*dropped" "$T_DIR/agent.err"
ok $? "and when it leaves, what it was sent and lost ($(grep -m1 "pid $DPID left" "$T_DIR/agent.err"))"
stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "the agent's stop: no gap in sequence"

# Files and stdin: every line of vigil's form shows, one compact line each;
# escapes in arguments are neutralised.
jq -c . "$T_DIR/ev.json" | head -200 >"$T_DIR/some.json"
printf '{"process_exec":{"process":{"pid":7,"binary":"/bin/x\\u001b]0;owned\\u0007","arguments":"a\\u001b[2Jb"}},"time":"2026-01-01T00:00:00.000Z"}\n' >>"$T_DIR/some.json"
"$VIGIL" events --compact <"$T_DIR/some.json" >"$T_DIR/compact"
is "$(wc -l <"$T_DIR/compact")" "$(wc -l <"$T_DIR/some.json")" "a file on stdin: one compact line per event"
! grep -q $'\e' "$T_DIR/compact" && grep -q '/bin/x\\e\]0;owned\\x07 a\\e\[2Jb' "$T_DIR/compact"
ok $? "escape sequences in binaries and arguments are shown, not obeyed ($(tail -1 "$T_DIR/compact"))"
done_testing
