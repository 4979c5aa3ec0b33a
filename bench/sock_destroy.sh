#!/usr/bin/env bash
# Time from a reset rule landing to every matching live local socket having
# seen its error: N loopback connections in a namespace of this benchmark,
# destroyed by vigild's socket iterators (`vigil policy load`) and, side by
# side as the baseline, by the kernel's sock_diag destroy (`ss -K`), the
# same connections rebuilt for each round. Prints medians and the ratio.
#   bench/sock_destroy.sh [CONNECTIONS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
BUILD=${BUILD:-build}
N=${1:-2000}
ROUNDS=${2:-3}
PORT=38123
PIN=/sys/fs/bpf/vigil-bench-sd-$$
NS=vigil-bench-sd-$$
OUT=$(mktemp -d /tmp/vigil-bench.XXXX)
AGENT= PAIRS=
cleanup() {
	[ -n "$PAIRS" ] && kill "$PAIRS" 2>/dev/null
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	"$BUILD/vigil" --pin-dir "$PIN" unpin >/dev/null 2>&1 || true
	rm -rf "$OUT"
}
trap cleanup EXIT

ip netns add "$NS"
ip -n "$NS" link set lo up
cat >"$OUT/pairs.py" <<'PY'
import select, socket, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(4096)
cs, ss = [], []
for i in range(n):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    cs.append(c); ss.append(ls.accept()[0])
time.sleep(0.2)
print("ready", flush=True)
p = select.epoll()
for c in cs: p.register(c.fileno(), select.EPOLLERR | select.EPOLLHUP)
left, end = n, time.time() + 30
while left and time.time() < end:
    for fd, ev in p.poll(1.0):
        p.unregister(fd); left -= 1
print("done %d %.6f" % (n - left, time.time()), flush=True)
PY
printf 'rules: []\n' >"$OUT/empty.yaml"
printf 'rules:\n  - {name: cut, action: reset, direction: egress, protocol: tcp, port: %s, netns: %s}\n' \
	"$PORT" "$NS" >"$OUT/reset.yaml"
now() { echo "$EPOCHREALTIME"; }	# the clock pairs.py reads: time.time()

# round KIND: builds N connections, ends them, prints the milliseconds the
# command took (both destroy before they return) and until the last client
# socket saw its error.
round() {
	ip netns exec "$NS" /usr/bin/python3 "$OUT/pairs.py" "$N" "$PORT" >"$OUT/pairs.out" &
	PAIRS=$!
	until grep -q ready "$OUT/pairs.out"; do sleep 0.05; done
	local t0; t0=$(now)
	if [ "$1" = vigil ]; then
		"$BUILD/vigil" --pin-dir "$PIN" policy load "$OUT/reset.yaml" >/dev/null
	else
		ip netns exec "$NS" ss -K dst 127.0.0.1 dport = :"$PORT" >/dev/null 2>&1
	fi
	local tc; tc=$(now)
	wait "$PAIRS"; PAIRS=
	read -r _ got t1 < <(grep done "$OUT/pairs.out")
	[ "$got" = "$N" ] || { echo "only $got of $N sockets saw an error ($1)" >&2; exit 1; }
	[ "$1" = vigil ] && "$BUILD/vigil" --pin-dir "$PIN" policy load "$OUT/empty.yaml" >/dev/null
	awk -v a="$t0" -v b="$t1" -v c="$tc" 'BEGIN { printf "%.2f %.2f\n", (c - a) * 1000, (b - a) * 1000 }'
}
column() { cut -d' ' -f"$1" | median; }

bench_agent "$OUT/agent.err" --pin-dir "$PIN" --unpin-on-exit -o /dev/null --no-procfs
for r in $(seq "$ROUNDS"); do
	round ss >>"$OUT/ss"
	round vigil >>"$OUT/vigil"
done
echo "sock_destroy: $N established connections, $ROUNDS rounds, medians in ms"
echo "                             command   last ECONNABORTED seen"
for k in ss vigil; do
	printf '  %-26s %8s %10s\n' "$([ $k = ss ] && echo 'ss -K (sock_diag)' || echo 'vigil policy load (reset)')" \
		"$(column 1 <"$OUT/$k")" "$(column 2 <"$OUT/$k")"
done
awk -v a="$(column 1 <"$OUT/vigil")" -v b="$(column 1 <"$OUT/ss")" \
	'BEGIN { printf "  ratio vigil/ss (command)   %.2f\n", a / b }'
