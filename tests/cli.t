#!/usr/bin/env bash
# The command line: bad input is refused with a clear message and a non-zero
# exit before anything is loaded; help and man pages agree.
. "$(dirname "$0")/lib.sh"
plan 15

refuses() { # refuses DESCRIPTION PATTERN -- ARGS...
	local d=$1 pat=$2; shift 3
	"$VIGILD" --pin-dir "$T_PIN" "$@" >"$T_DIR/out" 2>"$T_DIR/err"
	local rc=$?
	[ $rc -ne 0 ] && grep -q -- "$pat" "$T_DIR/err"
	ok $? "$d (exit $rc: $(head -1 "$T_DIR/err"))"
}
refuses "unknown option" "unrecognized option" -- --no-such-option
refuses "bad ring size" "power of two" -- --ring-size 5000
refuses "non-numeric size" "invalid value" -- --export-file-max-size-mb lots
refuses "stray argument" "unexpected argument" -- extra
refuses "conflicting outputs" "choose one" -- --json --compact
refuses "unwritable export file" "cannot open export file /proc/vigil-nope" -- -o /proc/vigil-nope/events.json
[ ! -e "$T_PIN" ]
ok $? "a refused start pinned nothing"

"$VIGILD" --version | grep -q "event schema"
ok $? "vigild --version names the event schema"
"$VIGIL" no-such-verb 2>"$T_DIR/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown command" "$T_DIR/err"
ok $? "vigil refuses an unknown command"
"$VIGIL" --pin-dir "$T_PIN" status 2>"$T_DIR/err"; rc=$?
[ $rc -ne 0 ] && grep -q "no vigil ring pinned" "$T_DIR/err"
ok $? "vigil status without pins says so"

# vigil status: JSON on demand; exit 1 without an agent, 2 for a stray word.
"$VIGILD" --pin-dir "$T_PIN" --no-procfs -o /dev/null -d 0.5 2>/dev/null
"$VIGIL" --pin-dir "$T_PIN" status --json >"$T_DIR/st.json"; rc=$?
[ $rc -eq 1 ] && jq -e '.agent_running == false and (.events_seq | type == "number") and .ring_size > 0' "$T_DIR/st.json" >/dev/null
ok $? "vigil status --json: the pins as JSON, exit 1 with no agent running (exit $rc)"
"$VIGIL" --pin-dir "$T_PIN" status --jsno >/dev/null 2>&1
is $? 2 "vigil status refuses an unknown argument (exit 2)"
"$VIGILD" --pin-dir "$T_PIN" --no-procfs -o /dev/null -d 3 2>/dev/null &
wait_for 20 sh -c "'$VIGIL' --pin-dir '$T_PIN' status --json | jq -e .agent_running >/dev/null"
ok $? "and exit 0, agent_running true, with an agent on the pins"
wait
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1

# Every long option in --help is documented in the man page.
missing=$("$VIGILD" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | while read -r opt; do
	grep -q -- "${opt//-/\\\\-}\|$opt" "$TOP/man/vigild.8" || echo "$opt"; done)
is "$missing" "" "every vigild option in --help is in man/vigild.8"
missing=$("$VIGIL" help | awk '/^Commands:/{c=1;next} /^$/{c=0} c{print $1}' | while read -r cmd; do
	grep -q "^\.B $cmd\|^\.TP.*$cmd\|\\\\fB$cmd" "$TOP/man/vigil.8" || echo "$cmd"; done)
is "$missing" "" "every vigil command is in man/vigil.8"
done_testing
