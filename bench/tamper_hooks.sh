#!/usr/bin/env bash
# Cost of the tamper hooks on hot paths (docs/threat-model.md, "What the
# records cost"): an open storm and an unlink storm, bench/proc_storm.c,
# uncapped, THREADS threads, against one running vigild whose own open,
# unlink and rename tamper links are removed; bench/tamper_hooks loads the
# same programs against its pins and attaches ("with") or detaches
# ("without") them between storms, in an order that alternates from round
# to round, so every "with" has its "without" beside it.
#   open    openat+close of a file four folders below the benchmark's own
#           ($OUT/d/a/b/c/d/f)
#   unlink  unlinkat of a path there that does not exist (the smallest
#           unlink: the hooks' share is the largest)
# Compared: CPU per operation (the storm's user+system, where the BPF
# programs run), each "with" paired with the same round's "without"; the
# median ratio, its spread and its bootstrap 95 % interval are printed.
#   bench/tamper_hooks.sh [ROUNDS] [THREADS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
ROUNDS=${1:-15}
THREADS=${2:-1}	# a core left free; a figure in docs/ names the count it ran with
OPS=${OPS:-100000}
bench_begin tamper
HELPER=
cleanup() {
	[ -n "$HELPER" ] && kill -TERM "$HELPER" 2>/dev/null	# a coproc is not waited for
	bench_end
}
trap cleanup EXIT
mkdir -p "$OUT/d/a/b/c/d"
echo data >"$OUT/d/a/b/c/d/f"

# storm KIND CONFIG: appends "cpu_ns_per_op wall_ns_per_op" to $OUT/KIND.CONFIG
storm() {
	local target=$OUT/d/a/b/c/d/f
	[ "$1" = unlink ] && target=$OUT/d/a/b/c/d/none
	set -- $("$BUILD/bench/proc_storm" "$1" "$THREADS" "$OPS" "$target") "$1" "$2"
	awk -v n="$1" -v w="$2" -v c="$3" 'BEGIN {printf "%.1f %.1f\n", c / n * 1e9, w / n * 1e9}' \
		>>"$OUT/$4.$5"
}
hooks() { echo "$1" >&"${HOOKS[1]}"; read -r ans <&"${HOOKS[0]}"; [ "$ans" = ok ]; }
config() { hooks "$([ "$1" = with ] && echo on || echo off)"; storm open "$1"; storm unlink "$1"; }

bench_agent "$OUT/agent.err" --pin-dir "$PIN" --no-procfs -o /dev/null
rm -f "$PIN"/link_tamper_open* "$PIN"/link_tamper_unlink* "$PIN"/link_tamper_rename*
coproc HOOKS { exec "$BUILD/bench/tamper_hooks" "$PIN"; }
HELPER=$HOOKS_PID
sleep 2	# start-up is not the storms' cost
config without >/dev/null
rm -f "$OUT"/open.* "$OUT"/unlink.*
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then config with; config without; else config without; config with; fi
done

col() { awk -v c="$1" '{print $c}' "$2"; }
spread() { sort -n | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.3f-%.3f", lo, hi}'; }
echo "tamper_hooks: storms uncapped, $THREADS threads, $OPS operations per thread, $ROUNDS rounds," \
	"with and without side by side in each"
for kind in open unlink; do
	paste "$OUT/$kind.with" "$OUT/$kind.without" | awk '{print $1 / $3}' >"$OUT/r.$kind"
	paste "$OUT/$kind.with" "$OUT/$kind.without" | awk '{print $1 - $3}' >"$OUT/d.$kind"
	printf '%-6s CPU ns/op median: without %.1f, with %.1f; with/without %.3f (%s, 95%% %s), %+.1f ns\n' \
		"$kind" "$(col 1 "$OUT/$kind.without" | median)" "$(col 1 "$OUT/$kind.with" | median)" \
		"$(median "$OUT/r.$kind")" "$(spread <"$OUT/r.$kind")" "$(median_ci <"$OUT/r.$kind")" \
		"$(median "$OUT/d.$kind")"
done
