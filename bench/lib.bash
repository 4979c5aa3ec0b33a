# shellcheck shell=bash
# Helpers for bench/*.sh (not itself a *.sh, so bench/run.sh does not run it):
# medians and their intervals, and an agent started and waited for.
median() { # median [FILE]: the median of the numbers, one a line
	sort -n "$@" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
# The median's 95 % interval, by bootstrap (2000 resamples of the rounds):
# how far the machine's noise leaves the figure from what it measures.
median_ci() { # median_ci: the numbers on stdin, one a line
	awk 'function med(b, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j - 1] > b[j]; j--) { t = b[j]; b[j] = b[j - 1]; b[j - 1] = t }
		return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
	{ a[NR] = $1 }
	END { srand(1); for (k = 1; k <= 2000; k++) { for (i = 1; i <= NR; i++) b[i] = a[int(rand() * NR) + 1]; m[k] = med(b, NR) }
	      n = 2000; for (i = 2; i <= n; i++) for (j = i; j > 1 && m[j - 1] > m[j]; j--) { t = m[j]; m[j] = m[j - 1]; m[j - 1] = t }
	      printf "%.3f-%.3f", m[int(n * 0.025)], m[int(n * 0.975)] }'
}
# bench_agent_at VIGILD ERRFILE ARGS...: starts that vigild in the
# background (AGENT set; another build's, for a baseline beside this one),
# returns once it is attached; fails with its log if it stops first.
bench_agent_at() {
	local bin=$1 err=$2; shift 2
	"$bin" "$@" 2>"$err" &
	AGENT=$!
	until grep -qs 'attached\|resumed' "$err"; do
		kill -0 "$AGENT" 2>/dev/null || { cat "$err" >&2; return 1; }
		sleep 0.05
	done
}
# bench_agent ERRFILE ARGS...: bench_agent_at with this build's vigild.
bench_agent() { bench_agent_at "$BUILD/vigild" "$@"; }
# bench_agent_teardown: stops AGENT, if one runs, and removes the pins
# under PIN (the bench scripts' cleanup, beside their own).
bench_agent_teardown() {
	[ -n "${AGENT-}" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	"$BUILD/vigil" --pin-dir "$PIN" unpin >/dev/null 2>&1 || true
}
# bench_begin NAME: this run's pin folder PIN (vigil-bench-NAME-PID) and
# temp folder OUT, no AGENT yet, and bench_end on exit. A script with more
# to stop (a helper process) traps its own cleanup, which ends in bench_end.
bench_begin() {
	PIN=/sys/fs/bpf/vigil-bench-$1-$$
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench-$1.XXXX")
	AGENT=
	trap bench_end EXIT
}
# bench_end: stops AGENT, removes the pins under PIN and the folder OUT.
bench_end() {
	bench_agent_teardown
	rm -rf "$OUT"
}
# bench_net_teardown: stops AGENT, removes the pins under PIN, and kills
# what runs in the namespace NS and removes it (bench/net*.sh's storms).
bench_net_teardown() {
	bench_agent_teardown
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9
	ip netns del "$NS" 2>/dev/null || true
}
