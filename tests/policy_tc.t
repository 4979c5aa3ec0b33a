#!/usr/bin/env bash
# A rule's interfaces and namespaces put vigil's TC programs there, from the
# policy alone (no --enforce-on): a client in namespace A connecting to a
# port a reject rule names on B's interface gets ECONNREFUSED at once. An
# interface that is not there refuses the policy whole. Only namespaces and
# a veth pair this test creates.
. "$(dirname "$0")/lib.sh"
plan 9

NS_A=$(new_netns a) || exit 1
NS_B=$(new_netns b) || exit 1
VA="va$$"; VB="vb$$"
ip link add "$VA" netns "$NS_A" type veth peer name "$VB" netns "$NS_B" || exit 1
ip -n "$NS_A" addr add 10.99.0.1/24 dev "$VA"; ip -n "$NS_A" link set "$VA" up
ip -n "$NS_B" addr add 10.99.0.2/24 dev "$VB"; ip -n "$NS_B" link set "$VB" up
ip netns exec "$NS_B" /usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.99.0.2", 8080)); s.listen(16)
while True: s.accept()[0].close()' &
on_exit "kill $!"
connect() { # prints ok or the errno name, and the milliseconds it took
	ip netns exec "$NS_A" /usr/bin/python3 -c '
import errno, socket, time
t = time.monotonic(); s = socket.socket(); s.settimeout(3)
try: s.connect(("10.99.0.2", 8080)); r = "ok"
except OSError as e: r = errno.errorcode.get(e.errno, "timeout")
print(r, int((time.monotonic() - t) * 1000))'
}
wait_for 5 sh -c "ip netns exec $NS_B ss -Htln | grep -q 10.99.0.2:8080"

cat >"$T_DIR/reject.yaml" <<POL
rules:
  - name: closed-8080
    action: reject
    direction: ingress
    protocol: tcp
    port: 8080
    interfaces: $VB
    netns: $NS_B
POL
sed "s/interfaces: $VB/interfaces: nosuch0/" "$T_DIR/reject.yaml" >"$T_DIR/nosuch.yaml"

start_agent -o "$T_DIR/events.json" --no-procfs || exit 1
read -r res ms < <(connect)
is "$res" ok "before the policy: the connection is made"

out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/nosuch.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"nosuch.yaml:2: rule 'closed-8080': interface 'nosuch0' not found in network namespace '$NS_B'"* ]]
ok $? "an interface that is not there refuses the policy, with its position"

out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/reject.yaml")
is "$out" "1 rules in force" "the policy naming B's interface is loaded"
read -r res ms < <(connect)
is "$res" ECONNREFUSED "A's connect to the rejected port: ECONNREFUSED (RST from TC on B's interface)"
[ "$ms" -lt 1000 ]; ok $? "at once ($ms ms), not after a timeout"

"$VIGIL" --pin-dir "$T_PIN" policy unload "$T_DIR/reject.yaml" >/dev/null
read -r res ms < <(connect)
is "$res" ok "the rule unloaded: connections are made again (the programs pass them)"

# B's namespace deleted and made again under its name, with an interface of
# the same name and index and a clsact of someone else's: the stopping agent
# must leave it alone (its links went with the old namespace's interface).
ifindex=$(ip -n "$NS_B" -o link show "$VB" | cut -d: -f1)
ip netns del "$NS_B" && ip netns add "$NS_B" && ip -n "$NS_B" link set lo up
ip link add "$VB" netns "$NS_B" type veth peer name "${VA}x" netns "$NS_A" || exit 1
ip -n "$NS_B" link set "$VB" up
tc -n "$NS_B" qdisc add dev "$VB" clsact || exit 1
is "$(ip -n "$NS_B" -o link show "$VB" | cut -d: -f1)" "$ifindex" "the new namespace's $VB has the old index"
stop_agent
is "$(tc -n "$NS_B" qdisc show dev "$VB" | grep -c clsact)" 1 \
	"agent stopped: the new namespace's clsact is left alone"

# An interface named both by a policy and by --enforce-on is refused (the
# second would take the first's links over with its own options).
timeout 20 "$VIGILD" --pin-dir "$T_PIN" --no-procfs -o "$T_DIR/events2.json" --policy "$T_DIR/reject.yaml" \
	--enforce-on "$NS_B/$VB" 2>"$T_DIR/twice.err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$VB in $NS_B is enforced on already" "$T_DIR/twice.err"
ok $? "an interface named by a policy and by --enforce-on: the start is refused, naming it"
done_testing
