#!/usr/bin/env bash
# A fleet with mixed versions (docs/stream.md, "Schema versions"): an agent
# of a newer minor schema, which only adds event kinds, streams to this
# collector: every record is acknowledged, the kinds it knows are written,
# the others counted and skipped with one log line, and no sequence number
# is reported missing. A newer major is refused at the hello, naming both
# versions. The peers are tests/collector_hostile.py speaking the wire
# format, on a fresh collector.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
HOSTILE="$TOP/tests/collector_hostile.py"
plan 8
OUT="$T_DIR/out.json"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
PORT=$COLL_PORT
N=50
# This build's schema (the peer reads it from events.h too); the peer's
# newer major keeps this minor.
MAJOR=$(sed -n 's/^#define VIGIL_SCHEMA_MAJOR \([0-9]*\)$/\1/p' "$TOP/include/vigil/events.h")
MINOR=$(sed -n 's/^#define VIGIL_SCHEMA_MINOR \([0-9]*\)$/\1/p' "$TOP/include/vigil/events.h")

is "$($H "$HOSTILE" $PORT newer_major)" closed "a hello of the next major schema is refused"
grep -q "closing .*: event schema $((MAJOR + 1))\.$MINOR, another major version than this build's $MAJOR\.$MINOR" "$T_DIR/c.err"
ok $? "the refusal names both versions"

r=$($H "$HOSTILE" $PORT newer_minor $N)
# N exits of 88 bytes on the wire, N-1 records of the new kind of 40.
is "$r" "acked $((N * 88 + (N - 1) * 40))" "a newer minor's stream is acknowledged to its end"
wait_for 5 grep -q "sends event type 15, a kind this collector's schema" "$T_DIR/c.err"
ok $? "the unknown kind is named once in the log"
[ "$(grep -c 'sends event type 15' "$T_DIR/c.err")" -eq 1 ]
ok $? "and only once"
kill -TERM $COLL_PID; wait $COLL_PID
ok $? "the collector stops cleanly"
is "$(grep -c '"process_exit"' "$OUT")" $N "every exit of it is written"
grep -q "0 missing in sequence, .* $((N - 1)) of kinds unknown here skipped" "$T_DIR/c.err" &&
	! grep -q vigil_gap "$OUT"
ok $? "no number is counted missing, the skipped records are counted ($((N - 1)))"
done_testing
