# shellcheck shell=bash
# Helpers for bench/*.sh (not itself a *.sh, so bench/run.sh does not run it):
# medians, and an agent started and waited for.
median() { # median [FILE]: the median of the numbers, one a line
	sort -n "$@" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
# bench_agent ERRFILE ARGS...: starts vigild in the background (AGENT set),
# returns once it is attached; fails with its log if it stops first.
bench_agent() {
	local err=$1; shift
	"$BUILD/vigild" "$@" 2>"$err" &
	AGENT=$!
	until grep -q 'attached\|resumed' "$err"; do
		kill -0 "$AGENT" 2>/dev/null || { cat "$err" >&2; return 1; }
		sleep 0.05
	done
}
