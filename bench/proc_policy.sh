#!/usr/bin/env bash
# Cost of exec and file rules (docs/policy.md, "What matching costs"). Two
# storms, bench/proc_storm.c, uncapped, THREADS threads each:
#   open  openat+close of a file four folders below the benchmark's own
#         ($OUT/d/a/b/c/d/f), OPEN_OPS per thread
#   exec  fork, exec a copy of /bin/true ($OUT/bin/true), wait, EXEC_OPS
#         per thread
# each run in every round under five configurations, in an order that
# rotates from round to round:
#   none   no agent, nothing attached
#   empty  (a) programs that do nothing on the same hooks (bench/empty_hooks):
#          the syscall tracepoints alone move every task onto the kernel's
#          traced syscall path
#   agent  vigild with no exec or file rule (its process events only)
#   miss   (b) vigild with 128 rules of the storm's kind that match nothing
#          (prefixes $OUT/d/noN/, $OUT/noN/: near misses, in the storm's folder)
#   post   (c) vigild with one rule that posts every operation of the storm
# What is compared is CPU per operation: the storm's own user+system time
# (its threads and its children, where the hooks' BPF programs run) plus
# the agent's, over the operations done. Each configuration is paired with
# the same round's "none": the medians of those per-round differences and
# ratios are printed, with their spread (min-max over the rounds). Wall
# time per operation is printed beside them; on this shared 2-core machine
# it moves with the neighbours' load, the CPU time much less.
#   bench/proc_policy.sh [ROUNDS] [THREADS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
ROUNDS=${1:-7}
THREADS=${2:-2}
OPEN_OPS=${OPEN_OPS:-100000}
EXEC_OPS=${EXEC_OPS:-1000}
bench_begin proc
HOOKS=
cleanup() {
	[ -n "$HOOKS" ] && kill -TERM "$HOOKS" 2>/dev/null && wait "$HOOKS" 2>/dev/null
	bench_end
}
trap cleanup EXIT
CONFIGS="none empty agent miss post"

mkdir -p "$OUT/d/a/b/c/d" "$OUT/bin" "$OUT/pol"
echo data >"$OUT/d/a/b/c/d/f"
cp /bin/true "$OUT/bin/true"
# Policies: root's, not group- or world-writable (docs/policy.md).
policy() { # policy NAME ON STRING PATTERN_PREFIX COUNT
	{
		echo "rules:"
		for i in $(seq "$5"); do
			if [ "$5" = 1 ]; then p=$4; else p=$4no$i/; fi
			printf '  - name: bench-%s-%d\n    on: %s\n    %s: { prefix: ["%s"] }\n    action: post\n' \
				"$1" "$i" "$2" "$3" "$p"
		done
	} >"$OUT/pol/$1.yaml"
}
policy miss-open '[open, openat, openat2, creat]' path "$OUT/d/" 128
policy miss-exec exec binary "$OUT/" 128
policy post-open '[open, openat, openat2, creat]' path "$OUT/d/" 1
policy post-exec exec binary "$OUT/bin/" 1
printf 'rules: []\n' >"$OUT/pol/agent.yaml"
chmod 644 "$OUT"/pol/*.yaml

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
# storm KIND CONFIG [PID]: one storm; appends "cpu_ns_per_op wall_ns_per_op
# agent_ns_per_op" to $OUT/KIND.CONFIG, PID the agent whose CPU is added.
storm() {
	local kind=$1 conf=$2 pid=${3-} a0=0 a1=0 target ops
	if [ "$kind" = open ]; then target=$OUT/d/a/b/c/d/f ops=$OPEN_OPS; else target=$OUT/bin/true ops=$EXEC_OPS; fi
	[ -n "$pid" ] && a0=$(ticks "$pid")
	set -- $("$BUILD/bench/proc_storm" "$kind" "$THREADS" "$ops" "$target")
	[ -n "$pid" ] && a1=$(ticks "$pid")
	awk -v n="$1" -v w="$2" -v c="$3" -v a="$(( a1 - a0 ))" -v hz="$HZ" \
		'BEGIN {printf "%.1f %.1f %.1f\n", (c + a / hz) / n * 1e9, w / n * 1e9, a / hz / n * 1e9}' \
		>>"$OUT/$kind.$conf"
}
run_none() { storm open none; storm exec none; }
run_empty() {
	for kind in open exec; do
		"$BUILD/bench/empty_hooks" "$kind" 2>"$OUT/hooks.err" &
		HOOKS=$!
		until grep -qs attached "$OUT/hooks.err"; do
			kill -0 "$HOOKS" 2>/dev/null || { cat "$OUT/hooks.err" >&2; exit 1; }
			sleep 0.05
		done
		storm "$kind" empty
		kill -TERM "$HOOKS"; wait "$HOOKS" || true; HOOKS=
	done
}
load() { "$BUILD/vigil" --pin-dir "$PIN" policy load "$OUT/pol/$1.yaml" >/dev/null; }
# One agent for agent, miss and post: the rules change by policy load, in
# the round's order.
run_agent() {
	rm -f "$OUT/events.json"
	bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o "$OUT/events.json" \
		--policy "$OUT/pol/agent.yaml"
	sleep 3	# start-up (loading, the procFS scan) is not the storms' cost
	for conf in "$@"; do
		for kind in open exec; do
			if [ "$conf" = agent ]; then load agent; else load "$conf-$kind"; fi
			sleep 0.5
			storm "$kind" "$conf" "$AGENT"
			[ "$conf" = post ] && "$BUILD/vigil" --pin-dir "$PIN" policy list --json |
				jq -r 'select(.name? == "bench-post-'"$kind"'-1") | "\(.hits) \(.events) \(.events_lost)"' \
				>>"$OUT/posted.$kind"
		done
	done
	kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=
	rm -f "$OUT/events.json"*
}

storm open none >/dev/null; storm exec none >/dev/null	# warm caches
rm -f "$OUT"/open.* "$OUT"/exec.*
for r in $(seq "$ROUNDS"); do
	case $((r % 3)) in
	1) run_none; run_empty; run_agent agent miss post ;;
	2) run_agent miss post agent; run_none; run_empty ;;
	0) run_empty; run_agent post agent miss; run_none ;;
	esac
done

col() { awk -v c="$1" '{print $c}' "$2"; }
spread() { sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.1f-%.1f", lo, hi}'; }
echo "proc_policy: storms uncapped (never at a cap: CPU per operation is compared), $THREADS threads," \
	"$ROUNDS rounds, every configuration in every round, order rotating"
echo "  open: openat+close of a file 4 folders below the benchmark's, $OPEN_OPS per thread;" \
	"exec: fork+exec of /bin/true, $EXEC_OPS per thread"
for kind in open exec; do
	echo "$kind storm, ns per operation: median (min-max over rounds); added = paired with the round's none"
	printf '  %-6s %22s %22s %24s %16s %14s\n' config "CPU (storm + agent)" "wall" "CPU added vs none" "ratio vs none" "agent CPU"
	for conf in $CONFIGS; do
		f=$OUT/$kind.$conf
		paste "$f" "$OUT/$kind.none" | awk '{print $1 - $4}' >"$OUT/d.$kind.$conf"
		paste "$f" "$OUT/$kind.none" | awk '{print $1 / $4}' >"$OUT/r.$kind.$conf"
		printf '  %-6s %9.1f (%s) %9.1f (%s) %9.1f (%s) %6.3f (%s) %6.1f\n' "$conf" \
			"$(col 1 "$f" | median)" "$(col 1 "$f" | spread)" \
			"$(col 2 "$f" | median)" "$(col 2 "$f" | spread)" \
			"$(median "$OUT/d.$kind.$conf")" "$(spread <"$OUT/d.$kind.$conf")" \
			"$(median "$OUT/r.$kind.$conf")" "$(awk '{printf "%.3f\n", $1}' "$OUT/r.$kind.$conf" | spread)" \
			"$(col 3 "$f" | median)"
	done
	paste "$OUT/$kind.miss" "$OUT/$kind.empty" | awk '{print $1 - $4}' >"$OUT/me"
	paste "$OUT/$kind.miss" "$OUT/$kind.agent" | awk '{print $1 - $4}' >"$OUT/ma"
	printf '  miss - empty (128 rules beyond the bare hooks): %.1f ns (%s); miss - agent: %.1f ns (%s)\n' \
		"$(median "$OUT/me")" "$(spread <"$OUT/me")" "$(median "$OUT/ma")" "$(spread <"$OUT/ma")"
	awk '{h += $1; e += $2; l += $3} END {printf "  post: %d hits, %d events written, %d lost (ring full), all rounds\n", h, e, l}' \
		"$OUT/posted.$kind"
done
echo "targets: open miss - empty <= 300 ns; exec miss / none <= 1.03"
