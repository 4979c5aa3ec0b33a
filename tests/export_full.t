#!/usr/bin/env bash
# A full disk under the JSON output: what cannot be written waits in the
# ring and is written once there is room, each line whole, once; what the
# ring cannot hold meanwhile is dropped, counted and said (the log, vigil
# status, a vigil_output_loss line, the exit status). /dev/full: never a
# silent exit 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 17
FS="$T_DIR/fs"
mkdir "$FS"
# 16 MiB: room for what else the node runs meanwhile (the agent writes
# every process's events); fill() takes whatever room is left.
mount -t tmpfs -o size=16m vigil-test "$FS" || exit 1
on_exit "umount -l '$FS'"
EV="$FS/ev.json"
fill() { dd if=/dev/zero of="$FS/filler" bs=4k 2>/dev/null; sync; }
lines_whole() { jq -c . "$EV" >/dev/null 2>&1; }

# 1. A ring big enough to hold what waits: nothing is lost.
start_agent -o "$EV" --no-procfs --poll-ms 20 --ring-size 4194304 || exit 1
run_markers "A$$" 1 50
wait_for 10 sh -c "grep -q '\"A$$-50\"' '$EV'"
ok $? "events are written while there is room"
fill
run_markers "B$$" 1 100
wait_for 10 grep -q 'local output: cannot write events (No space left on device)' "$T_DIR/agent.err"
ok $? "the full disk is said in the log"
check "a write cut short leaves no torn line" -- lines_whole
rm -f "$FS/filler"
run_markers "C$$" 1 50
wait_for 20 sh -c "grep -q '\"C$$-50\"' '$EV'"
ok $? "once there is room the agent writes again"
for t in A B C; do
	n=$([ $t = B ] && echo 100 || echo 50)
	check "the $t events are all there, once each, in order" -- markers_in_order "$t$$" $n "$EV"
done
check "every line is whole" -- lines_whole
stop_agent
! grep -q 'vigil_output_loss' "$EV" && ! grep -q 'local output lost events' "$T_DIR/agent.err"
ok $? "nothing was dropped"

# 2. A small ring: what it cannot hold while the disk is full is dropped,
# and every sequence number is either in the output or in a loss line.
rm -f "$EV"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
start_agent -o "$EV" --no-procfs --poll-ms 20 --ring-size 65536 || exit 1
fill
run_markers "D$$" 1 600
rm -f "$FS/filler"
run_markers "E$$" 1 50
wait_for 20 sh -c "grep -q '\"E$$-50\"' '$EV'"
check "after a loss the events still come, once each, in order" -- markers_in_order "E$$" 50 "$EV"
check "every line is whole" -- lines_whole
"$VIGIL" --pin-dir "$T_PIN" status >"$T_DIR/status"
[ "$(awk '$1 == "lost_output" {print $2}' "$T_DIR/status")" -gt 0 ]
ok $? "vigil status counts what the output dropped ($(grep lost_output "$T_DIR/status"))"
# Each loss line names the sequence numbers it spans: none of them is in
# the output, and the lines together count what vigil status counts.
not_written() {
	jq -r 'if .vigil_output_loss then "L \(.vigil_output_loss.first_seq) \(.vigil_output_loss.last_seq)"
		elif .seq then "S \(.seq)" else empty end' "$EV" |
	awk '$1 == "S" { s[$2] = 1 } $1 == "L" { lo[++n] = $2; hi[n] = $3 }
	     END { for (i = 1; i <= n; i++) for (q = lo[i]; q <= hi[i]; q++) if (q in s) { print "# written and lost: " q; exit 1 } }'
}
grep -q vigil_output_loss "$EV"
ok $? "the output says where it lost events (a vigil_output_loss line)"
check "no sequence number a loss line names is in the output" -- not_written
is "$(jq -s '[.[] | .vigil_output_loss.records // 0] | add' "$EV")" \
	"$(awk '$1 == "lost_output" {print $2}' "$T_DIR/status")" "the loss lines count what vigil status counts"
kill -TERM $AGENT_PID; wait $AGENT_PID; rc=$?
[ $rc -eq 1 ] && grep -q 'local output lost events: dropped [1-9]' "$T_DIR/agent.err"
ok $? "the agent says what it dropped and exits 1 (status $rc)"

# 3. /dev/full: never exit 0 claiming nothing lost.
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
"$VIGILD" --pin-dir "$T_PIN" -o /dev/full --no-procfs --ring-size 65536 -d 2 2>"$T_DIR/full.err" &
pid=$!
sleep 0.5
run_markers "F$$" 1 300
wait $pid; rc=$?
[ $rc -ne 0 ] && grep -q 'local output lost events' "$T_DIR/full.err"
ok $? "-o /dev/full: exit status $rc, and the loss is said ($(tail -1 "$T_DIR/full.err"))"
done_testing
