#!/usr/bin/env bash
# Rules that would cut vigild off from its own work are accepted, with a
# warning at `vigil policy check --send` and at every load: a rule refusing
# its stream to the collector (--send), and one scoped to the cgroup vigild
# runs in. So are rules that can match nothing where they stand (a packet
# rule with no interface enforced on), warned about at check and at load.
. "$(dirname "$0")/lib.sh"
plan 17

CG=$(new_cgroup self) || skip_all "no cgroup v2"
CG_OTHER=$(new_cgroup other) || exit 1
PORT=$((20000 + $$ % 20000))
printf 'rules:
  - {name: cut-stream, action: drop, direction: egress, protocol: tcp, cidr: 127.0.0.0/8, port: %s}
  - {name: own-cg, action: deny, cgroup: %s, cidr: 192.0.2.0/24}
  - {name: elsewhere, action: reject, cidr: 198.51.100.0/24}
' "$PORT" "$CG" >"$T_DIR/w.yaml"
printf 'rules:\n  - {name: harmless, action: deny, cgroup: %s, cidr: 198.51.100.0/24}\n' "$CG_OTHER" >"$T_DIR/quiet.yaml"

# Rules that can match nothing: packet rules where no interface is enforced
# on. Each is named at check, with what would make it match.
printf 'rules:
  - {name: lone-drop, action: drop, cidr: 198.51.100.0/24}
  - {name: lone-reject, action: reject, protocol: tcp, port: 9}
  - {name: lone-reset, action: reset, port: 10}
  - {name: scoped, action: reject, cgroup: %s, port: 11}
' "$CG_OTHER" >"$T_DIR/never.yaml"
out=$("$VIGIL" policy check "$T_DIR/never.yaml" 2>&1); rc=$?
warned() { grep -c "never.yaml:[0-9]*: warning: rule '$1': .*: it matches nothing unless vigild runs with --enforce-on" <<<"$out"; }
is "$rc $(warned lone-drop) $(warned lone-reject) $(warned lone-reset) $(warned scoped)" "0 1 1 1 0" \
	"policy check names each packet rule that can match nothing (and not the cgroup one)"
NS_IF=$(new_netns i) || exit 1
{ cat "$T_DIR/never.yaml"; printf '  - {name: on-lo, action: allow, interfaces: [lo], netns: %s}\n' "$NS_IF"; } >"$T_DIR/some-if.yaml"
out=$("$VIGIL" policy check "$T_DIR/some-if.yaml" 2>&1)
[[ "$out" != *"matches nothing"* ]]; ok $? "no such warning once any rule names an interface (rules apply on every one)"

# check: the stream warning, for the URL given; exit 0 all the same.
out=$("$VIGIL" policy check --send "tcp://127.0.0.1:$PORT" "$T_DIR/w.yaml" 2>&1); rc=$?
is "$rc" 0 "policy check accepts the file"
case "$out" in *"w.yaml:2: warning: rule 'cut-stream' (drop) covers vigild's stream to tcp://127.0.0.1:$PORT (--send)"*) ok 0 "policy check --send warns about the rule covering the stream";;
*) ok 1 "policy check --send warns about the rule covering the stream"; diag "$out";; esac
# (egress only: an ingress rule whose ports meet the ephemeral range warns
# for any collector port, as the replies come in there.)
out=$("$VIGIL" policy check --send "tcp://127.0.0.1:$((PORT + 1))" "$T_DIR/w.yaml" 2>&1)
[[ "$out" != *"covers vigild's stream"* ]]; ok $? "no warning for a port the rule does not cover"
[[ "$out" != *"covers vigild's stream"* ]] || diag "$out"
printf 'rules:\n  - {name: replies, action: drop, direction: ingress, cidr: 127.0.0.1}\n' >"$T_DIR/in.yaml"
out=$("$VIGIL" policy check --send "udp://127.0.0.1:$PORT" "$T_DIR/in.yaml" 2>&1)
[[ "$out" == *"in.yaml:2: warning: rule 'replies' (drop) covers vigild's stream to udp://127.0.0.1:$PORT"* ]]
ok $? "an ingress rule on the collector's address warns (the replies)" || diag "$out"

# The agent, started in the test's cgroup and streaming to PORT (nothing
# listens: it spools).
: >"$T_DIR/agent.err"
bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$CG" \
	"$VIGILD" --pin-dir "$T_PIN" -o "$T_DIR/ev.json" --send "tcp://127.0.0.1:$PORT" \
	--spool-dir "$T_DIR/spool" 2>>"$T_DIR/agent.err" &
AGENT_PID=$!
on_exit "kill -TERM $AGENT_PID; wait $AGENT_PID"
wait_for 20 grep -qs 'attached\|resumed' "$T_DIR/agent.err" || { diag "agent did not start:"; cat "$T_DIR/agent.err"; }
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/w.yaml" 2>&1); rc=$?
is "$rc" 0 "the agent loads the file (warnings do not refuse)"
case "$out" in *"w.yaml:2: warning: rule 'cut-stream' (drop) covers vigild's stream to tcp://127.0.0.1:$PORT (--send)"*) ok 0 "the reply warns about the stream";;
*) ok 1 "the reply warns about the stream"; diag "$out";; esac
case "$out" in *"w.yaml:3: warning: rule 'own-cg' covers vigild's own cgroup ($CG)"*) ok 0 "the reply warns about vigild's own cgroup";;
*) ok 1 "the reply warns about vigild's own cgroup"; diag "$out";; esac
check "the log has the warnings too" -- grep -q "warning: rule 'own-cg'" "$T_DIR/agent.err"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/quiet.yaml" 2>&1)
is "$out" "1 rules in force" "a policy that spares vigild loads without a warning"
# A reset rule on a kernel without bpf_sock_destroy (before 6.5) is taken,
# with a warning that live sockets are not destroyed (only the test's own,
# empty, namespace is named).
NS=$(new_netns w) || exit 1
printf 'rules:\n  - {name: cut, action: reset, netns: %s, cidr: 198.51.100.0/24}\n' "$NS" >"$T_DIR/reset.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/reset.yaml" 2>&1)
if kernel_has FUNC bpf_sock_destroy; then
	is "$out" "1 rules in force" "a reset rule: no warning where the kernel destroys live sockets"
else
	is "$out" "1 rules in force
$T_DIR/reset.yaml:2: warning: rule 'cut': this kernel has no bpf_sock_destroy (6.5+): flows are reset by packets, live local sockets are not destroyed" \
		"a reset rule without bpf_sock_destroy: the reply warns what does not hold"
fi
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/never.yaml" 2>&1)
[[ "$out" == *"never.yaml:2: warning: rule 'lone-drop': drop acts on packets only, and no rule names 'interfaces', and vigild has no --enforce-on: it matches nothing"* ]]
ok $? "a load warns per rule that can match nothing" || diag "$out"
check "and so does the log" -- grep -q "warning: rule 'lone-reset': reset without 'netns'" "$T_DIR/agent.err"
stop_agent; ok $? "the agent stops cleanly"
# An agent with --enforce-on gives packet rules somewhere to act: no warning.
start_agent -o "$T_DIR/ev2.json" --no-procfs --enforce-on "$NS_IF/lo" --policy "$T_DIR/never.yaml" || exit 1
! grep -q "matches nothing" "$T_DIR/agent.err"
ok $? "with --enforce-on, no rule is said to match nothing"
stop_agent; ok $? "that agent stops cleanly"
