#!/usr/bin/env bash
# Cost of export filters (docs/operations.md, "Filters") on the exec storm
# (bench/proc_storm.c exec: fork, exec a copy of /bin/true, wait; EXEC_OPS
# per thread, THREADS threads, uncapped), in every round, order rotating:
#   base    a vigild without filters (BASE: a build before them, e.g. the
#           main checkout's build/vigild; default this build, no policy)
#   empty   this vigild with an empty filter section (filters: [])
#   deny    this vigild with 32 deny filters on exec and exit that match
#           nothing the storm runs (binaries, prefixes, uids): every exec
#           looks its binary up and every event is matched
# Compared: CPU per exec (the storm's user+system time with its children,
# where the BPF programs run, plus the agent's), as a ratio to the same
# round's base. The machine is shared and noisy: read the ratios.
#   bench/filter_cost.sh [ROUNDS] [THREADS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
BASE=${BASE:-$BUILD/vigild}
ROUNDS=${1:-5}
THREADS=${2:-1}	# a core left free; a figure in docs/ names the count it ran with
EXEC_OPS=${EXEC_OPS:-1000}
bench_begin filter
mkdir -p "$OUT/bin" "$OUT/pol"
cp /bin/true "$OUT/bin/true"
printf 'filters: []\n' >"$OUT/pol/empty.yaml"
{
	echo "filters:"
	for i in $(seq 32); do
		case $((i % 3)) in
		0) printf '  - { name: f%d, action: deny, kinds: [exec, exit], binary: /nonexistent/%d }\n' "$i" "$i" ;;
		1) printf '  - { name: f%d, action: deny, kinds: [exec, exit], binary_prefix: %s/no%d/ }\n' "$i" "$OUT" "$i" ;;
		2) printf '  - { name: f%d, action: deny, kinds: [exec, exit], uid: %d }\n' "$i" $((70000 + i)) ;;
		esac
	done
} >"$OUT/pol/deny.yaml"
chmod 644 "$OUT"/pol/*.yaml

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
run() { # run CONFIG: one storm under an agent of CONFIG
	local conf=$1 bin=$BUILD/vigild a0 a1 args=()
	case $conf in
	base) bin=$BASE ;;
	*) args=(--policy "$OUT/pol/$conf.yaml") ;;
	esac
	bench_agent_at "$bin" "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit --no-procfs -o /dev/null \
		"${args[@]}"
	sleep 1
	a0=$(ticks "$AGENT")
	set -- $("$BUILD/bench/proc_storm" exec "$THREADS" "$EXEC_OPS" "$OUT/bin/true")
	a1=$(ticks "$AGENT")
	awk -v n="$1" -v c="$3" -v a="$((a1 - a0))" -v hz="$HZ" 'BEGIN {printf "%.1f\n", (c + a / hz) / n * 1e9}' \
		>>"$OUT/$conf"
	kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=
}
for r in $(seq "$ROUNDS"); do
	case $((r % 3)) in
	1) run base; run empty; run deny ;;
	2) run empty; run deny; run base ;;
	0) run deny; run base; run empty ;;
	esac
done
echo "filter_cost: exec storm, $THREADS threads x $EXEC_OPS execs, $ROUNDS rounds, order rotating; base: $BASE"
for conf in base empty deny; do
	paste "$OUT/$conf" "$OUT/base" | awk '{print $1 / $2}' >"$OUT/r.$conf"
	printf '  %-6s CPU ns/exec median %9.1f   ratio vs base median %.3f (95%% CI %s)\n' "$conf" \
		"$(median "$OUT/$conf")" "$(median "$OUT/r.$conf")" "$(median_ci <"$OUT/r.$conf")"
done
