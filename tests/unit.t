#!/usr/bin/env bash
# Runs the C unit programs (build/tests/unit_*), each printing TAP.
. "$(dirname "$0")/lib.sh"
rc=0
for u in "$TOP/$BUILD"/tests/unit_*; do
	[ -x "$u" ] || continue
	echo "# $(basename "$u")"
	"$u" | sed '/^1\.\./d' || rc=1
done | awk '/^(not )?ok / { n++; sub(/^(not )?ok [0-9]+/, ($1 == "not" ? "not ok " : "ok ") n) } { print } END { print "1.." n }'
exit ${PIPESTATUS[0]}
