#!/usr/bin/env bash
# deny and reject for local processes, through the cgroup connect/sendmsg
# hooks: attached only to a cgroup this test creates, exercised only inside
# a network namespace it creates, on loopback.
. "$(dirname "$0")/lib.sh"
plan 22

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
NS=$(new_netns a) || exit 1

# Two spellings the docs allow, each enforced as it reads: an IPv4-mapped
# block (kept as 127.0.0.0/8: the hooks see mapped peers as IPv4) and a
# cgroup path with a trailing '/'.
cat > "$T_DIR/policy.yaml" <<POL
rules:
  - name: tcp-deny
    action: deny
    protocol: tcp
    cidr: "::ffff:127.0.0.0/104"
    port: 7001
    cgroup: $CG
  - name: tcp-reject
    action: reject
    protocol: tcp
    cidr: [127.0.0.1/32, "::1"]
    port: 7003
    cgroup: ${CG#"$CG2"}
  - name: udp-deny
    action: deny
    protocol: udp
    port: 7002
    cgroup: $CG
  - name: udp-reject
    action: reject
    protocol: udp
    port: 7004
    cgroup: $CG/
  - name: v6-deny
    action: deny
    cidr: "::1"
    port: 7005
    cgroup: $CG
POL

# probe KIND HOST PORT: prints "ok" or the errno name of the failure.
cat > "$T_DIR/probe.py" <<'PY'
import errno, socket, sys
kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
try:
    if kind == "tcp":
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3); s.connect((host, port))
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM); s.sendto(b"x", (host, port))
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
# in_cg ...: runs a probe in the namespace, inside the test's cgroup.
# (The cgroup is joined first: ip netns exec mounts a sysfs of its own.)
in_cg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	ip netns exec "$NS" /usr/bin/python3 "$T_DIR/probe.py" "$@"; }
outside() { ip netns exec "$NS" /usr/bin/python3 "$T_DIR/probe.py" "$@"; }

# Listeners in the namespace, so an allowed connect succeeds.
ip netns exec "$NS" /usr/bin/python3 -c '
import socket, time
ls = []
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    for port in (7001, 7003, 7005, 7009):
        s = socket.socket(fam, socket.SOCK_STREAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port)); s.listen(16); ls.append(s)
time.sleep(900)' &
on_exit "kill $!"
wait_for 5 ip netns exec "$NS" ss -Htln sport = :7009 | grep -q . || sleep 0.5

start_agent -o "$T_DIR/events.json" --no-procfs --policy "$T_DIR/policy.yaml" || exit 1

is "$(in_cg tcp 127.0.0.1 7001)" EPERM "deny: TCP connect refused with EPERM"
is "$(in_cg tcp 127.0.0.1 7003)" ECONNREFUSED "reject: TCP connect refused with ECONNREFUSED"
is "$(in_cg tcp ::1 7003)" ECONNREFUSED "reject: TCP connect over IPv6 refused with ECONNREFUSED"
is "$(in_cg tcp ::1 7005)" EPERM "deny: TCP connect over IPv6 refused with EPERM"
is "$(in_cg tcp ::ffff:127.0.0.1 7001) $(in_cg udp ::ffff:127.0.0.1 7002)" "EPERM EPERM" \
	"IPv4 through an IPv6 socket (::ffff:127.0.0.1) meets the IPv4 rules"
is "$(in_cg udp 127.0.0.1 7002)" EPERM "deny: unconnected UDP sendto refused with EPERM"
is "$(in_cg udp 127.0.0.1 7004)" ECONNREFUSED "reject: unconnected UDP sendto refused with ECONNREFUSED"
is "$(in_cg tcp 127.0.0.1 7009)" ok "a port no rule names connects"
is "$(outside tcp 127.0.0.1 7001)" ok "a process outside the rule's cgroup connects"
is "$(outside udp 127.0.0.1 7002)" ok "and sends"

# Each refusal is counted on its rule.
list=$("$VIGIL" --pin-dir "$T_PIN" policy list)
hits() { awk -v n="$1" '$2 == n { print $7 }' <<<"$list"; }
is "$(hits tcp-deny) $(hits tcp-reject) $(hits udp-deny) $(hits udp-reject) $(hits v6-deny)" "2 2 2 1 1" \
	"vigil policy list counts the hits per rule"

# Each refusal is an event naming the rule, the destination and the process.
ev_deny='.network_enforce | select(.action == "deny" and .reply == "connect_refused" and .protocol == "TCP"
	and .destination_ip == "127.0.0.1" and .destination_port == 7001 and .rule_id == 0
	and (.process.binary | contains("python3")))'
ev_reject6='.network_enforce | select(.action == "reject" and .family == "AF_INET6" and .destination_ip == "::1"
	and .destination_port == 7003 and .rule_id == 1 and .process.pid > 0)'
wait_for 5 event_seen "$T_DIR/events.json" "$ev_deny"; ok $? "deny event: rule, destination, process"
wait_for 5 event_seen "$T_DIR/events.json" "$ev_reject6"; ok $? "reject event over IPv6"

# Stopping the agent leaves enforcement pinned; an agent restarted with the
# policy keeps it; one started without a policy enforces nothing.
stop_agent
is "$(in_cg tcp 127.0.0.1 7001)" EPERM "enforcement outlives the agent (pinned links)"
start_agent -o "$T_DIR/events2.json" --no-procfs --policy "$T_DIR/policy.yaml" || exit 1
is "$(in_cg tcp 127.0.0.1 7001)" EPERM "an agent restarted with the policy enforces it"
is "$("$VIGIL" --pin-dir "$T_PIN" policy list | awk '$2 == "tcp-deny" { print $1, $7 }')" "0 4" \
	"and finds its rules where they were: same id, hits counted on"
# A rule naming the root cgroup is refused, by any spelling. Each file's
# second rule names a namespace that does not exist, so that the load is
# refused whole before anything is attached even if the first one were not.
for root in / . "$(findmnt -nt cgroup2 -o TARGET | head -1)"; do
	cat >"$T_DIR/root.yaml" <<POL
rules:
  - name: root-deny
    action: deny
    protocol: tcp
    cidr: 127.0.0.1/32
    port: 7999
    cgroup: "$root"
  - name: guard
    action: reset
    protocol: tcp
    port: 7998
    netns: vt-nosuch-$$
POL
	out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/root.yaml" 2>&1)
	# "." is refused as a path component before it is looked up.
	[[ "$out" == *"rule 'root-deny': cgroup '$root' is the root cgroup: refused"* ||
	   ( "$root" == . && "$out" == *"root.yaml:7:14: bad cgroup: '.' and '..' path components are refused"* ) ]]
	ok $? "a rule naming the root cgroup as '$root' is refused"
done
stop_agent
start_agent -o "$T_DIR/events3.json" --no-procfs || exit 1
is "$(in_cg tcp 127.0.0.1 7001) $(ls "$T_PIN" | grep -c '^cgroup_')" "ok 0" \
	"a plain vigild clears a pinned policy: it observes only"
stop_agent

# The packet hook tells apart VIGIL_CG_LEVELS (16) cgroup depths: a rule
# naming a deeper cgroup would never match there, so it is refused, naming
# the depth; one level less is taken.
level=$(( $(tr -cd / <<<"${CG#"$CG2"}" | wc -c) ))
deep=$CG
while [ "$level" -lt 15 ]; do deep="$deep/d"; level=$((level + 1)); done
mkdir -p "$deep/d"
for cg in "$deep" "$deep/d"; do
	printf 'rules:\n  - {name: deep, action: deny, cgroup: %s, port: 7001}\n' "$cg" >"$T_DIR/deep.yaml"
	"$VIGILD" --pin-dir "$T_PIN" --no-procfs -o /dev/null -d 0.5 --policy "$T_DIR/deep.yaml" 2>"$T_DIR/deep.err"
	echo "$? $(grep -c "levels below the cgroup v2 root" "$T_DIR/deep.err")"
done >"$T_DIR/deep.out"
is "$(head -1 "$T_DIR/deep.out")" "0 0" "a rule on a cgroup 15 levels deep is taken"
is "$(tail -1 "$T_DIR/deep.out")" "1 1" "one 16 levels deep is refused, naming the depth"
rmdir -p "$deep/d" 2>/dev/null
done_testing
