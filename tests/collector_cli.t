#!/usr/bin/env bash
# vigil-collector's command line: bad input refused before anything listens,
# and every option in --help documented in its man page.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 12
"$COLLECTOR" >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ] && grep -q 'no --listen' "$T_DIR/err"
ok $? "no --listen: refused, with exit status 2"
"$COLLECTOR" --listen ftp://127.0.0.1:1 >/dev/null 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q 'want tcp://HOST:PORT.* or udp://HOST:PORT' "$T_DIR/err"
ok $? "an unknown scheme is refused"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --max-conns 0 >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ]
ok $? "--max-conns 0 is refused"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish-stream X >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ] && grep -q -- '--publish-stream without --publish' "$T_DIR/err"
ok $? "a --publish-* option without --publish is refused, naming it"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish nats://127.0.0.1:1 --publish-stream A.B >/dev/null 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q -- "--publish-stream 'A.B': want a name without dots" "$T_DIR/err"
ok $? "a stream name JetStream would refuse is refused first, naming the option"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish nats://127.0.0.1:1 --publish-wait nan >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T_DIR/err")" = 1 ] && grep -q "invalid value 'nan' for --publish-wait" "$T_DIR/err"
ok $? "--publish-wait nan is refused, in one line"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --forget-after 7x >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ] && grep -q -- "invalid value '7x' for --forget-after: want N\[s|m|h|d\]" "$T_DIR/err"
ok $? "a --forget-after without a known unit is refused, naming the forms taken"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --max-conns-per-addr 0 >/dev/null 2>"$T_DIR/err"
[ $? -eq 2 ] && "$COLLECTOR" --listen tcp://127.0.0.1:0 --peer-timeout 1 >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "--max-conns-per-addr 0 and --peer-timeout 1 are refused"
"$COLLECTOR" -V | grep -q 'event schema [0-9]*\.[0-9]*, stream [0-9]*'
ok $? "--version names the event schema and the stream version"
# One collector per export file: a second on the same file is refused,
# naming the first's pid; the first goes on.
"$COLLECTOR" --listen tcp://127.0.0.1:0 -o "$T_DIR/one.json" 2>"$T_DIR/first.err" &
first=$!
on_exit "kill $first"
wait_for 5 grep -q listening "$T_DIR/first.err"
"$COLLECTOR" --listen tcp://127.0.0.1:0 -o "$T_DIR/one.json" >/dev/null 2>"$T_DIR/err"; rc=$?
[ $rc -eq 1 ] && grep -q "another vigil-collector (pid $first) writes $T_DIR/one.json and its state file: refused" "$T_DIR/err"
ok $? "a second collector on the same export file is refused, naming the first (exit $rc)"
kill -0 $first && kill -TERM $first && wait $first
ok $? "and the first runs on and stops cleanly"
missing=$("$COLLECTOR" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | while read -r opt; do
	grep -q -- "${opt//-/\\\\-}\|$opt" "$TOP/man/vigil-collector.8" || echo "$opt"; done)
is "$missing" "" "every vigil-collector option in --help is in man/vigil-collector.8"
done_testing
