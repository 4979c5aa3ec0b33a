#!/usr/bin/env bash
# A socket carried into a cgroup a deny rule names (made outside it, its
# process moved in) keeps the cgroup it was made in, so the cgroup's hooks
# never run for it. When the policy lands, vigild finds such sockets (a
# task_file iterator over the tasks in denied cgroups) and destroys those
# connected to a denied destination, in their own namespace; packet sockets
# held there, which no cgroup hook covers, are reported. Hooks and iterators
# touch only a cgroup and a network namespace this test creates.
. "$(dirname "$0")/lib.sh"
needs sock-destroy
plan 13

[ -n "$(cgroup2_mount)" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
NS=$(new_netns a) || exit 1

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: tcp-deny
    action: deny
    protocol: tcp
    cidr: 127.0.0.1/32
    port: 7001
    cgroup: $CG
POL

# A client: connects to PORT (or, PORT "packet", opens a packet socket),
# writes its pid to DIR/TAG.up, sends TAG three times once DIR/GO (default
# go) exists; what a send raised goes to DIR/TAG.err.
cat >"$T_DIR/client.py" <<'PY'
import errno, os, socket, sys, time
port, tag, d = sys.argv[1], sys.argv[2], sys.argv[3]
go = sys.argv[4] if len(sys.argv) > 4 else "go"
if port == "packet":
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
else:
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
with open(os.path.join(d, tag + ".up"), "w") as f:
    f.write("%d" % os.getpid())
while not os.path.exists(os.path.join(d, go)):
    time.sleep(0.02)
try:
    for _ in range(3):
        if port != "packet":
            s.send((tag + "\n").encode())
        time.sleep(0.1)
except OSError as e:
    with open(os.path.join(d, tag + ".err"), "w") as f:
        f.write(errno.errorcode.get(e.errno, str(e.errno)))
time.sleep(12 if port == "packet" else 2)	# a packet socket outlives rescans
PY
outside() { ip netns exec "$NS" /usr/bin/python3 "$@"; }
in_cg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	ip netns exec "$NS" /usr/bin/python3 "$@"; }

outside "$TOP/tests/deny_server.py" "$T_DIR" &
on_exit "kill $!"
wait_for 5 test -e "$T_DIR/server.ready" || exit 1
start_agent -o "$T_DIR/events.json" --no-procfs ${VT_AGENT_ARGS:-} || exit 1

# Sockets made outside the cgroup; the first three processes then move in.
outside "$T_DIR/client.py" 7001 carried "$T_DIR" &
outside "$T_DIR/client.py" 7009 allowed "$T_DIR" &
outside "$T_DIR/client.py" packet packet "$T_DIR" &
outside "$T_DIR/client.py" 7001 stays "$T_DIR" &
# And one made inside: no hook covers a packet socket wherever it was made.
in_cg "$T_DIR/client.py" packet packet-in "$T_DIR" &
wait_for 5 test -e "$T_DIR/carried.up" -a -e "$T_DIR/allowed.up" -a -e "$T_DIR/packet.up" \
	-a -e "$T_DIR/stays.up" -a -e "$T_DIR/packet-in.up" || exit 1
sleep 0.1	# the pids are written
P_CARRIED=$(cat "$T_DIR/carried.up") P_ALLOWED=$(cat "$T_DIR/allowed.up") P_PACKET=$(cat "$T_DIR/packet.up")
for p in $P_CARRIED $P_ALLOWED $P_PACKET; do echo "$p" >"$CG/cgroup.procs" || exit 1; done

"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/policy.yaml" >/dev/null || exit 1
counter() { "$VIGIL" --pin-dir "$T_PIN" status | awk -v n="$1" '$1 == n { print $2 }'; }

touch "$T_DIR/go"
sleep 1.5
check "a socket carried into the cgroup, to the denied port: nothing it sends arrives" -- \
	test -z "$(grep carried "$T_DIR/recv.7001" 2>/dev/null)"
is "$(cat "$T_DIR/carried.err" 2>/dev/null)" ECONNABORTED "its owner sees it ended (ECONNABORTED)"
is "$(counter enforce_carried_destroyed)" 1 "counted (enforce_carried_destroyed)"
check "the agent says so, naming the rule" -- \
	grep -q "deny rule 'tcp-deny': 1 sockets carried into its cgroup destroyed" "$T_DIR/agent.err"
is "$(grep -c allowed "$T_DIR/recv.7009" 2>/dev/null)" 3 "a socket carried in to a port no rule denies still sends"
is "$(grep -c stays "$T_DIR/recv.7001" 2>/dev/null)" 3 "a socket whose process stays outside the cgroup still sends"
is "$(counter enforce_packet_sockets_found)" 2 "packet sockets held in the cgroup, carried in or made there, are counted (enforce_packet_sockets_found)"
P_PACKET_IN=$(cat "$T_DIR/packet-in.up")
reported() { grep -q "deny rule 'tcp-deny': pid $1 holds a packet socket (AF_PACKET), which deny does not cover" \
	"$T_DIR/agent.err"; }
check "and reported, with their holders" -- eval "reported $P_PACKET && reported $P_PACKET_IN"

# A socket carried in after the policy landed: found by the next rescan.
outside "$T_DIR/client.py" 7001 late "$T_DIR" go.late &
wait_for 5 test -s "$T_DIR/late.up" || exit 1
sleep 0.1
cat "$T_DIR/late.up" >"$CG/cgroup.procs" || exit 1
T0=$SECONDS
wait_for 10 grep -q "deny rule 'tcp-deny': 1 sockets carried into its cgroup destroyed.*pid $(cat "$T_DIR/late.up")" \
	"$T_DIR/agent.err"
ok $? "a socket carried in after the policy landed is destroyed by the next rescan ($((SECONDS - T0)) s)"
touch "$T_DIR/go.late"
wait_for 5 test -s "$T_DIR/late.err"
is "$(cat "$T_DIR/late.err" 2>/dev/null):$(grep -c late "$T_DIR/recv.7001" 2>/dev/null)" ECONNABORTED:0 \
	"its owner sees ECONNABORTED, nothing it sends arrives"
is "$(grep -c "holds a packet socket" "$T_DIR/agent.err")" 2 "each packet socket is reported once, not at every rescan"
hits=$("$VIGIL" --pin-dir "$T_PIN" policy list | awk '$2 == "tcp-deny" { print $7 }')
check "the destroyed socket is a hit of the rule ($hits)" -- test "${hits:-0}" -ge 1
stop_agent
ok $? "the agent stops cleanly"
done_testing
