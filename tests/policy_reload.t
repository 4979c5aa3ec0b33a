#!/usr/bin/env bash
# Reloads: SIGHUP and `vigil policy load` put a new policy in force whole, or
# refuse it with file:line:column and keep the one in force; a start with a
# bad policy fails before anything changes. Enforcement is observed through
# the cgroup sendmsg hook (unconnected UDP), in a cgroup and a network
# namespace this test creates.
. "$(dirname "$0")/lib.sh"
plan 25

[ -n "$(cgroup2_mount)" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup client) || exit 1
NS=$(new_netns a) || exit 1
P="$T_DIR/p.yaml"

udp_rule() { # udp_rule NAME PORT: a policy denying UDP sends to PORT
	printf 'rules:\n  - name: %s\n    action: deny\n    protocol: udp\n    port: %s\n    cgroup: %s\n' "$1" "$2" "$CG"
}
send_to() { # prints ok or the errno name of sendto(127.0.0.1:PORT) from the cgroup
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" ip netns exec "$NS" \
		/usr/bin/python3 -c '
import errno, socket, sys
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", int(sys.argv[1]))); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1"
}
names() { "$VIGIL" --pin-dir "$T_PIN" policy list | awk 'NR > 1 { printf "%s ", $2 }'; }
hits() { "$VIGIL" --pin-dir "$T_PIN" policy list | awk -v n="$1" '$2 == n { print $7 }'; }
hup_and_wait() { # hup_and_wait PATTERN: SIGHUP, then waits for one more log line matching it
	local before; before=$(grep -c -- "$1" "$T_DIR/agent.err")
	kill -HUP "$AGENT_PID"
	wait_for 5 sh -c "[ \$(grep -c -- '$1' '$T_DIR/agent.err') -gt $before ]"
}

# A bad policy at start: refused with its position, the agent does not run.
printf 'rules:\n  - action: deny\n    port: 1-2-3\n' >"$T_DIR/bad-start.yaml"
out=$("$VIGILD" --pin-dir "$T_PIN" -o /dev/null --no-procfs --policy "$T_DIR/bad-start.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"bad-start.yaml:3:11: bad port"* ]]; ok $? "vigild refuses to start on a bad policy, with its position"
[ ! -e "$T_PIN" ]; ok $? "and loads nothing: no pins"

udp_rule udp-7001 7001 >"$P"
start_agent -o "$T_DIR/events.json" --no-procfs --policy "$P" || exit 1
is "$(names)" "udp-7001 " "the --policy file is in force"
is "$(send_to 7001)" EPERM "and enforced"

# A broken edit and SIGHUP: refused, named, the old rules stay.
printf 'rules:\n  - name: udp-7002\n    action: deny\n    protocool: udp\n' >"$P"
hup_and_wait "SIGHUP: policy refused"
grep -q "p.yaml:4:5: unknown key 'protocool' in a rule (did you mean 'protocol'?)" "$T_DIR/agent.err"; ok $? "SIGHUP with a broken file: refused with file:line:column"
is "$(names)" "udp-7001 " "the rules in force stay"
is "$(send_to 7001)" EPERM "and are still enforced"

# The same through the CLI.
printf 'rules:\n  - action: deny\n    cgroup: %s\n    cidr: 10.0.0.0/33\n' "$CG" >"$T_DIR/bad.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/bad.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"bad.yaml:4:11: bad CIDR: the prefix length must be 0-32"*"unchanged"* ]]; ok $? "vigil policy load of a broken file: refused with its position"
is "$(names)" "udp-7001 " "the rules in force stay"

# A cgroup that does not exist is found out before anything changes.
printf 'rules:\n  - action: deny\n    cgroup: /vigil-no-such-cgroup-%s\n' "$$" >"$T_DIR/nocg.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/nocg.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"nocg.yaml:2: rule 'nocg.yaml:2': cgroup '/vigil-no-such-cgroup-"*"not a cgroup v2 directory"* ]]; ok $? "a rule naming a missing cgroup is refused"
is "$(send_to 7001)" EPERM "and the rules in force stay enforced"

# A good edit and SIGHUP: the new policy replaces the old one.
udp_rule udp-7002 7002 >"$P"
hup_and_wait "policy: 1 rules from 1 files in force"
is "$(names)" "udp-7002 " "SIGHUP with a good file: its rules are in force"
is "$(send_to 7001) $(send_to 7002)" "ok EPERM" "and enforced, the old ones gone"

# Hit counters survive a reload that keeps the rule.
hup_and_wait "policy: 1 rules from 1 files in force"
is "$(hits udp-7002)" 1 "a rule unchanged by a reload keeps its hit counter"

# Reloads swap policies whole: rules shift position back and forth while a
# process keeps sending to the port a rule denies throughout; not one send
# may pass. The rule's hits follow it across the slots it takes.
udp_rule udp-7002 7002 >"$T_DIR/a.yaml"
{ printf 'rules:\n  - {name: first, action: deny, protocol: udp, port: 7010, cgroup: %s}\n' "$CG"
  udp_rule udp-7002 7002 | tail -n +2; } >"$T_DIR/b.yaml"
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CG" ip netns exec "$NS" \
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); n = passed = 0; end = time.time() + 3
while time.time() < end:
    n += 1
    try: s.sendto(b"x", ("127.0.0.1", 7002)); passed += 1
    except OSError: pass
    time.sleep(0.0001)	# a few thousand a second: a probe, not a load
print(n, passed)' >"$T_DIR/sends" &
sender=$!
for i in $(seq 15); do
	"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/b.yaml" >/dev/null
	"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/a.yaml" >/dev/null
done
wait $sender
read -r sent passed <"$T_DIR/sends"
is "$passed" 0 "30 reloads moving the rule: none of $sent sends passed"
is "$(hits udp-7002)" "$((sent + 1))" "its hit counter kept every refusal across the moves"
ids() { "$VIGIL" --pin-dir "$T_PIN" policy list --json | jq -r .id | tr '\n' ' '; }
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/b.yaml" >/dev/null
before=$(ids); hup_and_wait "policy: 2 rules from 1 files in force (unchanged)"
is "$(ids)" "$before" "a reload that changes nothing leaves every rule id where it is"

# Several files at once, rule ids in file order; no cgroup named, no hooks
# (packet rules with no interface: each load also warns they match nothing,
# tests/policy_warn.t).
printf 'rules:\n  - {name: r1, action: drop, port: 1}\n' >"$T_DIR/one.yaml"
printf 'rules:\n  - {name: r2, action: reject, protocol: tcp, port: 2}\n' >"$T_DIR/two.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/one.yaml" "$T_DIR/two.yaml")
is "$(head -1 <<<"$out")" "2 rules in force" "vigil policy load FILE FILE"
is "$(names)" "r1 r2 " "rules from both files, in order"
out=$("$VIGIL" --pin-dir "$T_PIN" policy list --json | jq -c '{name, action, protocol, port_lo, port_hi, cidr, file: (.file | split("/") | last)}' | tr '\n' ' ')
is "$out" '{"name":"r1","action":"drop","protocol":"any","port_lo":1,"port_hi":1,"cidr":[],"file":"one.yaml"} {"name":"r2","action":"reject","protocol":"tcp","port_lo":2,"port_hi":2,"cidr":[],"file":"two.yaml"} ' \
	"vigil policy list --json: one object a rule"
is "$(ls "$T_PIN" | grep -c '^cgroup_')" 0 "cgroups no rule names any more are detached"
out=$("$VIGIL" --pin-dir "$T_PIN" policy unload "$T_DIR/one.yaml")
is "$(head -1 <<<"$out") $(names)" "1 rules in force r2 " "vigil policy unload FILE drops that file's rules"
out=$("$VIGIL" --pin-dir "$T_PIN" policy unload "$T_DIR/one.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"one.yaml is not in force"* ]]; ok $? "unloading a file not in force is refused"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/one.yaml" "$T_DIR/two.yaml" >/dev/null

# A second agent whose pin folder has the same name is refused the control
# socket, and leaves the first agent's socket and policy alone.
PIN2="/sys/fs/bpf/vigil-test-${T_ID}-other/$(basename "$T_PIN")"
on_exit "'$VIGIL' --pin-dir '$PIN2' unpin; rmdir '$(dirname "$PIN2")'"
out=$("$VIGILD" --pin-dir "$PIN2" -o /dev/null --no-procfs -d 5 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"another vigild serves /run/vigil/$(basename "$T_PIN").sock"* ]]
ok $? "a second agent cannot take over the control socket"
is "$(names)" "r1 r2 " "the first agent still answers, its policy unchanged"
done_testing
