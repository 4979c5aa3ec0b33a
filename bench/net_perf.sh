#!/usr/bin/env bash
# Where a connection storm's time goes when the agent watches it: bench/net.sh's
# storms (each in a namespace of its own, on CPU 1) under `perf record -C 1`,
# without the agent, with it in --report-only mode and in per-event mode, RUNS
# times each, interleaved. Prints, per group of kernel symbols (tracepoint
# dispatch, each vigil program, hash lookups, the ring, clock reads), the
# samples each mode gained over the runs without the agent, as ns per
# connection, and how much longer the storm's core was busy. The wall-time
# ratio is bench/net.sh's; this says what it is made of. The namespaces'
# teardown (a kworker) lands on CPU 1 at times, and the host's noise weighs
# the same: small storms and single runs measure mostly those.
#   bench/net_perf.sh [CONNECTIONS_PER_STORM] [BYTES] [RUNS] [ROUND_TRIPS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
N=${1:-10000}
BYTES=${2:-1000}
RUNS=${3:-2}
TRIPS=${4:-0}	# as in bench/net.sh: keep-alive requests and responses a connection
STORMS=${STORMS:-8}	# per run and mode
HZ=${HZ:-4000}		# perf's sampling rate: a sample is 1e9 / HZ ns
command -v perf >/dev/null || scripts/install-deps.sh bench
NS=vigil-bench-netperf-$$
PIN=/sys/fs/bpf/vigil-bench-netperf-$$
OUT=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench-netperf.XXXX")
AGENT=
PERF=
cleanup() {
	[ -n "$PERF" ] && kill -INT "$PERF" 2>/dev/null && wait "$PERF" 2>/dev/null
	bench_net_teardown
	rm -rf "$OUT"
}
trap cleanup EXIT
# The agent, and this script's own work, on CPU 0: the storm's core is
# CPU 1, and every sample there is the storm's or the kernel's on its behalf.
taskset -cp 0 $$ >/dev/null

# storm MODE: one storm, its time added to $OUT/times.MODE
storm() {
	ip netns add "$NS" && ip -n "$NS" link set lo up || return 1
	taskset -c 1 ip netns exec "$NS" "$BUILD/bench/net_storm" "$N" "$BYTES" 50000 "$TRIPS" >>"$OUT/times.$1"
	ip netns del "$NS"
	sleep 0.5
}
# record MODE RUN: STORMS storms under perf; "symbol<TAB>samples" in $OUT/MODE.RUN
record() {
	case $1 in
	report) bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o /dev/null --report-only ;;
	event) bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o /dev/null ;;
	esac
	[ -z "$AGENT" ] || sleep 2	# its start-up is not the storm's cost
	perf record -q -F "$HZ" -C 1 -o "$OUT/perf.data" 2>/dev/null &
	PERF=$!
	sleep 0.5
	for _ in $(seq "$STORMS"); do storm "$1"; done
	kill -INT "$PERF"; wait "$PERF" || true; PERF=
	if [ -n "$AGENT" ]; then kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=; fi
	perf report -i "$OUT/perf.data" -n --no-children --sort sym -q -t "$(printf '\t')" 2>/dev/null |
		awk -F'\t' '{s = $3; sub(/^ *\[[^]]*\] */, "", s); gsub(/ /, "", $2); print s "\t" $2}' >"$OUT/$1.$2"
}

for r in $(seq "$RUNS"); do
	case $((r % 3)) in
	1) record base "$r"; record report "$r"; record event "$r" ;;
	2) record report "$r"; record event "$r"; record base "$r" ;;
	0) record event "$r"; record base "$r"; record report "$r" ;;
	esac
done

echo "net_perf: $RUNS runs of $STORMS storms of $N connections of $BYTES bytes and $TRIPS round trips a mode, perf at $HZ Hz on CPU 1"
printf '  median storm: %.3f s without the agent, %.3f report-only, %.3f per-event\n' \
	"$(median "$OUT/times.base")" "$(median "$OUT/times.report")" "$(median "$OUT/times.event")"
echo "  added to the storm's core, ns per connection (samples over the runs without the agent;"
echo "  dispatch, programs, lookups, ring: vigil's work alone; the rest also moves with the host's speed):"
awk -F'\t' -v ns=$((1000000000 / HZ)) -v conns=$((RUNS * STORMS * N)) '
	function group(s) {
		if (s ~ /idle|halt/) return "idle"
		if (s ~ /^bpf_trace_run[0-9]|^__bpf_trace_|^__traceiter_|^call_trace_sock_|^inet_sk_state_store$/) return "dispatch"
		if (s ~ /^bpf_prog_.*_net_state$/) return "net_state"
		if (s ~ /^bpf_prog_.*_net_(send|recv)$/) return "net_send+recv"
		if (s ~ /^bpf_prog_/) return "other_programs"
		if (s ~ /lookup_nulls_elem|htab_|jhash/) return "hash_lookups"
		if (s ~ /ringbuf/) return "ring"
		if (s ~ /ktime_get|clocksource|kvm_clock|read_tsc|sched_clock/) return "clocks"
		return "rest"
	}
	{ split(FILENAME, f, "/"); m = f[length(f)]; sub(/\..*/, "", m)
	  g = group($1); n[m, g] += $2; if (g != "idle") busy[m] += $2 }
	END {
		split("dispatch net_state net_send+recv other_programs hash_lookups ring clocks rest", order, " ")
		printf "  %-22s %12s %12s\n", "", "report-only", "per-event"
		for (i = 1; i <= 8; i++) {
			g = order[i]; label = g; sub(/_programs|_lookups/, " &", label); sub(/ _/, " ", label)
			printf "  %-22s %12.0f %12.0f\n", label, (n["report", g] - n["base", g]) * ns / conns,
				(n["event", g] - n["base", g]) * ns / conns
		}
		printf "  %-22s %12.0f %12.0f\n", "all, busy", (busy["report"] - busy["base"]) * ns / conns,
			(busy["event"] - busy["base"]) * ns / conns
		printf "  storm core busy, against no agent: %.3f report-only, %.3f per-event (%.0f ns a connection without)\n",
			busy["report"] / busy["base"], busy["event"] / busy["base"], busy["base"] * ns / conns
	}' "$OUT"/base.* "$OUT"/report.* "$OUT"/event.*
