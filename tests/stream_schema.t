#!/usr/bin/env bash
# One event catalogue (include/vigil/event_kinds.h): every VIGIL_EV_* type a
# part declares is in it, so the stream's hello announces it (a collector
# refuses, and the agent would re-send forever, a record whose type the
# hello did not announce); and docs/stream.md's table of kinds is exactly
# the catalogue, ids, structs and sizes, and its record layouts every field
# of those structs, as BPF lays them out (their BTF). The schema version
# follows the catalogue: tests/schema_digests lists the digest of both for
# each version, as Falco ties its engine checksum to its schema.
. "$(dirname "$0")/lib.sh"
plan 6
types=$(grep -hoE '^[[:space:]]+VIGIL_EV_[A-Z0-9_]+' "$TOP"/include/vigil/*.h | tr -d '[:space:]\n' | sed 's/VIGIL_EV_/ VIGIL_EV_/g')
missing=$(for t in $types; do
	[ "$t" = VIGIL_EV_TYPE_MAX ] && continue
	grep -q "X($t," "$TOP/include/vigil/event_kinds.h" || echo "$t"
done)
is "$(echo $missing)" "" "every VIGIL_EV_* type of include/vigil is in the catalogue"
[ "$(echo $types | wc -w)" -ge 5 ]
ok $? "the check found the event types ($(echo $types | wc -w))"
"$TOP/$BUILD/tests/event_kinds" | sort >"$T_DIR/catalogue"
grep -E '^\| [0-9]+ \| [a-z_]+ \| `struct ' "$TOP/docs/stream.md" |
	sed -E 's/^(\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|).*/\1/' | sort >"$T_DIR/docs"
diff "$T_DIR/catalogue" "$T_DIR/docs" >"$T_DIR/diff"
ok $? "docs/stream.md lists exactly the catalogue's kinds, names, structs and sizes"
[ -s "$T_DIR/diff" ] && sed 's/^/#   /' "$T_DIR/diff"
"$TOP/$BUILD/tests/event_kinds" --layout "$TOP/$BUILD/tests/event_layout.bpf.o" | sort >"$T_DIR/fields"
grep -E '^\| `struct vigil_[a-z_0-9]+` \| `' "$TOP/docs/stream.md" | sort >"$T_DIR/docs_fields"
[ -s "$T_DIR/fields" ] && diff "$T_DIR/fields" "$T_DIR/docs_fields" >"$T_DIR/diff_fields"
ok $? "docs/stream.md's record layouts are exactly the catalogue structs' fields ($(wc -l <"$T_DIR/fields")), offsets, sizes and types"
[ -s "$T_DIR/diff_fields" ] && sed 's/^/#   /' "$T_DIR/diff_fields"

schema=$("$TOP/$BUILD/tests/event_kinds" --schema)
digest=$(cat "$T_DIR/catalogue" "$T_DIR/fields" | sha256sum | cut -d' ' -f1)
listed=$(awk -v v="$schema" '$1 == v { print $2 }' "$TOP/tests/schema_digests")
others=$(awk -v v="$schema" -v d="$digest" '$1 != v && $2 == d { print $1 }' "$TOP/tests/schema_digests")
[ -s "$T_DIR/fields" ] && [ "$listed" = "$digest" ] && [ -z "$others" ]
ok $? "schema $schema is the one of these kinds and layouts (tests/schema_digests)"
if [ -n "$others" ]; then
	diag "schema $schema has the kinds and layouts of $(echo $others) (digest $digest): a version"
	diag "is bumped for a change in them, not alone"
elif [ -z "$listed" ]; then
	diag "schema $schema has no line in tests/schema_digests: add '$schema $digest'"
elif [ "$listed" != "$digest" ]; then
	diag "the event kinds or record layouts changed (digest $digest), the schema version did not"
	diag "(tests/schema_digests: $schema $listed). A new kind is a new minor, any other change a"
	diag "new major (VIGIL_SCHEMA_* in include/vigil/events.h, docs/stream.md 'Schema versions');"
	diag "then add the line 'NEW.VERSION $digest' to tests/schema_digests."
fi
grep -q "^The kinds of schema $schema, from the catalogue" "$TOP/docs/stream.md"
ok $? "docs/stream.md's table of kinds is of schema $schema"
done_testing
