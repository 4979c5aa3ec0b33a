#!/usr/bin/env bash
# Cost of counting each program's runs (bpf/lib/prog_runs.bpf.h) on the
# exec path: a fork+exec storm timed without an agent, with the vigild of
# OTHER_BUILD (a build without the counters, e.g. the commit before them)
# and with this build's, interleaved in each round, so the machine's drift
# moves all three alike. Compared: the storm's CPU per process (its own
# and its children's, where the exec, fork and exit programs run), paired
# by round, and its wall time. The storm is capped in count and by a
# 60 s timeout.
#   bench/prog_runs.sh OTHER_BUILD [PROCESSES_PER_ROUND] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
OTHER=${1:?usage: bench/prog_runs.sh OTHER_BUILD [PROCESSES_PER_ROUND] [ROUNDS]}
N=${2:-2000}
ROUNDS=${3:-7}
bench_begin progruns

# storm NAME: appends wall seconds to NAME, CPU seconds to NAME.cpu.
storm() {
	set -- "$1" $(timeout 60 "$BUILD/bench/proc_storm" exec 1 "$N" /bin/true)
	echo "$3" >>"$OUT/$1"; echo "$4" >>"$OUT/$1.cpu"
}
# with BUILD_DIR NAME: the storm under that build's vigild, on fresh pins.
with() {
	bench_agent_at "$1/vigild" "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit --no-procfs \
		-o "$OUT/events.json"
	sleep 2	# start-up settles: not the storm's cost
	storm "$2"
	kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=
	rm -f "$OUT/events.json"
}

storm warm
for r in $(seq "$ROUNDS"); do
	storm base
	with "$OTHER" other
	with "$BUILD" this
done
us() { awk -v n="$N" '{print $1 / n * 1e6}' "$OUT/$1.cpu" | median; }
echo "prog_runs: $N fork+exec of /bin/true per run, $ROUNDS rounds of (no agent, $OTHER, $BUILD), medians"
printf '  CPU/process    %.1f us no agent, %.1f us %s, %.1f us %s\n' \
	"$(us base)" "$(us other)" "$OTHER" "$(us this)" "$BUILD"
printf '  ratio this/other, CPU per process: %.3f (paired rounds, 95%% interval %s)\n' \
	"$(paste "$OUT/this.cpu" "$OUT/other.cpu" | awk '{print $1 / $2}' | median)" \
	"$(paste "$OUT/this.cpu" "$OUT/other.cpu" | awk '{print $1 / $2}' | median_ci)"
printf '  ratio this/other, wall time:       %.3f (paired rounds, 95%% interval %s)\n' \
	"$(paste "$OUT/this" "$OUT/other" | awk '{print $1 / $2}' | median)" \
	"$(paste "$OUT/this" "$OUT/other" | awk '{print $1 / $2}' | median_ci)"
printf '  ratio other/no agent, CPU:         %.3f; this/no agent %.3f\n' \
	"$(paste "$OUT/other.cpu" "$OUT/base.cpu" | awk '{print $1 / $2}' | median)" \
	"$(paste "$OUT/this.cpu" "$OUT/base.cpu" | awk '{print $1 / $2}' | median)"
