#!/usr/bin/env bash
# One exit-status rule for vigild, vigil-collector and vigil (0 done, 1
# failed while running, 2 a bad command line), and messages a user can act
# on: one prefix style, no system error appended to a complete sentence,
# "needs root" where that is the cause; a closed stdout stops vigild; log
# levels, formats and journald's priorities.
. "$(dirname "$0")/lib.sh"
COLLECTOR="$TOP/$BUILD/vigil-collector"
: >"$T_DIR/file"
cat >"$T_DIR/good.yaml" <<'YAML'
rules:
  - name: ok
    action: deny
    protocol: tcp
    cidr: 192.0.2.0/24
    port: 9
    cgroup: /
YAML

# PROGRAM | ARGUMENTS | EXIT | WHAT STDERR SAYS (grep -E; "-": nothing checked)
table() {
	cat <<ROWS
vigild|--no-such-option|2|vigild: unrecognized option '--no-such-option'
vigild|--ring-size|2|option '--ring-size' needs an argument
vigild|--ring-size 5000|2|needs a power of two
vigild|--json --compact|2|choose one
vigild|--send http://x:1|2|want tcp://HOST:PORT
vigild|--send tcp://127.0.0.1:9 --send tcp://127.0.0.1:9|2|given twice
vigild|--send udp://127.0.0.1:9 --send-path uring|2|does not apply to udp://
vigild|--send tcp://127.0.0.1:9 --spool-dir $T_DIR/file|2|is not a folder
vigild|--wakeup-bytes 33554432|2|larger than the ring
vigild|--log-level loud|2|error, warn, info or debug
vigild|--metrics-label pod|2|invalid value 'pod' for --metrics-label: binary
vigild|--metrics-label binary|2|--metrics-label adds a label to --metrics, which is not given
vigild|--metrics 127.0.0.1:0 --metrics-binaries 0|2|metrics-binaries
vigild|--help|0|-
vigild|--policy $T_DIR/no-such.yaml|1|policy refused: .*no-such.yaml: No such file or directory$
vigild|--enforce-on vt-no-such-ns/lo|1|/run/netns/vt-no-such-ns not found$
vigild|-o /proc/vigil-nope/x.json|1|cannot open export file
vigil-collector|--listen 127.0.0.1:7400|2|'127.0.0.1:7400': want tcp://
vigil-collector|--no-such-option|2|vigil-collector: unrecognized option
vigil-collector||2|no --listen given
vigil-collector|--listen tcp://127.0.0.1:0 --log-format yaml|2|text or json
vigil-collector|--help|0|-
vigil-collector|--listen tcp://192.0.2.1:7400 -o $T_DIR/c.json|1|192.0.2.1
vigil|stats|2|vigil: unknown command 'stats'
vigil|policy|2|vigil: usage: vigil policy
vigil|drain|2|vigil: usage: vigil drain
vigil|--no-such-option status|2|vigil: unrecognized option '--no-such-option'
vigil|unpin --frob|2|usage: vigil unpin
vigil||2|-
vigil|help|0|-
vigil|status|1|vigil: no vigil ring pinned at
vigil|unpin|1|vigil: nothing pinned at
vigil|policy check $T_DIR/no-such.yaml|1|no-such.yaml: No such file or directory$
vigil|policy check $T_DIR/good.yaml|0|-
ROWS
}
plan $(( $(table | wc -l) * 2 + 12 ))

pins() { case $1 in vigild) echo "--pin-dir $T_PIN";; vigil) echo "--pin-dir $T_PIN";; esac; }
while IFS='|' read -r prog args want pat; do
	# shellcheck disable=SC2046,SC2086
	timeout 10 "$TOP/$BUILD/$prog" $(pins "$prog") $args </dev/null >"$T_DIR/out" 2>"$T_DIR/err"
	rc=$?
	said=$(head -3 "$T_DIR/err" | tr '\n' ' ')
	[ "$rc" = "$want" ] && { [ "$pat" = - ] || grep -Eq -- "$pat" "$T_DIR/err"; }
	ok $? "$prog $args: exit $want, says '$pat' (exit $rc: $said)"
	# Every line: the program's name first (after a daemon's timestamp),
	# or a policy file's FILE:LINE; no error said twice or appended to a
	# sentence of vigil's own.
	bad=$(grep -Ev "^([0-9TZ:.-]+ )?$prog: |^$T_DIR/" "$T_DIR/err"
	      grep -E ': Invalid argument$|: ([A-Z][a-z ]+): \1$' "$T_DIR/err")
	is "$bad" "" "$prog $args: every message in one style, no doubled or appended error"
done < <(table)

# vigild --json | head -1: the closed pipe stops the agent.
start=$SECONDS
timeout 30 "$VIGILD" --pin-dir "$T_PIN" --json 2>"$T_DIR/epipe.err" | head -1 >"$T_DIR/first"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && jq -e . "$T_DIR/first" >/dev/null
ok $? "vigild --json | head -1 exits 0 after one line (exit $rc in $((SECONDS - start)) s)"
grep -q "reader has gone" "$T_DIR/epipe.err"
ok $? "and says why it stopped"
grep -q "programs stay attached and the ring at $T_PIN keeps filling.*vigil --pin-dir $T_PIN unpin" "$T_DIR/epipe.err"
ok $? "its stop says the programs stay attached, the ring fills, and how to unpin"

# Logs: libbpf's lines only at debug; --log-level error keeps the
# start's info lines out; JSON lines; journald's priorities.
n_info=$(grep -c . "$T_DIR/epipe.err")
[ "$n_info" -lt 20 ] && ! grep -q "libbpf:" "$T_DIR/epipe.err"
ok $? "info level: $n_info lines, none of libbpf's"
"$VIGILD" --pin-dir "$T_PIN" -o "$T_DIR/d.json" -d 0.5 -v 2>"$T_DIR/debug.err"
n_debug=$(grep -c . "$T_DIR/debug.err")
[ "$n_debug" -gt "$n_info" ] && grep -q "libbpf:" "$T_DIR/debug.err"
ok $? "-v (debug) adds libbpf's lines ($n_debug lines)"
"$VIGILD" --pin-dir "$T_PIN" -o "$T_DIR/d.json" -d 0.5 --log-level error 2>"$T_DIR/error.err"
is "$(cat "$T_DIR/error.err")" "" "--log-level error: a clean run says nothing"
"$VIGILD" --pin-dir "$T_PIN" --no-such --log-format json 2>"$T_DIR/json.err"
"$VIGILD" --pin-dir "$T_PIN" --log-format json --no-such 2>"$T_DIR/json.err"
jq -e 'select(.level == "error" and .prog == "vigild" and (.msg | test("unrecognized")) and .time)' \
	"$T_DIR/json.err" >/dev/null
ok $? "--log-format json: one object a line ($(head -1 "$T_DIR/json.err"))"
: >"$T_DIR/journal.err"
JOURNAL_STREAM=$(stat -c %d:%i "$T_DIR/journal.err") \
	"$VIGILD" --pin-dir "$T_PIN" -o "$T_DIR/d.json" -d 0.3 --no-such 2>>"$T_DIR/journal.err"
grep -q '^<3>vigild: unrecognized' "$T_DIR/journal.err"
ok $? "under systemd (JOURNAL_STREAM), lines carry journald's <N> priority ($(head -1 "$T_DIR/journal.err"))"

# An agent running: unpin refuses, naming it; not root is said as such.
start_agent -o "$T_DIR/ev.json" --no-procfs || exit 1
"$VIGIL" --pin-dir "$T_PIN" unpin 2>"$T_DIR/err"; rc=$?
[ $rc = 1 ] && grep -q "vigild (pid $AGENT_PID) runs on $T_PIN.*--force" "$T_DIR/err" && [ -e "$T_PIN/vigil_ring" ]
ok $? "vigil unpin refuses while vigild runs, naming its pid (exit $rc: $(cat "$T_DIR/err"))"
setpriv --reuid=65534 --regid=65534 --clear-groups "$VIGIL" --pin-dir "$T_PIN" status >/dev/null 2>"$T_DIR/err"; rc=$?
[ $rc = 1 ] && grep -q "needs root" "$T_DIR/err" && ! grep -q "no vigil ring pinned" "$T_DIR/err"
ok $? "vigil status not as root says it needs root, not that nothing is pinned ($(cat "$T_DIR/err"))"
setpriv --reuid=65534 --regid=65534 --clear-groups "$VIGILD" --pin-dir "$T_PIN" -d 1 2>"$T_DIR/err"; rc=$?
[ $rc = 1 ] && grep -q "needs root" "$T_DIR/err" && ! grep -q "cannot create" "$T_DIR/err"
ok $? "vigild not as root: needs root, not 'cannot create' a folder that is there ($(cat "$T_DIR/err"))"
stop_agent
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
ok $? "with the agent stopped, vigil unpin removes the pins"
done_testing
