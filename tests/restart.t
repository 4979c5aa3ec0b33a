#!/usr/bin/env bash
# The ring and the programs are pinned: events produced while the agent is
# down wait in the kernel and are written out by the next agent. A pinned
# ring of another event schema is refused, not mixed, and so is a map that
# an agent of another version pinned; a pinned program of another build
# is replaced by the next agent's.
. "$(dirname "$0")/lib.sh"
plan 16

EV="$T_DIR/events.json"
start_agent -o "$EV" --poll-ms 20 --no-procfs || exit 1
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null

# While no agent runs: a process whose events must not be lost.
(cd "$T_DIR" && exec /bin/sh -c 'exit 3') &
P=$!
wait $P
[ -e "$T_PIN/link_process_exec" ]
ok $? "programs stay attached (pinned links) after the agent was killed"

start_agent -o "$EV" --poll-ms 20 --no-procfs || exit 1
grep -q resumed "$T_DIR/agent.err"
ok $? "the restarted agent says it resumed the pinned programs"
wait_for 5 event_seen "$EV" ".process_exit.process.pid == $P"
ok $? "events from while the agent was down are written out after restart"
is "$(jq -r --argjson p $P 'select(.process_exit.process.pid == $p) | .process_exit.status' "$EV")" 3 "with their content"
"$VIGILD" --pin-dir "$T_PIN" -o "$T_DIR/second.json" -d 1 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q "another vigild is running" "$T_DIR/err"
ok $? "a second agent on the same pins is refused (it would steal the first one's events)"
stop_agent

# An upgrade: link_process_exec runs another build's program (here one
# that writes nothing). The next agent puts this build's in its place,
# attached before the old one's pin is renamed over, and says so.
rm "$T_PIN/link_process_exec"
"$TOP/$BUILD/tests/pin_hook" "$TOP/$BUILD/tests/foreign_exec.bpf.o" test_foreign_exec "$T_PIN/link_process_exec"
ok $? "another build's exec hook pinned as link_process_exec"
start_agent -o "$EV.2" --poll-ms 20 --no-procfs || exit 1
said=$(grep -o '[a-z_]*: [0-9]* pinned programs\{0,1\} of another build replaced' "$T_DIR/agent.err")
[ -n "$said" ]
ok $? "the agent says it replaced it ($said)"
linked() { bpftool prog show id "$(bpftool link show pinned "$T_PIN/$1" -j | jq -r .prog_id)" -j | jq -r .name; }
is "$(linked link_process_exec)" process_exec "link_process_exec runs this build's program"
/bin/true restart-upgrade-marker &
M=$!
wait $M
wait_for 5 event_seen "$EV.2" ".process_exec.process.pid == $M"
ok $? "and an exec is seen again"
is "$(find "$T_PIN" -name '*__next' | wc -l)" 0 "no pin of the replacement is left aside"
stop_agent

# A map pinned by an agent of another version: the socket table as an
# earlier build made it (a hash of 2^20 entries, not preallocated).
rm "$T_PIN/vigil_socks"
bpftool map create "$T_PIN/vigil_socks" type hash key 8 value 72 entries 1048576 name vigil_socks flags 1
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" -d 1 --max-sockets 8192 2>"$T_DIR/err"
rc=$?
[ $rc -ne 0 ] && grep -q "pinned map $T_PIN/vigil_socks was made by another version.*vigil unpin" "$T_DIR/err" &&
	! grep -q "keeping the size" "$T_DIR/err"
ok $? "a pinned map of another version is refused by name, with the way out (its size is not taken first)"
# The same table with entries of another size (a field added).
rm "$T_PIN/vigil_socks"
bpftool map create "$T_PIN/vigil_socks" type array key 4 value 656 entries 512 name vigil_socks
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" -d 1 --max-sockets 8192 2>"$T_DIR/err"
rc=$?
[ $rc -ne 0 ] && grep -q "pinned map $T_PIN/vigil_socks was made by another version.*value 656 bytes" "$T_DIR/err" &&
	! grep -q "keeping the size" "$T_DIR/err"
ok $? "so is one whose entries changed size"

# A ring pinned by an agent of another schema.
bpftool map update pinned "$T_PIN/vigil_schema" key 0 0 0 0 value 99 0 0 0
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" -d 1 2>"$T_DIR/err"
rc=$?
[ $rc -ne 0 ] && grep -q "schema 99.*vigil unpin" "$T_DIR/err"
ok $? "a pinned ring of another schema is refused, with the way out ($(head -c 120 "$T_DIR/err"))"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null && [ ! -e "$T_PIN" ]
ok $? "vigil unpin removes the pins"

# The socket table is taken up front: --max-sockets sizes it (sets of 8
# sockets), and a pinned table keeps its size (a map cannot be resized).
sockets() { echo $(( $(bpftool map show pinned "$T_PIN/vigil_socks" -j | jq .max_entries) * 8 )); }
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" --max-sockets 4096 -d 1 2>"$T_DIR/err"
is "$(sockets) $(bpftool map show pinned "$T_PIN/vigil_socks_spill" -j | jq .max_entries)" "4096 1024" \
	"--max-sockets sizes the socket table (512 sets) and its spill (two entries a set)"
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" --max-sockets 8192 -d 1 2>"$T_DIR/err"
[ $? -eq 0 ] && [ "$(sockets)" = 4096 ] && grep -q "keeping the size of the pinned vigil_socks, 4096 (asked for 8192)" "$T_DIR/err"
ok $? "a pinned socket table keeps its size, and the agent says so"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
done_testing
