#!/usr/bin/env bash
# Who may speak for an agent stream (docs/stream.md, "What the collector
# trusts"): a type table that would index past the collector's tables is
# refused before any lookup, on a fresh collector too (heap state hid the
# crash); an identity (boot id, ring id) is bound to the address that proved
# it; an offset jump is a hole that a later hello or record inside it proves
# false; a forged jump in sequence numbers does not drop real records. Every
# real event arrives exactly once through all of it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
F="$TOP/tests/collector_forge.py"
OUT="$T_DIR/out.json"
plan 20

# A fresh collector, and the hostile peer first.
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --rebind-after 2 || exit 1
PORT=$COLL_PORT
is "$($H "$F" $PORT type0)" closed "a hello that declares type 0 is refused (fresh collector)"
is "$($H "$F" $PORT type200)" closed "a record of a type past the table is refused"
kill -0 $COLL_PID
ok $? "the collector is still running after both"
grep -q "bad entry in the hello's type table" "$T_DIR/c.err" &&
	grep -q 'event type out of range' "$T_DIR/c.err"
ok $? "both reasons are logged"

start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
line=$(grep -o "agent [^ ]* (boot [0-9a-f]*, ring [0-9]*, pid $AGENT_PID" "$T_DIR/c.err" | head -1)
BOOT=$(sed 's/.*boot \([0-9a-f]*\),.*/\1/' <<<"$line")
RING=$(sed 's/.*ring \([0-9]*\),.*/\1/' <<<"$line")
[ ${#BOOT} -eq 32 ] && [ -n "$RING" ]
ok $? "the agent's identity is in the collector's log (boot $BOOT, ring $RING)"
run_markers "ida$$" 1 50
wait_for 20 sh -c "grep -q '\"ida$$-50\"' '$OUT'"

# Another address may not take the identity while the agent is connected...
is "$($H "$F" $PORT forge 127.0.0.2 "$BOOT" "$RING" $((1 << 40)) $((1 << 50)) 10)" closed \
	"a forged hello from another address is refused while the agent is connected"
grep -q "127.0.0.2:[0-9]* claims agent .* which is connected from another address: refused" "$T_DIR/c.err"
ok $? "the refusal names the claimant and why"
# ... nor just after it left.
stop_agent
is "$($H "$F" $PORT forge 127.0.0.2 "$BOOT" "$RING" $((1 << 40)) $((1 << 50)) 10)" closed \
	"and within --rebind-after of its leaving"

# Past --rebind-after it may: the jump it claims is a hole, and the real
# agent's hello inside it proves it false. Events of the stopped agent wait
# in its pinned ring meanwhile.
sleep 2.5
run_markers "idb$$" 1 50
r=$($H "$F" $PORT forge 127.0.0.2 "$BOOT" "$RING" $((1 << 40)) $((1 << 50)) 10)
[[ $r == acked* ]]
ok $? "past --rebind-after the claim is taken ($r)"
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 30 sh -c "grep -q '\"idb$$-50\"' '$OUT'"
grep -q "inside the jump \[[0-9]*, $((1 << 40))) .* that jump was false" "$T_DIR/c.err"
ok $? "the real agent's hello proves the jump false (logged)"
check "events made while the identity was forged arrive, each once" -- markers_in_order "idb$$" 50 "$OUT"

# From the agent's own address a claim replaces its connection (an agent
# restarting does that): a jump in offsets and in sequence numbers, then the
# agent resumes below the jump and its records walk into the hole.
r=$($H "$F" $PORT forge 127.0.0.1 "$BOOT" "$RING" $((1 << 41)) $((1 << 60)) 10)
[[ $r == acked* ]]
ok $? "a claim from the agent's address replaces its connection ($r)"
run_markers "idc$$" 1 50
wait_for 30 sh -c "grep -q '\"idc$$-50\"' '$OUT'"
check "events after a forged offset and sequence jump arrive, each once" -- \
	markers_in_order "idc$$" 50 "$OUT"
check "events before all this were not taken twice" -- markers_in_order "ida$$" 50 "$OUT"

# The collector restarts on its state: nothing is doubled or dropped.
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID
missing=$(grep -o "agent [^ ]* (boot $BOOT, ring $RING): .* \([0-9]*\) missing in sequence" "$T_DIR/c.err" |
	sed 's/.* \([0-9]*\) missing in sequence/\1/')
[ -n "$missing" ] && [ "$missing" -lt 1000 ]
ok $? "numbers a false stream skipped are not counted missing (counted: $missing)"
start_collector c2 "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" --rebind-after 1 || exit 1
run_markers "idd$$" 1 50
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 30 sh -c "grep -q '\"idd$$-50\"' '$OUT'"
check "after a collector restart, events arrive each once" -- markers_in_order "idd$$" 50 "$OUT"
stop_agent
ok $? "the agent stops cleanly"

# A hole outlives a collector restart: a jump forged just before it is
# proven false by the agent's hello to the new collector.
sleep 1.5
run_markers "ide$$" 1 50
r=$($H "$F" $PORT forge 127.0.0.2 "$BOOT" "$RING" $((1 << 42)) $((1 << 61)) 10)
[[ $r == acked* ]]
ok $? "a jump claimed just before a collector restart is taken ($r)"
kill -TERM $COLL_PID; wait $COLL_PID
start_collector c3 "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" || exit 1
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
wait_for 30 sh -c "grep -q '\"ide$$-50\"' '$OUT'"
grep -q "inside the jump \[[0-9]*, $((1 << 42))) .* that jump was false" "$T_DIR/c3.err"
ok $? "the restarted collector kept the hole: the agent's hello proves the jump false"
check "events made around the restart arrive, each once" -- markers_in_order "ide$$" 50 "$OUT"
stop_agent
done_testing
