#!/usr/bin/env bash
# Runs the C unit programs (build/tests/unit_*), each printing TAP. A
# program that dies (a sanitizer report, a crash) or exits non-zero is a
# failed check of its own, so its TAP lines so far cannot hide it.
. "$(dirname "$0")/lib.sh"
for u in "$TOP/$BUILD"/tests/unit_*; do
	[ -x "$u" ] || continue
	echo "# $(basename "$u")"
	"$u" >"$T_DIR/unit.out" 2>&1
	st=$?
	sed '/^1\.\./d' "$T_DIR/unit.out"
	[ $st -eq 0 ] || echo "not ok 0 - $(basename "$u") exits with status $st"
done | awk '/^(not )?ok / { n++; sub(/^(not )?ok [0-9]*/, ($1 == "not" ? "not ok " : "ok ") n) } { print } END { print "1.." n }'
