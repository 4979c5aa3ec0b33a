#!/usr/bin/env bash
# The compact view prints what processes chose (binary, arguments) on the
# operator's terminal: control bytes and invalid UTF-8 in them must come out
# escaped, one line per event, so argv cannot forge lines or retitle the
# window.
. "$(dirname "$0")/lib.sh"
plan 8

OUT="$T_DIR/compact.out"
: >"$T_DIR/agent.err"
"$VIGILD" --pin-dir "$T_PIN" --compact --poll-ms 20 >"$OUT" 2>>"$T_DIR/agent.err" &
AGENT_PID=$!
on_exit "kill -TERM $AGENT_PID; wait $AGENT_PID"
wait_for 20 grep -qs 'attached\|resumed' "$T_DIR/agent.err" || { diag "agent did not start"; exit 1; }

# A binary whose name holds an escape too (a copy of true, in T_DIR).
BIN="$T_DIR/$(printf 'tru\033[2Je')"
cp /bin/true "$BIN"
MARK="mark$$"
ARG=$(printf '%s-start\033]0;owned-title\007\nforged line\rX\377\302\233Y-end' "$MARK")
"$BIN" "$ARG" "plain é" &
P=$!
wait $P
wait_for 5 grep -qa "^exit  *$P " "$OUT"
stop_agent

# Only this test's lines: the agent sees every process on the node.
SEL="$T_DIR/mine.out"
grep -a -e "$MARK" -e "forged line" -e "owned-title" "$OUT" >"$SEL"
lines=$(grep -ac "$MARK" "$OUT")
is "$lines" 2 "the exec and the exit are one line each, the newline in argv escaped"
L=$(grep -a "^exec  *$P " "$OUT")
check "the exec line holds the whole argument, start to end" -- grep -q -- "$MARK-start.*-end" <<<"$L"
check "no raw ESC, BEL or CR in its lines" -- bash -c "! LC_ALL=C grep -aq \$'[\\033\\007\\r]' '$SEL'"
check "no invalid UTF-8 or C1 control left raw" -- bash -c "! LC_ALL=C grep -aqP '\\xff|\\xc2\\x9b' '$SEL'"
is "$(grep -ac . "$SEL")" 2 "nothing of the argument on a line of its own"
case "$L" in
*'\e]0;owned-title\x07\nforged line\rX\xff\xc2\x9bY-end'*) ok 0 "control bytes shown as \\e, \\xHH, \\n, \\r";;
*) ok 1 "control bytes shown as \\e, \\xHH, \\n, \\r"; diag "line: $(cat -v <<<"$L")";;
esac
check "the binary's escape is escaped too" -- grep -qF 'tru\e[2Je' <<<"$L"
check "valid UTF-8 stays as it is" -- grep -qF "plain é" <<<"$L"
