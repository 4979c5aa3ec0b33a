#!/usr/bin/env bash
# Cost of watching TCP: a connect/transfer/close storm over loopback inside a
# network namespace made for it (bench/net_storm.c: one thread, rate-capped),
# timed without the agent, with it (per-event mode) and with it in
# --report-only mode, in interleaved rounds; medians compared (target: ratio
# at most 1.05). Also what each mode ships per connection: events, JSON
# bytes, ring bytes (the storm's own records: its namespace, its process).
# ROUND_TRIPS > 0 adds that many requests and responses of BYTES each way to
# every connection (keep-alive I/O: what the send and receive hooks cost).
# A storm is capped at CAP connections/s (default 50000): a storm that ran
# at its cap (slept for it) measures the cap, not the agent, so when any did
# the comparison is of CPU per connection (the storm's own user+system time
# plus the agent's) instead of wall time, and the output says so. CAP=0
# lifts the cap (storms as fast as the machine goes).
# COMPARE=DIR also runs, in every round, the agent that build directory
# holds (a change's parent, say) in both modes, and prints this build's
# storm times against it, paired by round: a change's cost, which separate
# runs of this script (3 % apart here) cannot show. AGENT_ARGS are added
# to this build's agent, COMPARE_ARGS to the compared one: COMPARE=build
# COMPARE_ARGS='--ring-size 2097152' weighs a setting the same way.
#   bench/net.sh [CONNECTIONS_PER_ROUND] [BYTES] [ROUNDS] [ROUND_TRIPS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
N=${1:-10000}
BYTES=${2:-1000}
ROUNDS=${3:-15}
TRIPS=${4:-0}
# Storms per mode in a round, their mean the round's figure: an agent's
# start costs seconds, a storm half of one, and single storms differ by
# 5 % or more here.
STORMS=${STORMS:-3}
CAP=${CAP-50000}
RATE=$CAP; [ "$CAP" = 0 ] && RATE=1000000000
# The storm runs on CPU 1; the agent on CPU 0, the core the storm leaves
# free (as an operator would give it, with CPUAffinity= in its unit).
# AGENT_CPUS= (empty) lets the scheduler place it: then it may run on the
# storm's core.
AGENT_CPUS=${AGENT_CPUS-0}
COMPARE=${COMPARE-}
AGENT_ARGS=${AGENT_ARGS-}
COMPARE_ARGS=${COMPARE_ARGS-}
NS=vigil-bench-net-$$
PIN=/sys/fs/bpf/vigil-bench-net-$$
OUT=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench-net.XXXX")
AGENT=
cleanup() {
	bench_net_teardown
	rm -rf "$OUT"
}
trap cleanup EXIT


# Each storm's namespace inode and pid (which names its process reports)
# are listed in $OUT/storms, for shipped().
# Each storm in a namespace of its own, on CPU 1. A storm leaves its
# connections in TIME_WAIT for a minute, and connect() walks them to find a
# port (__inet_hash_connect, 8 % of a storm's time): in one namespace for
# all, a round's cost depended on how many storms ran in the minute before
# it, which the modes' different pauses made differ. The namespace's
# removal is waited out (its sockets are purged in the background).
# On CPU 1 always: a storm that migrates between rounds measures the move.
# Prints "wall_s cpu_s slept_s", cpu_s with the agent's CPU time in it.
storm() {
	local a0=0 a1=0 t
	ip netns add "$NS" && ip -n "$NS" link set lo up || return 1
	[ -n "$AGENT" ] && a0=$(ticks "$AGENT")
	t=$(taskset -c 1 ip netns exec "$NS" sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$OUT/pid" \
		"$BUILD/bench/net_storm" "$N" "$BYTES" "$RATE" "$TRIPS")
	[ -n "$AGENT" ] && a1=$(ticks "$AGENT")
	echo "$t" | awk -v a=$(( a1 - a0 )) -v hz="$HZ" '{print $1, $2 + a / hz, $3}'
	echo "$(stat -L -c %i "/run/netns/$NS") $(cat "$OUT/pid")" >>"$OUT/storms"
	ip netns del "$NS"
	sleep 1
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# storms MODE: STORMS storms; their mean wall time to $OUT/MODE, their mean
# CPU per connection (ns) to $OUT/MODE.cpu, and how many ran at the cap
# (slept over 1 % of their time for it) to $OUT/capped.
storms() {
	: >"$OUT/storms"
	for _ in $(seq "$STORMS"); do storm; done >"$OUT/one"
	awk '{t += $1} END {print t / NR}' "$OUT/one" >>"$OUT/$1"
	awk -v n="$N" '{c += $2} END {printf "%.1f\n", c / NR / n * 1e9}' "$OUT/one" >>"$OUT/$1.cpu"
	awk '$3 > 0.01 * $1 {k++} END {print k + 0}' "$OUT/one" >>"$OUT/capped"
}
# start BUILD_DIR ARGS...: with AGENT_ARGS, or COMPARE_ARGS for the
# compared agent (word-split on purpose: a list of options).
start() {
	local build=$1; shift
	# shellcheck disable=SC2086
	if [ -n "${COMPARED-}" ]; then set -- "$@" $COMPARE_ARGS; else set -- "$@" $AGENT_ARGS; fi
	: >"$OUT/agent.err"
	rm -f "$OUT/events.json"
	${AGENT_CPUS:+taskset -c "$AGENT_CPUS"} "$build/vigild" --pin-dir "$PIN" --unpin-on-exit \
		-o "$OUT/events.json" --export-file-max-size-mb 0 \
		--report-interval 1 "$@" \
		2>>"$OUT/agent.err" &
	AGENT=$!
	until grep -qs 'attached\|resumed' "$OUT/agent.err"; do
		kill -0 "$AGENT" 2>/dev/null || { cat "$OUT/agent.err" >&2; exit 1; }
		sleep 0.05
	done
	sleep 3	# the agent's start-up (loading its BPF objects, the procFS scan) is not the storm's cost
}
stop() { kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=; }

# shipped MODE: the storms' records in events.json, per storm:
# "events json_bytes ring_bytes".
shipped() {
	jq -R -r --slurpfile st <(awk '{print "[" $1 "," $2 "]"}' "$OUT/storms") 'fromjson? | to_entries[0] as $e
		| select(any($st[]; (($e.value.netns? // $e.value.remote.netns?) == .[0])
			or ($e.key == "process_report" and $e.value.process.pid? == .[1])))
		| [$e.key, (tojson | length + 1)] | @tsv' "$OUT/events.json" |
	awk -F'\t' -v k="$STORMS" 'BEGIN { size["process_connect"] = size["process_accept"] = size["process_listen"] = 136;
			    size["process_close"] = 160; size["process_reset"] = 128;
			    size["process_report"] = 160; size["remote_report"] = 104 }
		    { n++; j += $2; r += size[$1] + 8 } END { printf "%d %d %d\n", n / k, j / k, r / k }' >>"$OUT/shipped.$1"
}

run_base() { storms base; }
# run_event [BUILD_DIR SUFFIX]: the agent in per-event mode
run_event() { start "${1:-$BUILD}"; storms "event${2-}"; stop; [ -n "${2-}" ] || shipped event; }
run_report() {
	start "${1:-$BUILD}" --report-only
	storms "report${2-}"
	sleep 2.5	# the period that holds the storm is reported one tick late
	stop
	[ -n "${2-}" ] || shipped report
}
run_compared() {
	[ -z "$COMPARE" ] && return
	COMPARED=1
	run_event "$COMPARE" .c; run_report "$COMPARE" .c
	COMPARED=
}
storm >/dev/null	# warm caches
rm -f "$OUT/capped"
# The order rotates from round to round, so drift in the machine's state
# (caches, memory, a neighbour's load) weighs on each mode alike.
for r in $(seq "$ROUNDS"); do
	case $((r % 3)) in
	1) run_base; run_event; run_compared; run_report ;;
	2) run_compared; run_event; run_report; run_base ;;
	0) run_report; run_base; run_compared; run_event ;;
	esac
done

capped=$(awk '{k += $1} END {print k}' "$OUT/capped")
storms_run=$(wc -l <"$OUT/capped")
storms_run=$((storms_run * STORMS))
cpu=
if [ "$capped" -gt 0 ]; then
	# The wall times measure the cap: what follows compares CPU per connection.
	for f in "$OUT"/*.cpu; do mv "$f" "${f%.cpu}"; done
	cpu=1
fi
unit=s; [ -n "$cpu" ] && unit="ns CPU per connection"
base=$(median <"$OUT/base"); event=$(median <"$OUT/event"); report=$(median <"$OUT/report")
echo "net: storms of $N connections of $BYTES bytes and $TRIPS round trips over loopback, each in a namespace," \
	"$ROUNDS rounds of $STORMS storms a mode, storm on CPU 1, agent on ${AGENT_CPUS:-any CPU}${AGENT_ARGS:+, agent options $AGENT_ARGS}"
if [ -n "$cpu" ]; then
	echo "  $capped of $storms_run storms ran at their cap of $CAP connections/s: their wall time measures the cap;"
	echo "  compared: CPU per connection (the storm's user+system time plus the agent's), in ns"
else
	echo "  no storm ran at its cap (${CAP} connections/s; 0: none): wall times compared"
fi
for m in base event report; do printf '  rounds, %-6s   %s\n' "$m" "$(tr '\n' ' ' <"$OUT/$m")"; done
echo "medians:"
if [ -n "$cpu" ]; then
	printf '  without agent     %.1f %s\n' "$base" "$unit"
	printf '  per-event mode    %.1f %s\n  report-only mode  %.1f %s\n' "$event" "$unit" "$report" "$unit"
else
	printf '  without agent     %.3f s (%.0f connections/s)\n' "$base" "$(awk -v b="$base" -v n="$N" 'BEGIN {print n / b}')"
	printf '  per-event mode    %.3f s\n  report-only mode  %.3f s\n' "$event" "$report"
fi
awk -v a="$event" -v r="$report" -v b="$base" \
	'BEGIN {printf "  ratio             %.3f per-event, %.3f report-only (target <= 1.05)\n", a / b, r / b}'
# Each mode's round against the same round's storm without the agent, run
# within seconds of it: the median of these ratios is less moved by the
# machine's drift than the ratio of the medians.
paste "$OUT/event" "$OUT/base" | awk '{print $1 / $2}' >"$OUT/pe"
paste "$OUT/report" "$OUT/base" | awk '{print $1 / $2}' >"$OUT/pr"
printf '  paired rounds     %.3f per-event (95 %% interval %s), %.3f report-only (%s):\n' \
	"$(median <"$OUT/pe")" "$(median_ci <"$OUT/pe")" "$(median <"$OUT/pr")" "$(median_ci <"$OUT/pr")"
echo "                    the median of the rounds' ratios"
for m in event report; do
	awk -v n="$N" -v m="$m" '{e += $1; j += $2; r += $3; k++}
		END {printf "  shipped, %-6s   %.5f events, %.2f JSON bytes, %.2f ring bytes per connection" \
			    " (%d events a storm)\n", m, e / k / n, j / k / n, r / k / n, e / k}' "$OUT/shipped.$m"
done
[ -z "$COMPARE" ] || for m in event report; do
	paste "$OUT/$m" "$OUT/$m.c" | awk '{print $1 / $2}' >"$OUT/c"
	paste "$OUT/$m.c" "$OUT/base" | awk '{print $1 / $2}' >"$OUT/cb"
	printf '  against %s, %-6s %.3f (95 %% interval %s); its own ratio to no agent %.3f (%s)\n' \
		"$COMPARE${COMPARE_ARGS:+ $COMPARE_ARGS}" "$m" "$(median <"$OUT/c")" "$(median_ci <"$OUT/c")" \
		"$(median <"$OUT/cb")" "$(median_ci <"$OUT/cb")"
done
