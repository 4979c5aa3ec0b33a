#!/usr/bin/env bash
# The fuzz targets (tests/fuzz/, docs/fuzzing.md) as tests: every seed and
# every regression case in tests/fuzz/regress/TARGET/ replayed through its
# target (no fuzzing). The reproducers of known bugs not fixed yet
# (tests/fuzz/crash/TARGET/) are replayed as TODO tests. With FUZZ_SECONDS
# set (as .ci/run does), each target is then fuzzed that long.
# The targets are built by `make fuzz-build` (make test does it).
. "$(dirname "$0")/lib.sh"
RUN=$TOP/tests/fuzz/run.sh
# Signed overflow is recoverable in the fuzz build (see run.sh): halt on it.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
targets=$("$RUN" list)
[ -n "$targets" ] || skip_all "no fuzz targets in build/fuzz: run make fuzz-build"

for t in $targets; do
	check "$t: seeds and regression cases replay without a crash" -- "$RUN" replay "$t"
	for f in "$TOP"/tests/fuzz/crash/"$t"/*; do
		[ -f "$f" ] || continue
		# A known bug: this passes once its fix lands (then move the file
		# to tests/fuzz/regress/$t/, docs/fuzzing.md).
		if "$TOP/build/fuzz/fuzz_$t" -runs=1 "$f" >"$T_DIR/$t.$(basename "$f").log" 2>&1; then
			echo "ok $((++_t_n)) - $t: $(basename "$f") no longer crashes # TODO known bug, see docs/fuzzing.md"
		else
			echo "not ok $((++_t_n)) - $t: $(basename "$f") no longer crashes # TODO known bug, see docs/fuzzing.md"
			grep -a -m1 -E 'runtime error|ERROR: AddressSanitizer|bad .* output' "$T_DIR/$t.$(basename "$f").log" | sed 's/^/#   /'
		fi
	done
done
if [ -n "${FUZZ_SECONDS:-}" ]; then
	for t in $targets; do
		check "$t: fuzzed ${FUZZ_SECONDS}s without a crash" -- "$RUN" fuzz "$FUZZ_SECONDS" "$t"
	done
fi
plan "$_t_n"
exit $_t_fail
