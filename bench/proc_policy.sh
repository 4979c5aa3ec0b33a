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
# The storms' CPU moves by several percent from run to run here, more than
# what the targets are about, so the same run also counts what vigil adds
# exactly, one storm per configuration after the rounds:
#   - its programs' own run time (kernel.bpf_stats_enabled: only the
#     programs of this run, the links pinned under its PIN and the empty
#     hooks' ids; others on the machine are not counted),
#   - the agent's CPU (its threads' schedstat, in ns),
#   - the traced syscall path, which run time does not see: a getppid
#     storm (hooked by nothing) with and without syscall tracepoints on,
#     paired by round, times the syscalls an exec storm's operation makes
#     (counted once with strace).
# And the targets once more, bracketed (TARGET_ROUNDS rounds, default
# ROUNDS): (a), (b), (a) for open and none, (b), none for exec, each (b)
# against the mean of the storms just before and after it.
# THREADS defaults to 1, and storms run on CPU 1, the agent on CPU 0: the
# storm leaves a core to the agent and the rest of the machine (two
# threads on two cores measure the scheduler).
#   bench/proc_policy.sh [ROUNDS] [THREADS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
ROUNDS=${1:-7}
THREADS=${2:-1}
OPEN_OPS=${OPEN_OPS:-100000}
EXEC_OPS=${EXEC_OPS:-1000}
SYSCALL_OPS=${SYSCALL_OPS:-1000000}
TARGET_ROUNDS=${TARGET_ROUNDS:-$ROUNDS}
bench_begin proc
HOOKS=
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	[ -n "$HOOKS" ] && kill -TERM "$HOOKS" 2>/dev/null && wait "$HOOKS" 2>/dev/null
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
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

# The storm on one core, the agent (and what else runs) on the other: on
# two shared cores an agent's wakeups landing beside the storm's children
# cost them cache and switches that move from run to run.
if [ "$(nproc)" -ge 2 ]; then STORM_ON=(taskset -c 1); AGENT_CPU=0; else STORM_ON=(); AGENT_CPU=; fi
# agent_start POLICY: vigild on PIN with that policy, on the agent's core.
agent_start() {
	rm -f "$OUT/events.json"
	bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o "$OUT/events.json" \
		--policy "$OUT/pol/$1.yaml"
	[ -n "$AGENT_CPU" ] && taskset -a -p -c "$AGENT_CPU" "$AGENT" >/dev/null
	sleep 3	# start-up (loading, the procFS scan) is not the storms' cost
}
agent_stop() { kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=; rm -f "$OUT/events.json"*; }
# hooks_start KIND / hooks_stop: bench/empty_hooks, configuration (a).
hooks_start() {
	"$BUILD/bench/empty_hooks" "$1" 2>"$OUT/hooks.err" &
	HOOKS=$!
	until grep -qs attached "$OUT/hooks.err"; do
		kill -0 "$HOOKS" 2>/dev/null || { cat "$OUT/hooks.err" >&2; exit 1; }
		sleep 0.05
	done
}
hooks_stop() { kill -TERM "$HOOKS"; wait "$HOOKS" || true; HOOKS=; }
# agent_ns PID: the CPU time of all PID's threads so far, in ns.
agent_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
# storm KIND CONFIG [PID]: one storm; appends "cpu_ns_per_op wall_ns_per_op
# agent_ns_per_op" to $OUT/KIND.CONFIG, PID the agent whose CPU is added.
storm() {
	local kind=$1 conf=$2 pid=${3-} a0=0 a1=0 target ops
	case $kind in
	open) target=$OUT/d/a/b/c/d/f ops=$OPEN_OPS ;;
	exec) target=$OUT/bin/true ops=$EXEC_OPS ;;
	syscall) target=- ops=$SYSCALL_OPS ;;
	esac
	[ -n "$pid" ] && a0=$(agent_ns "$pid")
	set -- $("${STORM_ON[@]}" "$BUILD/bench/proc_storm" "$kind" "$THREADS" "$ops" "$target")
	[ -n "$pid" ] && a1=$(agent_ns "$pid")
	awk -v n="$1" -v w="$2" -v c="$3" -v a="$(( a1 - a0 ))" \
		'BEGIN {printf "%.1f %.1f %.1f\n", c / n * 1e9 + a / n, w / n * 1e9, a / n}' \
		>>"$OUT/$kind.$conf"
}
run_none() { storm open none; storm exec none; storm syscall none; }
run_empty() {
	for kind in open exec; do
		hooks_start "$kind"
		storm "$kind" empty
		[ "$kind" = open ] && storm syscall empty	# syscall tracepoints on
		hooks_stop
	done
}
load() { "$BUILD/vigil" --pin-dir "$PIN" policy load "$OUT/pol/$1.yaml" >/dev/null; }
# One agent for agent, miss and post: the rules change by policy load, in
# the round's order.
run_agent() {
	agent_start agent
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
	agent_stop
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

# The targets, bracketed: each round runs the baseline just before and
# just after the configuration, so that the machine's drift moves both
# alike. open: (a), (b), (a); exec: none, (b), none.
for r in $(seq "$TARGET_ROUNDS"); do
	hooks_start open; storm open ta1; hooks_stop
	agent_start miss-open; storm open tb "$AGENT"; agent_stop
	hooks_start open; storm open ta2; hooks_stop
	storm exec tn1
	agent_start miss-exec; storm exec tb "$AGENT"; agent_stop
	storm exec tn2
done

# The exact pass: one storm per configuration with run-time stats on (the
# stats' own clock reads make each program run dearer, so the rounds above
# ran without them).
# pinned_progs: the ids of the programs behind the links under PIN.
pinned_progs() {
	bpftool -j -f link show | jq -r --arg p "$PIN/" '.[] | select(any(.pinned[]?; startswith($p))) | .prog_id'
}
# run_ns IDS...: the summed run time (ns) of those programs so far.
run_ns() {
	bpftool -j prog show | jq -r --argjson ids "[$(echo "$@" | tr ' ' ,)]" \
		'[.[] | select(.id as $i | $ids | index($i)) | .run_time_ns // 0] | add // 0'
}
# exact KIND CONFIG IDS...: a storm, its programs' run time per operation
# appended to $OUT/KIND.CONFIG.run (the storm's own figures to .CONFIG.x).
exact() {
	local kind=$1 conf=$2 ops t0; shift 2
	case $kind in open) ops=$OPEN_OPS ;; exec) ops=$EXEC_OPS ;; esac
	t0=$(run_ns "$@")
	storm "$kind" "$conf.x" "${AGENT-}"
	awk -v a="$t0" -v b="$(run_ns "$@")" -v n="$((ops * THREADS))" \
		'BEGIN {printf "%.1f\n", (b - a) / n}' >>"$OUT/$kind.$conf.run"
}
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for kind in open exec; do
	hooks_start "$kind"
	exact "$kind" empty $(sed -n 's/.*programs//p' "$OUT/hooks.err")
	hooks_stop
done
agent_start agent
for conf in agent miss post; do
	for kind in open exec; do
		if [ "$conf" = agent ]; then load agent; else load "$conf-$kind"; fi
		sleep 0.5
		exact "$kind" "$conf" $(pinned_progs)
	done
done
agent_stop
echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
# The syscalls of one exec storm operation (fork, the child's exec of
# /bin/true and its loader's, exit, wait), each on the traced path while
# syscall tracepoints are on.
strace -f -c -o "$OUT/strace" "$BUILD/bench/proc_storm" exec 1 200 "$OUT/bin/true" >/dev/null
EXEC_SYSCALLS=$(awk '$NF == "total" {print $4 / 200}' "$OUT/strace")

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
	printf '  miss / none, median of the rounds'"'"' ratios: %.3f, 95%% interval %s (bootstrap)\n' \
		"$(median "$OUT/r.$kind.miss")" "$(median_ci <"$OUT/r.$kind.miss")"
	awk '{h += $1; e += $2; l += $3} END {printf "  post: %d hits, %d events written, %d lost (ring full), all rounds\n", h, e, l}' \
		"$OUT/posted.$kind"
	printf '  programs'"'"' own run time, ns per operation (one storm each, stats on):'
	for conf in empty agent miss post; do printf ' %s %s' "$conf" "$(cat "$OUT/$kind.$conf.run")"; done
	echo
done
# The traced syscall path: getppid, hooked by nothing, paired by round.
paste "$OUT/syscall.empty" "$OUT/syscall.none" | awk '{print $1 - $4}' >"$OUT/sc"
SC=$(median "$OUT/sc")
printf 'traced syscall path: %.1f ns per syscall (%s; getppid %.1f ns without); an exec storm operation makes %s syscalls\n' \
	"$SC" "$(spread <"$OUT/sc")" "$(col 1 "$OUT/syscall.none" | median)" "$EXEC_SYSCALLS"
# What vigil adds, counted: for open (b) - (a), the programs' run time
# beyond the empty ones' (the traced path is paid by both), with the
# agent's CPU (none: nothing is posted); for exec, all of it over no agent.
ME=$(awk -v m="$(cat "$OUT/open.miss.run")" -v e="$(cat "$OUT/open.empty.run")" \
	-v a="$(col 3 "$OUT/open.miss" | median)" 'BEGIN {printf "%.1f", m - e + a}')
printf 'open, counted: (b) - (a) = programs %s - %s ns + agent %s ns = %s ns per open (target <= 300)\n' \
	"$(cat "$OUT/open.miss.run")" "$(cat "$OUT/open.empty.run")" "$(col 3 "$OUT/open.miss" | median)" "$ME"
XA=$(col 3 "$OUT/exec.miss" | median)
XN=$(col 1 "$OUT/exec.none" | median)
awk -v p="$(cat "$OUT/exec.miss.run")" -v a="$XA" -v sc="$SC" -v k="$EXEC_SYSCALLS" -v n="$XN" 'BEGIN {
	t = p + a + (sc > 0 ? sc : 0) * k
	printf "exec, counted: programs %.0f ns + agent %.0f ns + traced syscall path %.0f ns x %s = %.0f ns per exec over %.0f ns of no agent: ratio %.3f (target <= 1.03)\n",
		p, a, (sc > 0 ? sc : 0), k, t, n, (n + t) / n }'
# bracketed KIND BASE: per round, tb against the mean of BASE1 and BASE2.
paste "$OUT/open.tb" "$OUT/open.ta1" "$OUT/open.ta2" | awk '{print $1 - ($4 + $7) / 2}' >"$OUT/bo"
paste "$OUT/exec.tb" "$OUT/exec.tn1" "$OUT/exec.tn2" | awk '{print $1 / (($4 + $7) / 2)}' >"$OUT/bx"
printf 'bracketed, %s rounds, storm and agent on their own cores:\n' "$TARGET_ROUNDS"
printf '  open (b) - (a): %.1f ns per open, 95%% interval %s (target <= 300)\n' "$(median "$OUT/bo")" "$(median_ci <"$OUT/bo")"
printf '  exec (b) / none: %.3f, 95%% interval %s (target <= 1.03); rounds: %s\n' "$(median "$OUT/bx")" \
	"$(median_ci <"$OUT/bx")" "$(awk '{printf "%.3f ", $1}' "$OUT/bx")"
echo "targets: open miss - empty <= 300 ns; exec miss / none <= 1.03"
