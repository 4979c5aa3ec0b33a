#!/usr/bin/env bash
# A rule's interfaces and namespaces put vigil's TC programs there, from the
# policy alone (no --enforce-on): a client in namespace A connecting to a
# port a reject rule names on B's interface gets ECONNREFUSED at once. An
# interface that is not there refuses the policy whole. Only namespaces and
# a veth pair this test creates.
. "$(dirname "$0")/lib.sh"
plan 22

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
# enforced_on SRC DST EVENTS: a connect from A (SRC) to DST:8080 meets
# vigil's reject: its event shows in EVENTS.
enforced_on() {
	ip netns exec "$NS_A" /usr/bin/python3 -c '
import socket, sys; s = socket.socket(); s.settimeout(2)
try: s.connect((sys.argv[1], 8080))
except OSError: pass' "$2"
	wait_for 5 grep -q "\"network_enforce\":.*\"source_ip\":\"$1\"" "$3"
}

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
is "$(head -1 <<<"$out")" "1 rules in force" "the policy naming B's interface is loaded"
if has_tcx; then
	is "$(sed 1d <<<"$out")" "" "with no warning"
else
	is "$(sed 1d <<<"$out")" "$T_DIR/reject.yaml:2: warning: rule 'closed-8080': this kernel has no TCX links (6.6+): its interfaces get clsact filters, removed when vigild stops" \
		"with a warning: enforcement does not outlive the agent here"
fi
read -r res ms < <(connect)
is "$res" ECONNREFUSED "A's connect to the rejected port: ECONNREFUSED (RST from TC on B's interface)"
[ "$ms" -lt 1000 ]; ok $? "at once ($ms ms), not after a timeout"

# vigil's hooks on the test's interfaces: pinned TCX links, or on a kernel
# without TCX (before 6.6) vigil's clsact filters, which are not pinned.
# "Links" below means either.
links() {
	if has_tcx; then
		ls "$T_PIN" 2>/dev/null | grep -c '^enforce_link_'
	else
		for ns in "$NS_B" ${NS_C:+"$NS_C"}; do for d in ingress egress; do
			tc -n "$ns" filter show dev "$VB" $d 2>/dev/null; done; done | grep -c "handle 0x7669"
	fi
}
is "$(links)" 2 "B's interface has its two links (TC ingress and egress; without TCX, clsact filters)"
"$VIGIL" --pin-dir "$T_PIN" policy unload "$T_DIR/reject.yaml" >/dev/null
read -r res ms < <(connect)
is "$res" ok "the rule unloaded: connections are made again"
is "$(links)" 0 "the policy no longer names B's interface: its links are detached (and unpinned)"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/reject.yaml" >/dev/null

# B's namespace deleted and made again under its name, with an interface of
# the same name and index and a clsact of someone else's: the stopping agent
# must leave it alone, and the next one must enforce on the new interface,
# not on the old one (its links are pinned by the old namespace's cookie).
ifindex=$(ip -n "$NS_B" -o link show "$VB" | cut -d: -f1)
ip netns del "$NS_B" && ip netns add "$NS_B" && ip -n "$NS_B" link set lo up
ip link add "$VB" netns "$NS_B" type veth peer name "${VA}x" netns "$NS_A" || exit 1
ip -n "$NS_B" addr add 10.98.0.2/24 dev "$VB"; ip -n "$NS_B" link set "$VB" up
ip -n "$NS_A" addr add 10.98.0.1/24 dev "${VA}x"; ip -n "$NS_A" link set "${VA}x" up
tc -n "$NS_B" qdisc add dev "$VB" clsact || exit 1
is "$(ip -n "$NS_B" -o link show "$VB" | cut -d: -f1)" "$ifindex" "the new namespace's $VB has the old index"
stop_agent
is "$(tc -n "$NS_B" qdisc show dev "$VB" | grep -c clsact)" 1 \
	"agent stopped: the new namespace's clsact is left alone"
mv "$T_DIR/agent.err" "$T_DIR/agent1.err"
start_agent -o "$T_DIR/events2.json" --no-procfs --policy "$T_DIR/reject.yaml" || exit 1
enforced_on 10.98.0.1 10.98.0.2 "$T_DIR/events2.json"
ok $? "restarted: the new namespace's $VB is enforced on (vigil's reject event)"
is "$(links)" 2 "and only its two links are there: the old namespace's were removed"

# B's interface moved to another namespace (a link goes with its device)
# and a new one made in B with the same index: the next agent must not
# take the moved device's link for B's interface.
stop_agent
NS_C=$(new_netns c) || exit 1
ip -n "$NS_B" link set "$VB" netns "$NS_C" || exit 1
ip link add "$VB" index "$ifindex" netns "$NS_B" type veth peer name "${VA}y" netns "$NS_A" || exit 1
ip -n "$NS_B" addr add 10.97.0.2/24 dev "$VB"; ip -n "$NS_B" link set "$VB" up
ip -n "$NS_A" addr add 10.97.0.1/24 dev "${VA}y"; ip -n "$NS_A" link set "${VA}y" up
mv "$T_DIR/agent.err" "$T_DIR/agent2.err"
start_agent -o "$T_DIR/events4.json" --no-procfs --policy "$T_DIR/reject.yaml" || exit 1
if has_tcx; then
	grep -q "no longer on $VB in $NS_B (its device went or moved): made again" "$T_DIR/agent.err"
	ok $? "moved away: the pinned link no longer on B's $VB is made again"
else
	skip "this kernel has no TCX links (Linux 6.6+): no pinned link to move"
fi
enforced_on 10.97.0.1 10.97.0.2 "$T_DIR/events4.json"
ok $? "and B's new $VB is enforced on"
stop_agent
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null

# An interface named both by a policy and by --enforce-on is refused (the
# second would take the first's links over with its own options), and the
# refused start leaves nothing it made behind. (Under TCG, 6.1's verifier
# alone takes seconds per program: the bound scales with T_SLOW.)
timeout $((20 * T_SLOW)) "$VIGILD" --pin-dir "$T_PIN" --no-procfs -o "$T_DIR/events3.json" --policy "$T_DIR/reject.yaml" \
	--enforce-on "$NS_B/$VB" 2>"$T_DIR/twice.err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$VB in $NS_B is enforced on already" "$T_DIR/twice.err"
ok $? "an interface named by a policy and by --enforce-on: the start is refused, naming it"
is "$(links)" 0 "the refused start leaves no enforcement link"

# A start that fails after its interfaces are attached (its --send cannot
# be resolved) leaves nothing it made behind either.
timeout $((20 * T_SLOW)) "$VIGILD" --pin-dir "$T_PIN" --no-procfs -o "$T_DIR/events5.json" --policy "$T_DIR/reject.yaml" \
	--send tcp://nonexistent.invalid:9 2>"$T_DIR/send.err"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(links)" = 0 ]
ok $? "a start that fails late leaves no enforcement link (exit $rc)"

# A reload refused because one of its interfaces is --enforce-on's takes
# back the links it made for the others.
start_agent -o "$T_DIR/events6.json" --no-procfs --enforce-on "$NS_C/$VB" || exit 1
sed "s|netns: $NS_B|netns: [$NS_B, $NS_C]|" "$T_DIR/reject.yaml" >"$T_DIR/two.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/two.yaml" 2>&1)
[ $? -ne 0 ] && is "$(links)" 2 "a refused reload takes back the links it made: only --enforce-on's 2 stay"
# The same namespace spelled anew by a reload keeps its links.
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/reject.yaml" >/dev/null
sed "s|netns: $NS_B|netns: /run/netns/$NS_B|" "$T_DIR/reject.yaml" >"$T_DIR/respelled.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/respelled.yaml" 2>&1)
is "$(head -1 <<<"$out")" "1 rules in force" "a reload naming B's namespace by its path is taken"
is "$(links)" 4 "and keeps B's links (2, beside --enforce-on's 2)"
enforced_on 10.97.0.1 10.97.0.2 "$T_DIR/events6.json"
ok $? "and B's $VB is still enforced on"
stop_agent
done_testing
