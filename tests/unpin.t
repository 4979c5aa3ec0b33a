#!/usr/bin/env bash
# vigil unpin removes vigil's own pins and nothing else, and only from a
# folder that holds vigil's schema map.
. "$(dirname "$0")/lib.sh"
plan 7
OTHER="${T_PIN}-other"
on_exit "rm -rf '$OTHER'"

start_agent -o "$T_DIR/ev.json" --no-procfs || exit 1
stop_agent
links=$(for l in "$T_PIN"/link_*; do bpftool link show pinned "$l" -j | jq .id; done)
[ -n "$links" ]
ok $? "the agent left its links pinned"
# Another tool's map in the same folder.
bpftool map create "$T_PIN/other_tool_map" type array key 4 value 4 entries 1 name other_map
"$VIGIL" --pin-dir "$T_PIN" unpin >"$T_DIR/out" 2>&1
ok $? "vigil unpin succeeds ($(cat "$T_DIR/out"))"
[ "$(ls "$T_PIN")" = other_tool_map ]
ok $? "it leaves the foreign pin, and only that ($(ls "$T_PIN" | head -3 | tr '\n' ' '))"
gone=1
for id in $links; do bpftool link show id "$id" >/dev/null 2>&1 && gone=0; done
ok $((! gone)) "the agent's links are gone from the kernel"

# A folder without the schema map: refused, untouched.
mkdir -p "$OTHER"
bpftool map create "$OTHER/vigil_like" type array key 4 value 4 entries 1 name vigil_like
bpftool map create "$OTHER/link_x" type array key 4 value 4 entries 1 name link_x
"$VIGIL" --pin-dir "$OTHER" unpin 2>"$T_DIR/err"
ok $((! $?)) "a folder without vigil's schema map is refused"
grep -q "holds no vigil_schema map: not a vigil pin folder, nothing removed" "$T_DIR/err"
ok $? "with a message saying why ($(cat "$T_DIR/err"))"
[ "$(ls "$OTHER" | tr '\n' ' ')" = "link_x vigil_like " ]
ok $? "and nothing in it is removed"
done_testing
