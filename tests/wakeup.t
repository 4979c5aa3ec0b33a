#!/usr/bin/env bash
# BPF wakes the agent when the bytes waiting in the ring cross
# --wakeup-bytes (and each further multiple), and not for less. With a poll
# timer of a minute, an event below the threshold stays in the ring, and a
# burst is taken from the ring at once only through those wakeups. (What
# the ring holds is read with vigil status; the JSON file sink buffers its
# output, so the file is not the measure.)
. "$(dirname "$0")/lib.sh"
plan 4

EV="$T_DIR/events.json"
pending() { "$VIGIL" --pin-dir "$T_PIN" status | awk '$1 == "ring_pending" {print $2}'; }
below() { [ "$(pending)" -lt "$1" ]; }

start_agent -o "$EV" --poll-ms 60000 --wakeup-bytes 65536 --no-procfs || exit 1
sleep 1	# the start-up's own events; then the agent sleeps
P0=$(pending)

# 1. One process: a few hundred bytes, below the threshold.
/bin/sh -c true "one-$T_ID"
sleep 1.5
P1=$(pending)
[ "$P1" -gt "$P0" ] && [ "$P1" -lt 65536 ]
ok $? "one process's events wait in the ring (pending $P0 -> $P1 bytes)"

# 2. A burst (bounded: 300 short processes, about 300 KiB of events).
for _ in $(seq 300); do /bin/sh -c true "burst-$T_ID"; done
wait_for 3 below 65536
ok $? "a burst past the threshold wakes the agent, which empties the ring to below it ($(pending) bytes left)"

stop_agent
grep -q "burst-$T_ID" "$EV"
ok $? "the burst's events are in the output"
grep -q "one-$T_ID" "$EV"
ok $? "and so is the event that waited"
done_testing
