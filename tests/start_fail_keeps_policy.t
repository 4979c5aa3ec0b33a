#!/usr/bin/env bash
# A start that fails leaves the policy it found: with a policy pinned by an
# earlier agent (enforcing with no agent running), each fallible step of a
# new start is made to fail in turn; afterwards the pinned rule maps have
# the same ids and contents, the same hooks stay attached, and a connect the
# policy refuses is still refused. One row per step: rule kinds and steps
# added later join the tables below. Test-owned cgroup, namespaces, veth.
. "$(dirname "$0")/lib.sh"

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
NS=$(new_netns a) || exit 1
NS_B=$(new_netns b) || exit 1
VA="sfa$$"; VB="sfb$$"
ip link add "$VA" netns "$NS" type veth peer name "$VB" netns "$NS_B" || exit 1
ip -n "$NS" addr add 10.98.0.1/24 dev "$VA"; ip -n "$NS" link set "$VA" up
ip -n "$NS_B" addr add 10.98.0.2/24 dev "$VB"; ip -n "$NS_B" link set "$VB" up

# Every rule kind there is: a cgroup deny and reject, a packet reject on an
# interface, a reset with a namespace, an exec rule (scoped by the test's
# cgroup and a binary in its folder); secret words (`redact:`) and export
# filters (`filters:`).
cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: cg-deny
    action: deny
    protocol: tcp
    cidr: 127.0.0.1/32
    port: 7101
    cgroup: $CG
  - name: cg-reject
    action: reject
    protocol: udp
    port: 7102
    cgroup: $CG
  - name: if-reject
    action: reject
    protocol: tcp
    port: 8080
    interfaces: [$VB]
    netns: $NS_B
  - name: ns-reset
    action: reset
    protocol: tcp
    port: 7103
    netns: $NS
  - name: exec-kill
    on: exec
    binary: { in: [$T_DIR/killme] }
    cgroup: $CG
    action: sigkill
redact:
  urls: false
  words: [vt-secret-word]
filters:
  - name: quiet-killme
    action: deny
    kinds: [exit]
    binary: $T_DIR/killme
    cgroup: $CG
  - name: only-ns
    action: allow
    kinds: [listen]
    netns: $NS
POL
cp /bin/true "$T_DIR/killme"
printf 'rules:\n  - name: bad\n    action: deny\n    port: 99999\n' >"$T_DIR/bad.yaml"
printf 'filters:\n  - name: bad\n    action: deny\n    cgroup: /vigil-no-such-cgroup-%s\n' $$ >"$T_DIR/bad-filter.yaml"

# The rows: a name, then vigild's arguments that make that step fail.
# A collector that accepts, so that --send gets as far as the spool.
ip netns exec "$NS" /usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 17461)); s.listen(16); time.sleep(600)' &
on_exit "kill $!"
declare -a ROWS=(
	"spool folder|--send tcp://127.0.0.1:17461 --spool-dir $T_DIR/nonexistent/sub"
	"spool folder, same policy|--policy $T_DIR/policy.yaml --send tcp://127.0.0.1:17461 --spool-dir $T_DIR/nonexistent/sub"
	"export file|-o /proc/vigil-nope/events.json"
	"TLS files|--send tls://127.0.0.1:17461 --tls-cert $T_DIR/none.pem --tls-key $T_DIR/none.key --tls-ca $T_DIR/none.ca"
	"interface|--enforce-on $NS/nosuchif0"
	"namespace|--enforce-on vt-no-such-ns-$$/lo"
	"policy file that is bad|--policy $T_DIR/bad.yaml"
	"policy file that is not there|--policy $T_DIR/none.yaml"
	"filter whose cgroup is not there|--policy $T_DIR/bad-filter.yaml"
	"collector name|--send tcp://no-such-host.invalid:9"
	"TC objects, for --enforce-on|--enforce-on $NS_B/lo"
	"TC objects, for the policy's interfaces|--policy $T_DIR/policy.yaml"
)
# The TC rows: a map the TC objects pin (vigil_flows) stands in the folder
# with another shape, as after an upgrade that changed it, so that their
# load is refused by name; the real one is put back after the row.
tc_refused() {
	mv "$T_PIN/vigil_flows" "$T_PIN/saved_flows" &&
		bpftool map create "$T_PIN/vigil_flows" type hash key 4 value 4 entries 1 name vigil_flows
}
tc_restored() { rm -f "$T_PIN/vigil_flows" && mv "$T_PIN/saved_flows" "$T_PIN/vigil_flows"; }
plan $((6 + 5 * ${#ROWS[@]}))

# The state a start must not change: every pinned map the policy is written
# to (its id and its entries; not the hit counters and rate-limit buckets,
# which the probes move) and every pinned link of the policy (its id).
state() {
	local p
	for p in "$T_PIN"/vigil_rules "$T_PIN"/vigil_rule_cgroup "$T_PIN"/vigil_pol4 "$T_PIN"/vigil_pol6 \
		"$T_PIN"/vigil_prules "$T_PIN"/vigil_pconf "$T_PIN"/vigil_pstate "$T_PIN"/vigil_pstr \
		"$T_PIN"/vigil_redact_conf "$T_PIN"/vigil_redact_keys "$T_PIN"/vigil_filter_conf \
		"$T_PIN"/vigil_filter_keys "$T_PIN"/vigil_filter_bin; do
		[ -e "$p" ] || continue
		echo "$(basename "$p") $(bpftool map show pinned "$p" -j | jq .id)"
		bpftool map dump pinned "$p" -j | jq -c 'sort_by(.key | tostring)'
	done
	for p in "$T_PIN"/cgroup_* "$T_PIN"/enforce_link_* "$T_PIN"/link_proc_policy_*; do
		[ -e "$p" ] && echo "$(basename "$p") $(bpftool link show pinned "$p" -j | jq .id)"
	done
}
# probe PORT: a TCP connect to 127.0.0.1:PORT from the test's cgroup, in its
# namespace: "ok" or the errno name.
probe() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	ip netns exec "$NS" /usr/bin/python3 -c '
import errno, socket, sys
s = socket.socket(); s.settimeout(3)
try: s.connect(("127.0.0.1", int(sys.argv[1]))); print("ok")
except OSError as e: print(errno.errorcode.get(e.errno, str(e.errno)))' "$1"; }
# The exec rule: the test's binary run in its cgroup; its exit status.
probe_exec() { sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2"' sh "$CG" "$T_DIR/killme"; echo $?; }
# The packet rule on the interface: a connect from NS to NS_B:8080.
probe_if() { ip netns exec "$NS" /usr/bin/python3 -c '
import errno, socket
s = socket.socket(); s.settimeout(3)
try: s.connect(("10.98.0.2", 8080)); print("ok")
except OSError as e: print(errno.errorcode.get(e.errno, "timeout"))'; }

start_agent --no-procfs -o "$T_DIR/events.json" --policy "$T_DIR/policy.yaml" || exit 1
stop_agent
before=$(state)
# With no agent, `vigil policy list` reads the pinned rules, and says so.
list=$("$VIGIL" --pin-dir "$T_PIN" policy list 2>"$T_DIR/list.err"); rc=$?
[ $rc -eq 0 ] && grep -q "vigild is not running; the rules pinned in $T_PIN still enforce" "$T_DIR/list.err" &&
	[ "$(awk '$1 ~ /^[0-9]+$/ && $3 !~ /^(post|nopost|signal|sigkill)$/ { print $2 }' <<<"$list" | tr '\n' ' ')" = "deny reject reject reset " ] &&
	grep -q '^0 .*deny .*tcp .*7101 .*egress 127.0.0.1/32 cgroup=#' <<<"$list"
ok $? "with the agent stopped, policy list shows the pinned rules" || diag "$list"
grep -qE '^[0-9]+ +exec-kill +sigkill +enforce ' <<<"$list"
ok $? "and the exec and file rules in force, by name" || diag "$list"
[ "$(grep -c '^cgroup_\|^enforce_link_' <<<"$before")" -ge 2 ] || ! has_tcx
ok $? "the policy is pinned: $(grep -c '^vigil_' <<<"$before") rule maps, $(grep -c '^cgroup_\|^enforce_link_' <<<"$before") links"
is "$(probe 7101)" EPERM "with no agent running, the pinned policy refuses a denied connect"
is "$(probe_exec)" 137 "with no agent running, the pinned exec rule kills its binary"
if has_tcx; then
	is "$(probe_if)" ECONNREFUSED "and the interface rule answers with a reset"
else
	skip "no TCX (before 6.6): interface rules do not outlive the agent"
fi

for row in "${ROWS[@]}"; do
	name=${row%%|*}
	case $name in "TC objects"*) tc_refused || diag "cannot stand a map in vigil_flows' place" ;; esac
	# shellcheck disable=SC2086
	"$VIGILD" --pin-dir "$T_PIN" --no-procfs -d 5 ${row#*|} >"$T_DIR/out" 2>"$T_DIR/err"
	rc=$?
	case $name in "TC objects"*) tc_restored ;; esac
	[ $rc -ne 0 ]
	ok $? "$name: the start fails (exit $rc: $(grep -v '^libbpf' "$T_DIR/err" | tail -1))"
	after=$(state)
	[ "$after" = "$before" ]
	ok $? "$name: the pinned rule maps and links are as they were"
	[ "$after" = "$before" ] || diff <(echo "$before") <(echo "$after") | cut -c1-200 | head -8 | sed 's/^/#   /' 
	is "$(probe 7101)" EPERM "$name: a denied connect is still refused"
	is "$(probe_exec)" 137 "$name: the exec rule still kills"
	if has_tcx; then
		is "$(probe_if)" ECONNREFUSED "$name: the interface rule still answers"
	else
		skip "no TCX (before 6.6)"
	fi
done
done_testing
