#!/usr/bin/env bash
# The packet path's costs and speeds, in namespaces this script creates:
#   1. connect() to failure: vigil reject (RST from TC) vs drop (timeout);
#   2. rule load to both ends reset, busy and idle flows through a router
#      (tests/reset_router.t's measurements);
#   3. RSTs per second and CPU per RST for a capped SYN stream at a rejected
#      port, from a sender namespace across veth: vigil TC, vigil XDP,
#      nftables `reject with tcp reset`, and the kernel's own RST for a
#      closed port; ratios against nftables.
# Over veth the receiving side's work runs, by default, on the sending CPU,
# so the sender would be the bottleneck and every variant would answer at
# the sender's rate. Here it cannot be: the receiving veth runs threaded NAPI
# (GRO on, so it has NAPI without XDP), its thread pinned to CPU 1, and the
# sender pinned to CPU 0: bench/syn_sender, the kernel's XDP packet generator
# (BPF_PROG_TEST_RUN, live frames), capped at PPS for SECONDS. (trafgen, an
# AF_PACKET sender, topped out near 450k SYNs/s here, below what TC and XDP
# answer, and its frames lack the headroom XDP needs, so veth copied each
# one before vigil's XDP program saw it.)
# The RSTs are taken off the sender's veth by an XDP_DROP program and
# counted there. "Busy" is the share of the time the receiving NAPI thread
# ran: near 100 %, it is the bottleneck, and RSTs/s is what that variant can
# answer on one core. Rounds of the four variants are interleaved; medians.
# A kernel that refuses live XDP frames to BPF_PROG_TEST_RUN gets
# syn_sender's AF_PACKET sender; the line "sender:" beside the ratios says
# which ran.
#   bench/reject.sh [PPS] [SECONDS] [ROUNDS]
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
PPS=${1:-3000000}
SECS=${2:-3}
ROUNDS=${3:-3}
# tests/lib.sh gives namespaces, pins and cleanup on any exit.
. tests/lib.sh
. tests/enforce_lib.sh
T_PIN=/sys/fs/bpf/vigil-bench-reject-$$	# bpffs names take no '.'

enf_pair c s || exit 1
PORT=9999
cat >"$T_DIR/policy.yaml" <<'YAML'
rules:
  - name: syn-target
    action: reject
    direction: ingress
    protocol: tcp
    port: 9999
  - name: drop-target
    action: drop
    direction: ingress
    protocol: tcp
    port: 8081
YAML

# Raises the reply limits (per rule, per source) of every active rule for
# PORT to 2^31-1/s, so the limiter is not what is measured; events keep
# their default limit (100/s), as they would in use. (A reload may have put
# the rule in another slot: every slot is looked at.)
raise_limits() {
	bpftool map dump pinned "$T_PIN/vigil_rules" -j | "$PY" -c '
import json, struct, sys
port = int(sys.argv[1])
for e in json.load(sys.stdin):
    f = e.get("formatted", e)
    v = f["value"]
    if isinstance(v, dict):
        raw = struct.pack("<BBHHH", v["action"], v["proto"], v["flags"], v["port_lo"], v["port_hi"])
    else:
        raw = bytes(int(x, 16) for x in v[:8])
    action, proto, flags, lo, hi = struct.unpack("<BBHHH", raw)
    if flags & 1 and lo <= port <= hi:
        key = f["key"] if isinstance(f["key"], int) else int(f["key"][0], 16)
        # replies unlimited; events keep their default limit, as in use
        print(key, " ".join(str(b) for b in raw + struct.pack("<6I", *[2**31 - 1] * 4, 0, 0)))
' "$PORT" | while read -r key value; do
		# shellcheck disable=SC2086
		bpftool map update pinned "$T_PIN/vigil_rules" key "$key" 0 0 0 value $value ||
			echo "raising rule $key's limits failed: figures are the limiter's" >&2
	done
}

# RSTs taken off the sender's veth by the XDP_DROP sink.
rx_rsts() { ip netns exec "$NS_c" ethtool -S vc | awk '/rx_queue_0_xdp_drops:/ {print $2}'; }

# napi_thread IFACE CPU: IFACE's NAPI thread, pinned to CPU (attaching XDP
# makes a new one). Exactly one, or the figures would be someone else's.
napi_thread() {
	local p
	p=$(pgrep -x "napi/$1-[0-9]+") || { echo "no NAPI thread for $1" >&2; return 1; }
	[ "$(wc -w <<<"$p")" = 1 ] || { echo "several NAPI threads named $1: $p" >&2; return 1; }
	taskset -pc "$2" "$p" >/dev/null && echo "$p"
}
ran_ns() { awk '{print $1}' "/proc/$1/schedstat"; }

# stream NAME: the SYN stream; prints "NAME offered_pps rsts_per_s ns_cpu_per_rst busy_pct"
stream() {
	local napi r0 c0 r1 c1 start end sent sender out
	napi=$(napi_thread vs 1) || return 1
	r0=$(rx_rsts); c0=$(ran_ns "$napi"); start=$(date +%s%N)
	out=$(taskset -c 0 timeout $((SECS + 10)) ip netns exec "$NS_c" "$BUILD/bench/syn_sender" vc \
		"$(mac_of "$NS_c" vc)" "$(mac_of "$NS_s" vs)" 10.77.0.1 10.77.0.2 "$PORT" "$PPS" "$SECS") || return 1
	read -r sent sender <<<"$out"
	echo "$sender" >>"$T_DIR/senders"
	sleep 0.2
	end=$(date +%s%N); r1=$(rx_rsts); c1=$(ran_ns "$napi")
	awk -v n="$1" -v tx="$sent" -v rx=$((r1 - r0)) -v cpu=$((c1 - c0)) -v ns=$((end - start)) 'BEGIN {
		printf "%s %.0f %.0f %.0f %.0f\n", n, tx * 1e9 / ns, rx * 1e9 / ns, rx ? cpu / rx : 0, cpu * 100 / ns }'
}

echo "# 1. connect() to failure (20 connects each; drop: one, 3 s timeout)"
conn_ms() { # conn_ms PORT N TIMEOUT: median ms of N connects
	ip netns exec "$NS_c" "$PY" - "$@" <<'PY'
import socket, sys, time
port, n, to = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ts = []
for _ in range(n):
    s = socket.socket(); s.settimeout(to); t0 = time.monotonic()
    try: s.connect(("10.77.0.2", port))
    except (ConnectionRefusedError, socket.timeout): pass
    ts.append((time.monotonic() - t0) * 1000); s.close()
print("%.3f" % sorted(ts)[len(ts) // 2])
PY
}
# vigil's links outlive vigild: each variant ends with its pins removed, so
# that the next one, nftables or the kernel, answers alone.
agent_off() { stop_agent; "$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null; }
start_agent --no-procfs -o /dev/null --policy "$T_DIR/policy.yaml" --enforce-on "$NS_s/vs" || exit 1
rej=$(conn_ms $PORT 20 3)
drp=$(conn_ms 8081 1 3)
echo "reject: ${rej} ms   drop: ${drp} ms (timeout)   ratio drop/reject: $(awk -v a="$drp" -v b="$rej" 'BEGIN{printf "%.0f", a / b}')x"

echo "# 3. SYN stream, offered up to ${PPS} pps for ${SECS} s, answered on one core (see the top), ${ROUNDS} rounds"
# The receiving side: threaded NAPI on vs; the RST sink on vc (it answers no
# ARP now, so nftables' routed RSTs get vc's address from a static entry).
ip netns exec "$NS_s" ethtool -K vs gro on >/dev/null
ip netns exec "$NS_s" sh -c 'echo 1 >/sys/class/net/vs/threaded' || exit 1
ip -n "$NS_s" neigh replace 10.77.0.1 lladdr "$(mac_of "$NS_c" vc)" dev vs nud permanent
ip netns exec "$NS_c" "$BUILD/bench/xdp_pass" --drop vc || exit 1
# The sink runs in CPU 1's softirq, after the rejecting side's work: an XDP
# drop, next to nothing, except for nftables' replies, skbs with too little
# headroom that veth copies first (about 5 % of nftables' time per RST).
# On CPU 0 instead, the sink's NAPI thread costs CPU 1 a wakeup (an IPI)
# per reply, or, polling on a timer, competes with the sender and drops
# replies while it waits its turn: worse figures for every variant.
agent_off
nft_on() {
	ip netns exec "$NS_s" nft -f - <<NFT
table inet vigil_bench {
	chain input {
		type filter hook input priority 0;
		tcp dport $PORT reject with tcp reset
	}
}
NFT
}
# Rounds of the four, interleaved, so drift in the machine's state weighs on
# each alike; the medians are compared.
: >"$T_DIR/streams"
for round in $(seq "$ROUNDS"); do
	start_agent --no-procfs -o /dev/null --policy "$T_DIR/policy.yaml" --enforce-on "$NS_s/vs" || exit 1
	raise_limits
	sleep 1	# the agent's start-up is not the figure
	stream vigil-tc >>"$T_DIR/streams" || exit 1
	agent_off
	start_agent --no-procfs -o /dev/null --policy "$T_DIR/policy.yaml" --enforce-on "$NS_s/vs:xdp" || exit 1
	raise_limits
	sleep 1
	stream vigil-xdp >>"$T_DIR/streams" || exit 1
	agent_off
	nft_on
	stream nftables >>"$T_DIR/streams" || exit 1
	ip netns exec "$NS_s" nft delete table inet vigil_bench
	stream kernel-closed-port >>"$T_DIR/streams" || exit 1
done
ip netns exec "$NS_c" "$BUILD/bench/xdp_pass" -d vc
echo "rounds (variant offered_pps RSTs/s ns_CPU/RST busy_%):"
sed 's/^/  /' "$T_DIR/streams"
"$PY" - "$T_DIR/streams" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, *v = line.split()
    rows.setdefault(name, []).append([float(x) for x in v])
med = {n: [statistics.median(c) for c in zip(*r)] for n, r in rows.items()}
print("medians:")
print("  %-20s %12s %10s %11s %6s" % ("variant", "offered_pps", "RSTs/s", "ns_CPU/RST", "busy_%"))
for n, m in med.items():
    print("  %-20s %12.0f %10.0f %11.0f %6.0f" % (n, *m))
tc, xdp, nft = med["vigil-tc"], med["vigil-xdp"], med["nftables"]
print("RSTs/s vs nftables: TC %.2fx, XDP %.2fx (targets 1.5x, 3x)" % (tc[1] / nft[1], xdp[1] / nft[1]))
if nft[2]:
    print("CPU per RST vs nftables (lower is better): TC %.2fx, XDP %.2fx" % (tc[2] / nft[2], xdp[2] / nft[2]))
else:  # the AF_PACKET sender's frames went up on the sending CPU, not the NAPI thread
    print("CPU per RST vs nftables: not measured (the receiving NAPI thread did not run them)")
PY
echo "sender: $(sort -u "$T_DIR/senders" | tr '\n' ' ')(xdp_live_frames: the kernel's XDP generator; af_packet: its fallback, frames veth copies before XDP)"

echo "# 2. rule load to both ends reset (A -- R -- B, tests/reset_router.t)"
prove -v tests/reset_router.t 2>/dev/null | grep 'reset after'
exit 0
