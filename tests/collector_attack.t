#!/usr/bin/env bash
# A real collector and a real agent under hostile peers (issue 16): random
# bytes, mutated hellos, byte-at-a-time, idle and hello-then-idle
# connections, a reconnect storm, random datagrams, forged identities
# filling their process caches with long execs, and forgeries of the real
# agent's own identity, over UDP in the mix and over TCP after it
# (tests/collector_attack.py, from 127.0.0.2 and up; the agent is on
# 127.0.0.1). Three runs, each with a fresh collector (heap state hides
# bugs): A, the agent first, then the mix, then the forgeries; B, the mix
# started before the agent; C, the forgeries started before the agent.
# Each time: the collector stays up and exits cleanly, its peak RSS stays
# under the bound docs/stream.md ("Memory") gives for its options, and
# every marker exec of the real agent is written exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
H=/usr/bin/python3
ATTACK="$TOP/tests/collector_attack.py"
MAX_AGENTS=16
MAX_CONNS=64
SECS=${ATTACK_SECS:-12}	# per hostile phase
N=200			# markers per phase
# docs/stream.md, "Memory": base + agents x (process cache + tables) +
# connections x (buffer + struct), in KiB.
BOUND=$((8192 + MAX_AGENTS * (1024 + 80) + MAX_CONNS * 260))
plan 18
BOOT=$(tr -d '-' </proc/sys/kernel/random/boot_id)
asan=0
ldd "$COLLECTOR" | grep -q libasan && asan=1

collector() { # NAME: a fresh collector with its own export file
	OUT="$T_DIR/$1.json"
	start_collector "$1" "" --listen tcp://127.0.0.1:0 --listen udp://127.0.0.1:0 -o "$OUT" \
		--max-agents $MAX_AGENTS \
		--max-conns $MAX_CONNS --hello-timeout 2 --frame-timeout 2 \
		--export-file-max-size-mb 0 || exit 1
	PORT=$COLL_PORT
	CERR="$T_DIR/$1.err"
	UPORT=$(grep -o 'listening on udp://[^ ]*' "$CERR" | tail -1 | sed 's/.*://')
}
agent() { # the real agent, on this test's pins, sending to $PORT
	[ -f "$T_DIR/agent.err" ] && cat "$T_DIR/agent.err" >>"$T_DIR/agents.err"
	start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
	wait_for 20 grep -q "boot $BOOT, ring .* connected" "$CERR"
}
# markers TAG: N marker execs over about SECS/2 seconds, 10 at a time.
markers() {
	local i
	local pause
	pause=$(awk -v s="$SECS" -v n=$N 'BEGIN { print s / 2 / (n / 10) }')
	for ((i = 1; i <= N; i += 10)); do run_markers "$1" $i $((i + 9)); sleep "$pause"; done
}
# exactly_once TAG FILE: each of TAG's markers 1..N once, whatever the order
# (grep first: the forgers' execs make the file tens of MB).
exactly_once() {
	[ "$(marker_list "$1" <(grep -F -- "\"$1-" "$2") | sort -n | tr '\n' ' ')" = \
	  "$(seq 1 $N | tr '\n' ' ')" ]
}
arrived() { wait_for "${2:-20}" seen_at_least "$1" $N "$OUT"; }
# The collector's peak RSS, under the bound (not under ASan: its shadow
# memory and quarantine are not the collector's).
rss_check() {
	local hwm
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$COLL_PID/status)
	diag "$1: collector peak RSS $hwm KiB, bound $BOUND KiB"
	if [ $asan = 1 ]; then
		echo "ok $((_t_n += 1)) # SKIP RSS under ASan"
	else
		[ "$hwm" -le $BOUND ]
		ok $? "$1: the collector's peak RSS stays under the documented bound"
	fi
}
stop_collector() { # NAME: it exits, and cleanly (no sanitizer report)
	kill -TERM $COLL_PID
	wait $COLL_PID
	ok $? "$1: the collector stops cleanly"
}

# A: the agent first, then the hostile mix, then forgeries of its identity.
collector a
agent
RING=$(grep -o "boot $BOOT, ring [0-9]*" "$CERR" | head -1 | awk '{print $4}')
OFF=$(grep "boot $BOOT, ring $RING" "$CERR" | grep -o 'at offset [0-9]*' | tail -1 | awk '{print $3}')
[ -n "$RING" ]
ok $? "A: the real agent connected (boot $BOOT, ring $RING)"
$H "$ATTACK" mix $PORT $SECS $UPORT $BOOT $RING >"$T_DIR/mix_a.out" & MIX=$!
$H "$ATTACK" memory $PORT 6 1100 $SECS >/dev/null & MEM=$!
on_exit "kill $MIX $MEM"
sleep 2
markers "a1$$"
wait $MIX $MEM
diag "A: hostile mix: $(cat "$T_DIR/mix_a.out")"
arrived "a1$$"
check "A, mix after the agent: every marker written exactly once" -- exactly_once "a1$$" "$OUT"
kill -0 $COLL_PID
ok $? "A: the collector is up after the mix"
$H "$ATTACK" forged $PORT $SECS $BOOT $RING ${OFF:-0} >"$T_DIR/forged_a.out" & FORGE=$!
on_exit "kill $FORGE"
sleep 1
markers "a2$$"
wait $FORGE
arrived "a2$$" 10
check "A, forged identity after the agent: every marker written exactly once" -- \
	exactly_once "a2$$" "$OUT"
kill -0 $COLL_PID
ok $? "A: the collector is up after $(awk '{print $2}' "$T_DIR/forged_a.out") forged hellos"
# One host takes every connection slot; another host's agent still gets in.
$H "$ATTACK" crowd $PORT $MAX_CONNS 4 >"$T_DIR/crowd.out" & CROWD=$!
on_exit "kill $CROWD"
sleep 2.5
GOOD=$($H "$ATTACK" good $PORT 50 127.0.0.12)
[ "$GOOD" = "acked $((50 * 88))" ]
ok $? "A: one host holding every slot and stream does not lock another out ($GOOD of $((50 * 88)))"
wait $CROWD
rss_check A
stop_agent
stop_collector A

# B: the hostile mix before the agent.
collector b
$H "$ATTACK" mix $PORT $SECS $UPORT $BOOT $RING >"$T_DIR/mix_b.out" & MIX=$!
$H "$ATTACK" memory $PORT 6 1100 $SECS >/dev/null & MEM=$!
on_exit "kill $MIX $MEM"
sleep 3
agent
ok $? "B: the real agent connects while the mix runs"
markers "b1$$"
wait $MIX $MEM
diag "B: hostile mix: $(cat "$T_DIR/mix_b.out")"
arrived "b1$$"
check "B, mix before the agent: every marker written exactly once" -- exactly_once "b1$$" "$OUT"
kill -0 $COLL_PID
ok $? "B: the collector is up after the mix"
rss_check B
stop_agent
stop_collector B

# C: forgeries of the agent's identity before the agent (same pins: same
# ring id), then the agent and its markers while they go on.
collector c
$H "$ATTACK" forged $PORT $SECS $BOOT $RING ${OFF:-0} >"$T_DIR/forged_c.out" & FORGE=$!
on_exit "kill $FORGE"
sleep 3
agent
wait_for 10 grep -q "boot $BOOT, ring $RING, pid $AGENT_PID" "$CERR"
ok $? "C: the real agent connects while its identity is forged"
markers "c1$$"
wait $FORGE
arrived "c1$$" 10
check "C, forged identity before the agent: every marker written exactly once" -- \
	exactly_once "c1$$" "$OUT"
kill -0 $COLL_PID
ok $? "C: the collector is up after $(awk '{print $2}' "$T_DIR/forged_c.out") forged hellos"
rss_check C
stop_agent
stop_collector C
done_testing
