#!/usr/bin/env bash
# Runs the fuzz targets built in build/fuzz (make fuzz-build).
#   run.sh replay [TARGET...]         every seed and regression case once
#   run.sh fuzz SECONDS [TARGET...]   fuzz each for SECONDS (after a replay);
#                                     a crash fails, its input is left in
#                                     build/fuzz/crash/TARGET/
#   run.sh list                       the targets' names
# TARGET is a name without "fuzz_": hello, records, event, collector, policy.
# The growing corpus is build/fuzz/corpus/TARGET (kept between runs);
# libFuzzer's output goes to build/fuzz/log/TARGET.log.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
F=$top/build/fuzz
# Signed overflows are recoverable in the fuzz build: a fuzz run goes on
# past one and fails afterwards unless its place (file:line:) is listed
# here, for a known overflow not fixed yet (none now).
KNOWN_UB=''
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

targets() { for b in "$F"/fuzz_*; do [ -x "$b" ] && basename "$b" | sed 's/^fuzz_//'; done; }

# Seed folders per target: the hello parser also starts from whole streams.
seeds() {
	case $1 in
	hello) echo "$F/seeds/hello $F/seeds/records" ;;
	*) echo "$F/seeds/$1" ;;
	esac
}
# Per target: the largest input worth trying, a dictionary when there is one.
opts() {
	case $1 in
	hello) echo "-max_len=4200" ;;
	records) echo "-max_len=20000" ;;
	event) echo "-max_len=12000" ;;
	collector) echo "-max_len=70000" ;;
	policy) echo "-max_len=4096 -dict=$top/tests/fuzz/policy.dict" ;;
	esac
}

replay() { # replay TARGET: 0 when no input crashes it
	local t=$1 files
	mapfile -t files < <(find $(seeds "$t") "$top/tests/fuzz/regress/$t" -type f 2>/dev/null | sort)
	[ ${#files[@]} -gt 0 ] || return 0
	mkdir -p "$F/log"
	"$F/fuzz_$t" -runs=1 "${files[@]}" >"$F/log/$t.replay.log" 2>&1 ||
		{ tail -40 "$F/log/$t.replay.log" >&2; return 1; }
}

fuzz() { # fuzz TARGET SECONDS
	local t=$1 secs=$2 rc
	mkdir -p "$F/corpus/$t" "$F/crash/$t" "$F/log"
	# shellcheck disable=SC2046
	UBSAN_OPTIONS=halt_on_error=0:print_stacktrace=1 \
	"$F/fuzz_$t" -max_total_time="$secs" -timeout=10 -print_final_stats=1 -close_fd_mask=3 \
		-artifact_prefix="$F/crash/$t/" $(opts "$t") "$F/corpus/$t" $(seeds "$t") \
		>"$F/log/$t.log" 2>&1
	rc=$?
	# shellcheck disable=SC2086
	if grep -a 'runtime error:' "$F/log/$t.log" | grep -av -F "${KNOWN_UB:-"no known place"}" >&2; then
		echo "$t: undefined behaviour (above) in a fuzz run; see $F/log/$t.log" >&2
		rc=1
	fi
	grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::average_exec_per_sec' "$F/log/$t.log" |
		sed "s/^/$t: /"
	if [ $rc -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|^    #[0-9]' "$F/log/$t.log" | head -30 >&2
		[ -z "$(ls "$F/crash/$t")" ] || echo "$t: crash inputs in $F/crash/$t/: $(ls -t "$F/crash/$t" | head -3)" >&2
	fi
	return $rc
}

cmd=${1:-}; shift || true
case $cmd in
list) targets ;;
replay)
	rc=0
	for t in ${*:-$(targets)}; do replay "$t" || { echo "$t: a seed or regression case fails" >&2; rc=1; }; done
	exit $rc ;;
fuzz)
	secs=${1:?seconds}; shift
	rc=0
	for t in ${*:-$(targets)}; do fuzz "$t" "$secs" || rc=1; done
	exit $rc ;;
*) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac
