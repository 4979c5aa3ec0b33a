#!/bin/bash
# Port rules cover every protocol with ports at L4 offsets 0 and 2. Crafted
# UDP-Lite, SCTP INIT and DCCP Request frames (scapy) to a port a
# `protocol: any` drop rule names are dropped at TC and at XDP, IPv4 and
# IPv6 (enforce_drops counts them), a UDP-Lite header cut to 3 bytes is
# dropped as truncated; the same frames to a port no rule names are not
# counted. The egress backstop (cgroup_skb/egress) drops a connected
# UDP-Lite socket's datagrams to a denied port (enforce_egress_dropped);
# SCTP and DCCP sockets are tried the same way where the kernel has them,
# and skipped with the reason where it has not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/enforce_lib.sh"
plan 16

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
enf_pair c s || exit 1		# vigil's TC on s/vs
enf_pair c3 s3 || exit 1	# vigil's XDP on s3/vs
ip netns exec "$NS_c3" "$TOP/$BUILD/bench/xdp_pass" vc || exit 1
NS=$(new_netns lo) || exit 1	# the cgroup hooks' loopback

cat >"$T_DIR/policy.yaml" <<YAML
rules:
  - { name: any-7000, action: drop, direction: ingress, protocol: any, port: 7000 }
  - { name: deny-7100, action: deny, protocol: any, port: 7100, cgroup: $CG }
YAML
start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" \
	--enforce-on "$NS_s/vs" --enforce-on "$NS_s3/vs:xdp" || exit 1

counter() { "$VIGIL" --pin-dir "$T_PIN" status | awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'; }
# sent C S DST PORT: the L4 shapes from C; prints what enforce_drops and
# enforce_unparsed_truncated counted meanwhile.
sent() {
	local src d0 t0
	[[ $3 == *:* ]] && src=fd77::1 || src=10.77.0.1
	d0=$(counter enforce_drops) t0=$(counter enforce_unparsed_truncated)
	ip netns exec "$1" "$PY" "$EPEER" l4 vc "$(mac_of "$2" vs)" $src "$3" "$4" >/dev/null
	sleep 0.2
	echo "drop $(($(counter enforce_drops) - d0)) truncated $(($(counter enforce_unparsed_truncated) - t0))"
}
for hook in tc xdp; do
	if [ $hook = tc ]; then c=$NS_c s=$NS_s; else c=$NS_c3 s=$NS_s3; fi
	for dst in 10.77.0.2 fd77::2; do
		is "$(sent "$c" "$s" $dst 7000)" "drop 4 truncated 1" \
			"$hook, $dst: UDP-Lite, SCTP and DCCP to a dropped port are dropped; a cut header as truncated (4 drops)"
		is "$(sent "$c" "$s" $dst 7001)" "drop 1 truncated 1" \
			"$hook, $dst: to a port no rule names, only the cut header is dropped"
	done
done
# An event names the rule's port and the frame's source port.
wait_for 5 event_seen "$T_DIR/events.json" \
	'.network_enforce | select(.action == "drop" and .destination_port == 7000 and .source_port > 43000)'
ok $? "an enforce event for such a drop, with its ports"

# The cgroup hooks: a socket of each protocol in the rule's cgroup, to a
# denied port on loopback. PROBE PROTO HOST PORT prints "connect:R send:R
# got:N" (R ok or an errno name; N the bytes a server of that protocol got),
# or "skip: WHY" when the kernel has no such socket.
ip -n "$NS" link set lo up
cat >"$T_DIR/probe.py" <<'PY'
import errno, socket, sys
proto, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
kind = {"udplite": (socket.SOCK_DGRAM, 136), "sctp": (socket.SOCK_STREAM, 132),
        "dccp": (6, 33)}[proto]   # DCCP is SOCK_DCCP (6)
def err(e): return errno.errorcode.get(e.errno, str(e.errno))
try:
    srv = socket.socket(fam, *kind)
except OSError as e:
    print("skip: this kernel has no %s sockets (%s)" % (proto, err(e))); sys.exit(0)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((host, port))
if kind[0] != socket.SOCK_DGRAM:
    srv.listen(1)
srv.settimeout(1)
c = socket.socket(fam, *kind)
c.settimeout(2)
res = []
try:
    c.connect((host, port)); res.append("connect:ok")
except OSError as e:
    res.append("connect:" + err(e))
try:
    c.send(b"lite"); res.append("send:ok")
except OSError as e:
    res.append("send:" + err(e))
got = 0
try:
    if kind[0] == socket.SOCK_DGRAM:
        got = len(srv.recv(100))
    else:
        a, _ = srv.accept(); a.settimeout(1); got = len(a.recv(100))
except OSError:
    pass
res.append("got:%d" % got)
print(" ".join(res))
PY
in_cg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	ip netns exec "$NS" /usr/bin/python3 "$T_DIR/probe.py" "$@"; }
for proto in udplite sctp dccp; do
	for host in 127.0.0.1 ::1; do
		before=$(counter enforce_egress_dropped)
		got=$(in_cg $proto $host 7100)
		after=$(counter enforce_egress_dropped)
		diag "$proto $host: $got; egress dropped +$((after - before))"
		case $got in
		skip:*) skip "$proto $host: ${got#skip: }" ;;
		*connect:EPERM*) is "${got##* }" "got:0" "$proto $host: refused at connect, nothing arrives" ;;
		*) is "${got##* } $((after - before > 0))" "got:0 1" \
			"$proto $host: connected, but the backstop drops what it sends (enforce_egress_dropped)" ;;
		esac
	done
done
# The control: outside the cgroup the same UDP-Lite exchange arrives.
got=$(ip netns exec "$NS" /usr/bin/python3 "$T_DIR/probe.py" udplite 127.0.0.1 7100)
is "${got##* }" "got:4" "UDP-Lite outside the rule's cgroup arrives (the control)"
stop_agent
done_testing
