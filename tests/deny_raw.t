#!/usr/bin/env bash
# deny means no packet leaves: in a cgroup a deny rule names, raw sockets
# (TCP, UDP, IPv6) and ICMP ping sockets are refused at creation
# (cgroup/sock_create), and a socket connected before the rule was loaded
# has its packets to the denied destination dropped (cgroup_skb/egress).
# Hooks attached only to a cgroup this test creates; traffic only on the
# loopback of a namespace it creates.
. "$(dirname "$0")/lib.sh"
plan 14

[ -n "$(cgroup2_mount)" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
NS=$(new_netns a) || exit 1
# Ping sockets for every group, in this namespace only.
ip netns exec "$NS" sysctl -qw net.ipv4.ping_group_range="0 2147483647" || exit 1

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: tcp-deny
    action: deny
    protocol: tcp
    cidr: 127.0.0.1/32
    port: 7001
    cgroup: $CG
POL

cat >"$T_DIR/probe.py" <<'PY'
import errno, socket, sys
fams = {"4": socket.AF_INET, "6": socket.AF_INET6, "p": socket.AF_PACKET}
kinds = {"raw-tcp": (socket.SOCK_RAW, socket.IPPROTO_TCP), "raw-udp": (socket.SOCK_RAW, socket.IPPROTO_UDP),
         "raw-icmp": (socket.SOCK_RAW, socket.IPPROTO_ICMP), "ping4": (socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
         "ping6": (socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6), "udp": (socket.SOCK_DGRAM, 0),
         "tcp": (socket.SOCK_STREAM, 0), "packet": (socket.SOCK_RAW, 0)}
out = []
for arg in sys.argv[1:]:
    fam, kind = arg.split(":")
    try:
        socket.socket(fams[fam], *kinds[kind]).close()
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode.get(e.errno, str(e.errno)))
print(" ".join(out))
PY
# A client: connects to PORT, writes its pid to DIR/TAG.up, sends TAG once
# DIR/go exists; a send that fails ends it.
cat >"$T_DIR/client.py" <<'PY'
import os, socket, sys, time
port, tag, d = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
with open(os.path.join(d, tag + ".up"), "w") as f:
    f.write("%d" % os.getpid())
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
try:
    for _ in range(3):
        s.send((tag + "\n").encode()); time.sleep(0.1)
except OSError:	# destroyed (a socket carried in)
    pass
time.sleep(2)
PY
in_cg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	ip netns exec "$NS" /usr/bin/python3 "$@"; }
outside() { ip netns exec "$NS" /usr/bin/python3 "$@"; }

outside "$TOP/tests/deny_server.py" "$T_DIR" &
on_exit "kill $!"
wait_for 5 test -e "$T_DIR/server.ready" || exit 1
start_agent -o "$T_DIR/events.json" --no-procfs || exit 1

# Before any rule: connections from inside the cgroup (to the port the rule
# will deny, and to one it will not) and from outside, carried in after.
in_cg "$T_DIR/client.py" 7001 pre "$T_DIR" &
in_cg "$T_DIR/client.py" 7009 allowed "$T_DIR" &
outside "$T_DIR/client.py" 7001 carried "$T_DIR" &
wait_for 5 test -s "$T_DIR/pre.up" -a -s "$T_DIR/allowed.up" -a -s "$T_DIR/carried.up" || exit 1
# The python process itself (the job's pid is a subshell's).
cat "$T_DIR/carried.up" >"$CG/cgroup.procs" || exit 1

"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null || exit 1
counter() { "$VIGIL" --pin-dir "$T_PIN" status | awk -v n="$1" '$1 == n { print $2 }'; }

is "$(in_cg "$T_DIR/probe.py" 4:raw-tcp 4:raw-udp 6:raw-tcp 6:raw-udp 4:raw-icmp)" "EPERM EPERM EPERM EPERM EPERM" \
	"in the cgroup: raw sockets (TCP, UDP, IPv6, ICMP) refused with EPERM"
is "$(in_cg "$T_DIR/probe.py" 4:ping4 6:ping6)" "EPERM EPERM" "in the cgroup: ping sockets refused with EPERM"
is "$(in_cg "$T_DIR/probe.py" 4:tcp 4:udp 6:tcp 6:udp)" "ok ok ok ok" "in the cgroup: TCP and UDP sockets are made"
is "$(outside "$T_DIR/probe.py" 4:raw-tcp 4:ping4 6:ping6)" "ok ok ok" "outside the cgroup: raw and ping sockets are made"
is "$(counter enforce_raw_sockets_refused)" 7 "each refusal counted (enforce_raw_sockets_refused)"

touch "$T_DIR/go"
sleep 1.5
got() { cat "$T_DIR/recv.$1" 2>/dev/null | sort | uniq -c | awk '{ printf "%s%s x%d", s, $2, $1; s = " " }'; }
is "$(got 7009)" "allowed x3" "a connection to a port no rule denies, made before the rule, still sends"
check "a connection made in the cgroup before the rule: its packets to the denied port are dropped" -- \
	test -z "$(grep pre "$T_DIR/recv.7001" 2>/dev/null)"
dropped=$(counter enforce_egress_dropped)
check "the backstop counts them (enforce_egress_dropped $dropped)" -- test "${dropped:-0}" -ge 3
# A socket keeps the cgroup it was made in, so the cgroup's hooks never run
# for it: the policy's landing destroyed it (agent/enforce/enforce_carried.c;
# tests/deny_carried.t has the details).
if kernel_has FUNC bpf_sock_destroy; then
	check "a socket made outside and carried in: nothing it sends arrives" -- \
		test -z "$(grep carried "$T_DIR/recv.7001" 2>/dev/null)"
else
	skip "no bpf_sock_destroy kfunc (Linux 6.5 or later): a socket carried into the cgroup is not destroyed here"
fi
# Packet sockets are not inet sockets: cgroup/sock_create does not run.
if [ "$(in_cg "$T_DIR/probe.py" p:packet)" = ok ]; then
	echo "not ok 10 - in the cgroup: packet sockets refused # TODO cgroup/sock_create does not see AF_PACKET"
else
	echo "ok 10 - in the cgroup: packet sockets refused"
fi
_t_n=10
hits=$("$VIGIL" --pin-dir "$T_PIN" policy list | awk '$2 == "tcp-deny" { print $7 }')
check "the rule counts refusals and drops as hits ($hits)" -- test "${hits:-0}" -ge 10

# Unloading the policy detaches the hooks: raw and ping sockets again.
cat >"$T_DIR/none.yaml" <<'POL'
rules:
  - { name: other, action: drop, protocol: tcp, cidr: 192.0.2.1/32, port: 9 }
POL
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/none.yaml" >/dev/null
is "$(in_cg "$T_DIR/probe.py" 4:raw-tcp 4:ping4)" "ok ok" "no deny rule names the cgroup: raw and ping sockets are made"
is "$(ls "$T_PIN" | grep -c '^cgroup_')" 0 "and no cgroup hook is left pinned"
stop_agent
ok $? "the agent stops cleanly"
done_testing
