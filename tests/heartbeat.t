#!/usr/bin/env bash
# The node says when it was blind: a BPF timer writes heartbeats whether or
# not vigild runs; vigild SIGKILLed by a test process and restarted later,
# the collector gets the heartbeats written meanwhile (the reader standing
# still) and one blind record as long as the agent was away, and `vigil
# status` says how long.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 11
OUT="$T_DIR/out.json"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --export-file-max-size-mb 0 || exit 1
agent() { start_agent --no-procfs --poll-ms 20 --heartbeat-interval 1 --send "tcp://127.0.0.1:$COLL_PORT" "$@"; }
# A heartbeat that finds the reader keeping up.
reading() { jq -e -n '[inputs | select(.vigil_heartbeat and (.vigil_heartbeat.reader_still_since == null))] | length > 0' "$OUT" >/dev/null 2>&1; }

agent || exit 1
wait_for 20 reading
ok $? "heartbeats arrive while the agent reads"
BEFORE=$(jq -c 'select(.vigil_blind)' "$OUT" | wc -l)
cp /bin/kill "$T_DIR/vt-killer"
KILLED=$AGENT_PID
"$T_DIR/vt-killer" -9 $AGENT_PID &	# a test process, not the shell that started it
KILLER=$!
wait $KILLER
wait $AGENT_PID 2>/dev/null
DOWN=5
sleep $DOWN
"$VIGIL" --pin-dir "$T_PIN" status >"$T_DIR/status.down" 2>&1
NOW_MS=$(awk '$1 == "blind_now_ms" { print $2 }' "$T_DIR/status.down")
[ "${NOW_MS:-0}" -ge $(((DOWN - 2) * 1000)) ]
ok $? "while the agent is away, vigil status says the reader stands still (blind_now_ms $NOW_MS)"
mv "$T_DIR/agent.err" "$T_DIR/agent0.err"
agent || exit 1
wait_for 20 sh -c "jq -c 'select(.vigil_blind)' '$OUT' | wc -l | grep -qv '^$BEFORE\$'"
ok $? "after the restart, a blind record reaches the collector"
B=$(jq -c 'select(.vigil_blind) | .vigil_blind' "$OUT" | tail -1)
D=$(jq -r .duration_ns <<<"$B")
[ "$D" -ge $((DOWN * 1000000000)) ] && [ "$D" -le $(((DOWN + 15 * T_SLOW) * 1000000000)) ]
ok $? "it is as long as the agent was away: ${D} ns (away ${DOWN} s, plus the restart)"
[ "$(jq -r .ticks <<<"$B")" -ge $((DOWN - 1)) ]
ok $? "the ticks the reader stood still: $(jq -r .ticks <<<"$B")"
STILL=$(jq -c 'select(.vigil_heartbeat.reader_still_since)' "$OUT" | wc -l)
[ "$STILL" -ge $((DOWN - 1)) ]
ok $? "the heartbeats written while it was away reached the collector ($STILL)"
"$VIGIL" --pin-dir "$T_PIN" status >"$T_DIR/status" 2>&1
LAST=$(awk '$1 == "blind_last_ms" { print $2 }' "$T_DIR/status")
[ "${LAST:-0}" -ge $((DOWN * 1000)) ]
ok $? "vigil status shows the last blind stretch (blind_last_ms $LAST)"
is "$(awk '$1 == "blind_now_ms" { print $2 }' "$T_DIR/status")" 0 "and that the reader reads now"

# The kill, recorded from BPF while the agent died, names the killer.
T=$(jq -c --argjson p $KILLER 'select(.vigil_tamper.process.pid == $p) | .vigil_tamper' "$OUT")
is "$(jq -r .signal <<<"$T")" 9 "a tamper record names the SIGKILL"
is "$(jq -r .process.binary <<<"$T")" "$T_DIR/vt-killer" "and the killer's binary"
is "$(jq -r .agent_pid <<<"$T")" "$KILLED" "and the agent it was sent to"
done_testing
