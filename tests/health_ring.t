#!/usr/bin/env bash
# The health ring: heartbeats, run counts and the blind record are written
# to a small ring of their own, so that a main ring filled while vigild is
# away does not take them. vigild is SIGKILLed by a test process, a capped
# exec storm (one thread, 8 bursts of 100 execs a quarter second apart,
# 10 s at most) fills a 64 KiB main ring meanwhile, and after the restart every heartbeat of the stretch reaches
# the collector (beats and health_seq without a gap), with a blind record
# from the last tick before the kill to the first after the restart. Then
# one of vigil's links is removed: the next run counts show its program
# did not run, while the others did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 19
OUT="$T_DIR/out.json"
STORM="$TOP/$BUILD/bench/proc_storm"
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --export-file-max-size-mb 0 --status-file "$T_DIR/cstatus" || exit 1
agent() {
	start_agent --no-procfs --poll-ms 20 --heartbeat-interval 1 --ring-size 65536 \
		--send "tcp://127.0.0.1:$COLL_PORT" "$@"
}
beats() { jq -r 'select(.vigil_heartbeat) | .vigil_heartbeat.beats' "$OUT"; }
status() { "$VIGIL" --pin-dir "$T_PIN" status 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
secs() { date -d "$1" +%s.%N; }

agent || exit 1
wait_for 20 grep -q '"vigil_heartbeat"' "$OUT"
ok $? "heartbeats arrive while the agent reads"
cp /bin/kill "$T_DIR/vt-killer"
KILL_AT=$(date +%s.%N)
"$T_DIR/vt-killer" -9 $AGENT_PID &
wait $!
wait $AGENT_PID 2>/dev/null
timeout 10 sh -c "for i in 1 2 3 4 5 6 7 8; do '$STORM' exec 1 100 /bin/true; sleep 0.25; done" >/dev/null
sleep 4
FULL=$(status lost_ring_full)
[ "${FULL:-0}" -gt 0 ]
ok $? "the main ring filled while the agent was away ($FULL events lost)"
[ "$(status health_waiting_bytes)" -gt 0 ]
ok $? "the heartbeats wait in the health ring ($(status health_waiting_bytes) bytes)"
mv "$T_DIR/agent.err" "$T_DIR/agent0.err"
agent || exit 1
wait_for 20 grep -q '"vigil_blind"' "$OUT"
ok $? "after the restart, the blind record reaches the collector"
sleep 2	# a heartbeat or two of the agent that reads again

# None lost: the heartbeats' numbers and the health records' sequence.
B=$(beats | sort -n)
FIRST=$(head -1 <<<"$B"); LAST=$(tail -1 <<<"$B")
is "$(wc -l <<<"$B")" "$((LAST - FIRST + 1))" "every heartbeat from $FIRST to $LAST reached the collector"
is "$(beats | sort -n | uniq -d | wc -l)" 0 "each once"
H=$(jq -r 'select(.health_seq) | .health_seq' "$OUT" | sort -n)
is "$(wc -l <<<"$H")" "$(( $(tail -1 <<<"$H") - $(head -1 <<<"$H") + 1 ))" \
	"the health sequence has no gap ($(head -1 <<<"$H") to $(tail -1 <<<"$H"))"
is "$(status heartbeats_lost):$(status health_records_lost)" "0:0" "the kernel counted no heartbeat or health record lost"
STILL=$(jq -c 'select(.vigil_heartbeat.reader_still_since)' "$OUT" | wc -l)
[ "$STILL" -ge 4 ]
ok $? "the heartbeats written while it was away are among them ($STILL)"

# When user space was down, from the blind record, to a tick (1 s): from
# the first tick that found the reader gone (the one before saw it read)
# to the first that found it reading again (the restart itself takes a
# few seconds: loading, the verifier).
BL=$(jq -c 'select(.vigil_blind) | .vigil_blind' "$OUT" | tail -1)
FROM=$(secs "$(jq -r .from <<<"$BL")"); TO=$(secs "$(jq -r .to <<<"$BL")")
awk -v f="$FROM" -v k="$KILL_AT" 'BEGIN { exit !(f >= k - 1.1 && f <= k + 1.1) }'
ok $? "the blind stretch starts within a tick of the kill ($FROM, killed at $KILL_AT)"
READ_AT=$(secs "$(grep -m1 -oE '^[^ ]* vigild: (attached|resumed)' "$T_DIR/agent.err" | cut -d' ' -f1)")
awk -v t="$TO" -v r="$READ_AT" 'BEGIN { exit !(t >= r - 0.1 && t <= r + 1.1) }'
ok $? "and ends within a tick of the restarted agent reading ($TO, reading at $READ_AT)"

# vigil status and the collector say the same, the collector from the
# stream, in its status file.
BFROM=$(jq -r .from <<<"$BL"); BTO=$(jq -r .to <<<"$BL")
# (each turns the node's clock into wall time itself: the same to a ms)
SFROM=$(status blind_last_from); STO=$(status blind_last_to)
awk -v a="$(secs "$SFROM")" -v b="$FROM" -v c="$(secs "$STO")" -v d="$TO" \
	'function abs(x) { return x < 0 ? -x : x } BEGIN { exit !(abs(a - b) < 0.001 && abs(c - d) < 0.001) }'
ok $? "vigil status gives the blind stretch's from and to ($SFROM to $STO)"
wait_for 5 grep -q "user space blind [0-9]* times, last from $BFROM to $BTO" "$T_DIR/cstatus"
ok $? "the collector's status names the blind stretch, $BFROM to $BTO" ||
	sed 's/^/#   /' "$T_DIR/cstatus"
grep -q "heartbeats [0-9]*, 0 missing, health records missing 0, last heartbeat [0-9] s ago;" "$T_DIR/cstatus"
ok $? "and that no heartbeat or health record went missing" || sed 's/^/#   /' "$T_DIR/cstatus"

# A program that stops running shows 0 runs in the next heartbeat's counts.
rm "$T_PIN/link_process_fork"	# the pin held the link: this detaches the program
sleep 1.2	# the tick that counts the forks before the removal
N0=$(jq -c 'select(.vigil_prog_runs)' "$OUT" | wc -l)
timeout 5 "$STORM" exec 1 50 /bin/true >/dev/null
# The runs counted since then, over as many ticks as the storm took (a
# slow machine spreads it over several).
runs_since() { jq -s --arg p "$1" --argjson n "$N0" \
	'[.[] | select(.vigil_prog_runs)] | .[$n:] | map(.vigil_prog_runs.runs[$p]) | add // 0' "$OUT"; }
since_ge() { [ "$(runs_since "$1")" -ge "$2" ]; }
wait_for $((10 * T_SLOW)) since_ge process_exec 50
is "$(runs_since process_fork)" 0 "after its link was removed, process_fork ran 0 times"
since_ge process_exec 50
ok $? "while process_exec ran for the 50 execs ($(runs_since process_exec))"

# vigil drain to JSON takes the health ring too (seq 0: no place in the
# main stream), so that an unpin after it loses no heartbeat.
stop_agent
sleep 2.5
B4=$(status health_waiting_bytes)
"$VIGIL" --pin-dir "$T_PIN" drain --export-format vigil -o "$T_DIR/drained.json" >/dev/null 2>&1
D=$(jq -c 'select(.vigil_heartbeat and .seq == 0 and .health_seq > 0)' "$T_DIR/drained.json" | wc -l)
[ "$D" -ge 2 ]
ok $? "vigil drain writes the heartbeats waiting in the health ring ($D)"
# (one tick may write again meanwhile: a heartbeat, a run count and, as
# the drain moved the reader, a blind record: 464 bytes)
AF=$(status health_waiting_bytes)
[ "$B4" -ge 800 ] && [ "$AF" -le 464 ]
ok $? "and empties it ($B4 bytes before, $AF after)"

# An agent that streams but whose heartbeat stopped (--heartbeat-interval 0
# cancels the timer): the collector calls the node silent after 3 intervals.
mv "$T_DIR/agent.err" "$T_DIR/agent1.err"
agent --heartbeat-interval 0 || exit 1
wait_for 10 grep -q "connected from .*(silent: no heartbeat for 3 intervals of 1 s)" "$T_DIR/cstatus"
ok $? "a connected agent without heartbeats is called silent by the collector" ||
	sed 's/^/#   /' "$T_DIR/cstatus"
done_testing
