#!/usr/bin/env bash
# The packet path's costs and speeds, in namespaces this script creates:
#   1. connect() to failure: vigil reject (RST from TC) vs drop (timeout);
#   2. rule load to both ends reset, busy and idle flows through a router
#      (tests/reset_router.t's measurements);
#   3. RSTs per second and CPU per RST for a capped SYN stream (trafgen, one
#      CPU, slow mode) from a sender namespace across veth at a rejected
#      port: vigil TC, vigil XDP, nftables `reject with tcp reset`, and the
#      kernel's own RST for a closed port; ratios against nftables.
# The sender shares the machine (2 cores) with the answering side: figures
# are ratios taken side by side, not absolutes.
#   bench/reject.sh [PPS] [SECONDS]
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
PPS=${1:-100000}
SECS=${2:-3}
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

cpu_busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }	# user nice sys irq softirq
# RSTs back at the sender: TCP segments its stack took in (the interface's
# counters miss frames a veth peer sent with XDP_TX).
rx_pkts() { ip netns exec "$NS_c" awk '/^Tcp:/ && $11 ~ /^[0-9]+$/ { print $11 }' /proc/net/snmp; }
tx_pkts() { ip -n "$NS_c" -s -j link show vc | jq '.[0].stats64.tx.packets'; }

# stream NAME: the SYN stream; prints "NAME offered_pps rsts_per_s jiffies_per_1k_rst"
stream() {
	local smac r0 t0 c0 r1 t1 c1 start end el
	smac=$(mac_of "$NS_s" vs)
	r0=$(rx_pkts); t0=$(tx_pkts); c0=$(cpu_busy); start=$(date +%s%N)
	timeout $((SECS + 10)) ip netns exec "$NS_c" trafgen -o vc --cpus 1 -b "${PPS}pps" -n $((PPS * SECS)) \
		"{ eth(da=$smac), ipv4(sa=10.77.0.1, da=10.77.0.2), tcp(syn, sp=40000, dp=$PORT) }" \
		>/dev/null 2>&1
	sleep 0.2
	end=$(date +%s%N); r1=$(rx_pkts); t1=$(tx_pkts); c1=$(cpu_busy)
	el=$(( (end - start) / 1000000 ))
	awk -v n="$1" -v tx=$((t1 - t0)) -v rx=$((r1 - r0)) -v cpu=$((c1 - c0)) -v ms="$el" 'BEGIN {
		printf "%s %.0f %.0f %.3f\n", n, tx * 1000 / ms, rx * 1000 / ms, rx ? cpu * 1000 / rx : 0 }'
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
start_agent --no-procfs -o /dev/null --policy "$T_DIR/policy.yaml" --enforce-on "$NS_s/vs" || exit 1
rej=$(conn_ms $PORT 20 3)
drp=$(conn_ms 8081 1 3)
echo "reject: ${rej} ms   drop: ${drp} ms (timeout)   ratio drop/reject: $(awk -v a="$drp" -v b="$rej" 'BEGIN{printf "%.0f", a / b}')x"

echo "# 3. SYN stream at ${PPS} pps for ${SECS} s; columns: offered pps, RSTs/s, CPU jiffies per 1000 RSTs"
raise_limits
tc=$(stream vigil-tc)
stop_agent
start_agent --no-procfs -o /dev/null --policy "$T_DIR/policy.yaml" --enforce-on "$NS_s/vs:xdp" || exit 1
raise_limits
# XDP_TX on veth reaches the peer only when it runs NAPI: an XDP program.
ip netns exec "$NS_c" "$BUILD/bench/xdp_pass" vc
xdp=$(stream vigil-xdp)
ip netns exec "$NS_c" "$BUILD/bench/xdp_pass" -d vc
stop_agent
ip netns exec "$NS_s" nft -f - <<NFT
table inet vigil_bench {
	chain input {
		type filter hook input priority 0;
		tcp dport $PORT reject with tcp reset
	}
}
NFT
nft=$(stream nftables)
ip netns exec "$NS_s" nft delete table inet vigil_bench
kern=$(stream kernel-closed-port)
printf '%s\n' "$tc" "$xdp" "$nft" "$kern" | column -t
awk -v tc="$tc" -v xdp="$xdp" -v nft="$nft" 'BEGIN {
	split(tc, a); split(xdp, b); split(nft, c)
	printf "RSTs/s vs nftables: TC %.2fx, XDP %.2fx\n", a[3] / c[3], b[3] / c[3]
	printf "CPU per RST vs nftables (lower is better): TC %.2fx, XDP %.2fx\n", a[4] / c[4], b[4] / c[4] }'

echo "# 2. rule load to both ends reset (A -- R -- B, tests/reset_router.t)"
prove -v tests/reset_router.t 2>/dev/null | grep 'reset after'
exit 0
