#!/usr/bin/env bash
# A TLS handshake flood from many addresses (issue 38, point 4;
# docs/stream.md, "TLS"). Eight loopback addresses (127.0.0.2-9) each start
# full handshakes at 25 a second for 6 s (capped here: 1200 in all), within
# --max-handshakes-per-addr; before, nothing bounded them together and each
# cost the collector a key exchange and a signature. With --max-handshakes
# 20, at most 20 a second (bursts of 40) start, and strangers get at most
# half the burst: an agent that was accepted before from 127.0.0.1 streams
# during the flood with little delay. The same flood against
# --max-handshakes 0 (no global bound) is measured for comparison: the
# collector's CPU time and the agent's delay are in the diagnostics.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/tls_lib.sh"
H=/usr/bin/python3
C=$TLS_CLIENT
plan 9
ADDRS="2 3 4 5 6 7 8 9"
RATE=25
SECS=6
ca ca && cert ca collector vigil-collector 'IP:127.0.0.1' && cert ca node-a node-a 'DNS:node-a' &&
	cert ca node-f node-f 'DNS:node-f'
ok $? "test certificates made"
TLS=(--tls-cert "$P/collector.pem" --tls-key "$P/collector.key" --tls-ca "$P/ca.pem")

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME BUDGET: a collector with --max-handshakes BUDGET; node-a streams
# from 127.0.0.1 first, then the flood; during it node-a connects 3 times,
# each timed from its connect to its ack. Sets FLOOD_DONE (handshakes the flood completed), CPU (the
# collector's CPU seconds during the flood), WORST (node-a's slowest
# connection, s) and GOT (node-a's connections acknowledged).
run() {
	local name=$1 budget=$2 c0 c1 i a pids=() boot r
	start_collector "$name" "" --listen tls://127.0.0.1:0 "${TLS[@]}" -o "$T_DIR/$name.json" \
		--max-handshakes "$budget" || return 1
	boot=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
	[ "$($H "$C" $COLL_PORT "$P" good node-a node-a "$boot" 1 1)" = "acked 88" ] ||
		diag "$name: node-a was not accepted before the flood"
	c0=$(cpu_ticks $COLL_PID)
	for a in $ADDRS; do
		TLS_SRC=127.0.0.$a timeout $((SECS + 20)) $H "$C" $COLL_PORT "$P" floodfor node-f $RATE $SECS \
			>"$T_DIR/$name.flood.$a" 2>/dev/null &
		pids+=($!)
	done
	on_exit "kill ${pids[*]} 2>/dev/null"
	sleep 1.5
	WORST=0 GOT=0
	for i in 2 3 4; do
		r=$(TLS_TIMED=1 $H "$C" $COLL_PORT "$P" good node-a node-a "$boot" $i 1 2>"$T_DIR/took")
		[ "$r" = "acked 88" ] && GOT=$((GOT + 1))
		WORST=$(awk -v w="$WORST" '{print ($2 > w ? $2 : w)}' "$T_DIR/took")
		sleep 0.5
	done
	wait "${pids[@]}"
	c1=$(cpu_ticks $COLL_PID)
	CPU=$(echo "$c0 $c1 $(getconf CLK_TCK)" | awk '{printf "%.2f", ($2 - $1) / $3}')
	FLOOD_DONE=$(cat "$T_DIR/$name".flood.* | awk '{s += $2} END {print s + 0}')
	diag "$name (--max-handshakes $budget): the flood completed $FLOOD_DONE of $(cat "$T_DIR/$name".flood.* | awk '{s += $4} END {print s}') handshakes; the collector used $CPU s of CPU in about $SECS s; node-a's slowest connection took $WORST s ($GOT of 3 acknowledged)"
	kill -TERM $COLL_PID
	wait $COLL_PID
}

run free 0 || exit 1
FREE_CPU=$CPU FREE_DONE=$FLOOD_DONE
run bounded 20 || exit 1
[ "$FLOOD_DONE" -le $((20 * (SECS + 1) + 40)) ]
ok $? "with --max-handshakes 20 the flood completes at most its rate and burst ($FLOOD_DONE in ${SECS} s; $FREE_DONE without)"
[ "$FLOOD_DONE" -lt "$FREE_DONE" ]
ok $? "fewer than without the bound"
is "$GOT" 3 "node-a, accepted before, streams during the flood every time"
awk -v w="$WORST" 'BEGIN {exit !(w < 2)}'
ok $? "its slowest connection took under 2 s ($WORST s)"
awk -v a="$CPU" -v b="$FREE_CPU" 'BEGIN {exit !(a < b)}'
ok $? "the collector spent less CPU on the flood ($CPU s, $FREE_CPU s without)"
grep -q "refusing TLS handshakes from addresses not seen before: more than 20 a second from all (--max-handshakes" "$T_DIR/bounded.err"
ok $? "the refusal is logged, naming the option"
grep -q "stopping: .* [1-9][0-9]* past --max-handshakes; [0-9]* started, [1-9][0-9]* of them by addresses seen before" "$T_DIR/bounded.err"
ok $? "the stop line counts refusals and the handshakes of agents seen before" ||
	grep stopping "$T_DIR/bounded.err" | sed 's/^/#   /'
# A usage error names the option.
timeout 10 "$COLLECTOR" --listen tls://127.0.0.1:0 "${TLS[@]}" --max-handshakes x 2>"$T_DIR/usage.err"
[ $? -eq 2 ] && grep -q -- "--max-handshakes" "$T_DIR/usage.err"
ok $? "a bad --max-handshakes is a usage error naming it"
