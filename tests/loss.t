#!/usr/bin/env bash
# No loss is silent: with a ring far too small for the load, the events BPF
# could not reserve are counted, reported as a vigil_loss event, and equal
# the gaps in the sequence numbers the agent received.
. "$(dirname "$0")/lib.sh"
plan 5

EV="$T_DIR/events.json"
# One page of ring, and an agent that looks only every 300 ms (no early wakeup).
start_agent -o "$EV" --ring-size 4096 --poll-ms 300 --wakeup-bytes 4096 --no-procfs || exit 1
for _ in $(seq 400); do /bin/true; done   # bounded: 400 short processes
sleep 1.5                                 # one loss check (every second) at least
"$VIGIL" --pin-dir "$T_PIN" status >"$T_DIR/status"
stop_agent

read -r GAPS LOST < <(sed -n 's/.*stopped: [0-9]* records, \([0-9]*\) gaps.*counted \([0-9]*\) ring-full.*/\1 \2/p' "$T_DIR/agent.err")
diag "gaps=$GAPS ring_full=$LOST"
[ "${LOST:-0}" -gt 0 ]
ok $? "the tiny ring overflowed and BPF counted it ($LOST)"
is "$GAPS" "$LOST" "gaps in sequence numbers equal the losses BPF counted"
STATUS_LOST=$(awk '$1 == "lost_ring_full" {print $2}' "$T_DIR/status")
[ "${STATUS_LOST:-0}" -gt 0 ]
ok $? "vigil status shows the loss count ($STATUS_LOST)"
event_seen "$EV" '.vigil_loss.ring_full > 0'
ok $? "a vigil_loss event tells the stream's readers"
LAST=$(jq -r 'select(.vigil_loss) | .vigil_loss.ring_full' "$EV" | tail -1)
[ "$LAST" -le "$LOST" ] && [ "$LAST" -gt 0 ]
ok $? "the last loss event's count ($LAST) is no more than the final count ($LOST)"
done_testing
