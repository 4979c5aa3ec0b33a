#!/usr/bin/env bash
# What the cgroup connect hook costs and how fast it refuses, per connect(),
# from a process in a cgroup and a network namespace of this benchmark:
#   allowed connects (loopback, a listening port) without vigild, and with
#   vigild's hook on the cgroup (a policy that does not match them);
#   refusals: the kernel's own (a closed port: RST, ECONNREFUSED) beside
#   vigil's reject (ECONNREFUSED from the hook, no packet) and deny (EPERM).
# Rounds alternate without and with the agent; medians and ratios printed.
#   bench/connect_refuse.sh [CONNECTS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
N=${1:-5000}
ROUNDS=${2:-3}
PIN=/sys/fs/bpf/vigil-bench-cr-$$
NS=vigil-bench-cr-$$
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
CG="$CG2/vigil-bench-cr-$$"
OUT=$(mktemp -d /tmp/vigil-bench.XXXX)
AGENT= SERVER=
cleanup() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	[ -d "$CG" ] && rmdir "$CG"
	"$BUILD/vigil" --pin-dir "$PIN" unpin >/dev/null 2>&1 || true
	rm -rf "$OUT"
}
trap cleanup EXIT

mkdir "$CG"
ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" /usr/bin/python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 39001)); s.listen(4096)
while True: s.accept()[0].close()' &
SERVER=$!
cat >"$OUT/client.py" <<'PY'
import socket, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
t = time.perf_counter()
for i in range(n):
    s = socket.socket()
    try: s.connect(("127.0.0.1", port))
    except OSError: pass
    s.close()
print("%.2f" % ((time.perf_counter() - t) / n * 1e6))
PY
# per_connect PORT: microseconds per connect() from inside the cgroup
per_connect() {
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
		ip netns exec "$NS" /usr/bin/python3 "$OUT/client.py" "$N" "$1"
}
printf 'rules:\n  - {name: deny, action: deny, protocol: tcp, port: 39003, cgroup: %s}\n  - {name: reject, action: reject, protocol: tcp, port: 39004, cgroup: %s}\n' \
	"$CG" "$CG" >"$OUT/policy.yaml"

per_connect 39001 >/dev/null	# warm up
for r in $(seq "$ROUNDS"); do
	per_connect 39001 >>"$OUT/allowed.base"
	per_connect 39002 >>"$OUT/closed.base"
	bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o /dev/null --no-procfs \
		--policy "$OUT/policy.yaml"
	per_connect 39001 >>"$OUT/allowed.hook"
	per_connect 39004 >>"$OUT/reject.hook"
	per_connect 39003 >>"$OUT/deny.hook"
	kill -TERM "$AGENT"; wait "$AGENT" || true; AGENT=
done
echo "connect_refuse: $N connect() calls per measure, $ROUNDS rounds, median us per call"
printf '  %-46s %8s\n' "allowed, no vigild" "$(median "$OUT/allowed.base")" \
	"allowed, vigild's hook on the cgroup" "$(median "$OUT/allowed.hook")" \
	"closed port, the kernel's RST (ECONNREFUSED)" "$(median "$OUT/closed.base")" \
	"vigil reject (ECONNREFUSED, no packet)" "$(median "$OUT/reject.hook")" \
	"vigil deny (EPERM, no packet)" "$(median "$OUT/deny.hook")"
awk -v a="$(median "$OUT/allowed.hook")" -v b="$(median "$OUT/allowed.base")" \
	-v r="$(median "$OUT/reject.hook")" -v c="$(median "$OUT/closed.base")" 'BEGIN {
	printf "  ratio allowed with hook / without          %.2f\n", a / b
	printf "  ratio vigil reject / kernel closed port    %.2f\n", r / c }'
