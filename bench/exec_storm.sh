#!/usr/bin/env bash
# Cost of watching processes: a fork+exec storm timed without and with
# vigild (JSON to a file), interleaved rounds, medians compared. Also the
# agent's CPU time and peak memory. Target (issue 2): ratio <= 1.03, agent
# anonymous RSS under 8 MiB beside the ring mapping. The storm has no cap
# (it says so): its wall time is compared, and beside it its CPU per
# process (the storm's own user+system time and its children's, plus the
# agent's), which moves less with the neighbours' load on a shared machine.
#   bench/exec_storm.sh [PROCESSES_PER_ROUND] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
N=${1:-3000}
ROUNDS=${2:-5}
bench_begin exec

# storm FILE: appends the wall time to FILE, CPU seconds to FILE.cpu.
storm() {
	set -- "$1" $("$BUILD/bench/proc_storm" exec 1 "$N" /bin/true)
	echo "$3" >>"$1"; echo "$4" >>"$1.cpu"
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

storm "$OUT/warm"   # warm caches
for r in $(seq "$ROUNDS"); do
	storm "$OUT/base"
	"$BUILD/vigild" --pin-dir "$PIN" --unpin-on-exit -o "$OUT/events.json" 2>>"$OUT/agent.err" &
	AGENT=$!
	until grep -qs 'attached\|resumed' "$OUT/agent.err"; do
		kill -0 "$AGENT" 2>/dev/null || { cat "$OUT/agent.err" >&2; exit 1; }
		sleep 0.05
	done
	sleep 3	# let start-up (loading, procFS scan, their events) settle: not the storm's cost
	t0=$(ticks "$AGENT")
	storm "$OUT/agent"
	t1=$(ticks "$AGENT")
	echo "$(( t1 - t0 ))" >>"$OUT/cpu"
	# The agent's CPU in this storm's figure: CPU per process, storm + agent.
	tail -1 "$OUT/agent.cpu" | awk -v a=$(( t1 - t0 )) -v hz="$(getconf CLK_TCK)" '{print $1 + a / hz}' >>"$OUT/agent.all"
	grep -E '^(VmHWM|RssAnon|RssFile|RssShmem)' "/proc/$AGENT/status" | tr -s ' \t' ' ' >"$OUT/mem"
	kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=
	rm -f "$OUT/events.json"
done

HZ=$(getconf CLK_TCK)
base=$(median <"$OUT/base"); agent=$(median <"$OUT/agent"); cpu=$(median <"$OUT/cpu")
echo "exec_storm: $N processes per round (fork+exec of /bin/true, one thread, no cap: never at a cap), $ROUNDS rounds, medians"
printf '  without agent  %.3f s\n  with agent     %.3f s\n' "$base" "$agent"
# Each agent round is paired with the baseline round just before it: the
# median of the pairs' ratios is less moved by the machine's drift.
ratio=$(paste "$OUT/agent" "$OUT/base" | awk '{print $1 / $2}' | median)
printf '  ratio          %.3f, median of paired rounds (target <= 1.03); of the medians %.3f\n' \
	"$ratio" "$(awk -v a="$agent" -v b="$base" 'BEGIN {print a / b}')"
paste "$OUT/agent.all" "$OUT/base.cpu" | awk '{print $1 / $2}' >"$OUT/cr"
printf '  CPU/process    %.1f us without, %.1f us with the agent (storm + agent); ratio %.3f, paired rounds (min-max %s)\n' \
	"$(awk -v n="$N" '{print $1 / n * 1e6}' "$OUT/base.cpu" | median)" \
	"$(awk -v n="$N" '{print $1 / n * 1e6}' "$OUT/agent.all" | median)" "$(median "$OUT/cr")" \
	"$(sort -n "$OUT/cr" | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3f-%.3f", lo, hi}')"
awk -v c="$cpu" -v hz="$HZ" -v n="$N" 'BEGIN {printf "  agent CPU      %.3f s per round, %.1f us per process (exec+exit)\n", c / hz, c / hz / n * 1e6}'
sed 's/^/  agent /' "$OUT/mem"
# Records include every process on the node in that time, not only the storm's.
recs=$(sed -n 's/.*stopped: \([0-9]*\) records.*/\1/p' "$OUT/agent.err" | tail -1)
awk -v c="$cpu" -v hz="$HZ" -v r="$recs" 'BEGIN {if (r) printf "  agent CPU      %.1f us per record (%d records in the last round)\n", c / hz / r * 1e6, r}'
tail -1 "$OUT/agent.err" | sed 's/^/  /'
