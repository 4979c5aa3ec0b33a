#!/usr/bin/env bash
# --config FILE: every option by its long name, `name = value` a line, for
# vigild and vigil-collector; the command line wins; a bad file is refused
# with FILE:LINE and why, and so is a file others could write.
. "$(dirname "$0")/lib.sh"
plan 13

conf() { cat >"$T_DIR/$1"; chmod 600 "$T_DIR/$1"; }
conf agent.conf <<CONF
# vigild's options for this test
pin-dir = $T_PIN
export-file = "$T_DIR/from-file.json"
no-procfs
duration = 1
report-interval = 0
CONF
"$VIGILD" --config "$T_DIR/agent.conf" 2>"$T_DIR/err"; rc=$?
[ $rc -eq 0 ] && [ -s "$T_DIR/from-file.json" ] && ! grep -q '"procFS"' "$T_DIR/from-file.json"
ok $? "vigild takes its options from the file (exit $rc)"
"$VIGILD" --config "$T_DIR/agent.conf" --export-file "$T_DIR/from-cli.json" 2>"$T_DIR/err"
[ -s "$T_DIR/from-cli.json" ]
ok $? "an option on the command line wins over the file"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1

bad() { # bad DESCRIPTION PATTERN: the start with bad.conf fails, saying PATTERN
	"$VIGILD" --config "$T_DIR/bad.conf" >/dev/null 2>"$T_DIR/err"; local rc=$?
	[ $rc -ne 0 ] && grep -q -- "$2" "$T_DIR/err" && [ ! -e "$T_PIN" ]
	ok $? "$1 (exit $rc: $(tail -1 "$T_DIR/err"))"
}
printf 'pin-dir = %s\n\nring-sise = 4096\n' "$T_PIN" | conf bad.conf
bad "an unknown option is refused with FILE:LINE" "bad.conf:3: unknown option 'ring-sise'"
printf 'pin-dir = %s\nring-size = 5000\n' "$T_PIN" | conf bad.conf
bad "a bad value is refused with FILE:LINE" "bad.conf:2: option 'ring-size' refused"
printf 'pin-dir = %s\nno-procfs = maybe\n' "$T_PIN" | conf bad.conf
bad "an option without a value takes true or false only" "bad.conf:2: option 'no-procfs' takes no value"
printf 'pin-dir = %s\nexport-file =\n' "$T_PIN" | conf bad.conf
bad "an option that needs a value says so" "bad.conf:2: option 'export-file' needs a value"
printf 'pin-dir = %s\nduration = 1\n' "$T_PIN" | conf bad.conf; chmod 666 "$T_DIR/bad.conf"
bad "a file others may write is refused" "must be a regular file .* owned by root and writable by no one else"
"$VIGILD" --pin-dir "$T_PIN" --config "$T_DIR/none.conf" >/dev/null 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q "none.conf: No such file" "$T_DIR/err"
ok $? "a missing file is refused"

# Every option --help lists is one a file may set (but --config, --help
# and --version): its line is taken, or refused for its value, never as
# unknown. A second line no program knows stops the start either way.
for prog in "$VIGILD" "$TOP/$BUILD/vigil-collector"; do
	unknown=$("$prog" --help | sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z0-9-]*\).*/\2/p' |
		grep -vx 'config\|help\|version' | while read -r name; do
			printf '%s = x\nno-such-option\n' "$name" | conf probe.conf
			"$prog" --config "$T_DIR/probe.conf" >/dev/null 2>"$T_DIR/err"
			grep -q "probe.conf:1: unknown option" "$T_DIR/err" && echo "$name"
		done)
	is "$unknown" "" "every option of $(basename "$prog")'s --help may be set in a file"
done
printf 'pin-dir = %s\nmetrics-label = binary\nmetrics-binaries = 2000\n' "$T_PIN" | conf bad.conf
bad "--metrics-binaries past its bound in a file is refused with FILE:LINE" \
	"bad.conf:3: option 'metrics-binaries' refused"

# The collector reads the same form.
conf coll.conf <<CONF
listen = tcp://127.0.0.1:0
export-file = $T_DIR/coll.json
max-agents = 8
CONF
: >"$T_DIR/coll.err"
"$TOP/$BUILD/vigil-collector" --config "$T_DIR/coll.conf" 2>"$T_DIR/coll.err" &
pid=$!
on_exit "kill $pid"
wait_for 5 grep -q 'listening' "$T_DIR/coll.err"
ok $? "vigil-collector takes its options from the file"
kill -TERM $pid; wait $pid
printf 'listen = tcp://127.0.0.1:0\nmax-agents = 0\n' | conf coll-bad.conf
"$TOP/$BUILD/vigil-collector" --config "$T_DIR/coll-bad.conf" >/dev/null 2>"$T_DIR/err"; rc=$?
[ $rc -eq 2 ] && grep -q "coll-bad.conf:2: option 'max-agents' refused" "$T_DIR/err"
ok $? "and refuses a bad value with FILE:LINE (exit $rc)"
done_testing
