#!/usr/bin/env bash
# Every event type a part declares is announced in the stream's hello
# (lib/stream.c): a collector refuses, and the agent would re-send forever, a
# record whose type the hello did not announce.
. "$(dirname "$0")/lib.sh"
plan 2
types=$(grep -hoE '^[[:space:]]+VIGIL_EV_[A-Z0-9_]+' "$TOP"/include/vigil/*.h | tr -d '[:space:]\n' | sed 's/VIGIL_EV_/ VIGIL_EV_/g')
missing=$(for t in $types; do
	[ "$t" = VIGIL_EV_TYPE_MAX ] && continue
	sed -n '/^static const struct vigil_stream_type schema/,/^};/p' "$TOP/lib/stream.c" | grep -q "{ $t," || echo "$t"
done)
is "$(echo $missing)" "" "every VIGIL_EV_* type of include/vigil is in the stream schema"
[ "$(echo $types | wc -w)" -ge 5 ]
ok $? "the check found the event types ($(echo $types | wc -w))"
done_testing
