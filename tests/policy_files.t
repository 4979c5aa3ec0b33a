#!/usr/bin/env bash
# The agent's own inputs cannot stall it or leak through it: what
# `vigil policy load` may name (a regular file owned by root, not writable
# by group or others, not a symlink, bounded in size and nesting), error
# replies that never quote a file's content, and a control socket that
# idle clients cannot hold up while events flow.
. "$(dirname "$0")/lib.sh"
plan 19

EV="$T_DIR/events.json"
start_agent -o "$EV" --poll-ms 20 || exit 1
on_exit "kill -9 $AGENT_PID"	# runs first: an agent that hangs is not waited for
V() { timeout 10 "$VIGIL" --pin-dir "$T_PIN" "$@"; }
Vq() { V "$@" >/dev/null; }
ms() { echo $(($(date +%s%N) / 1000000)); }

# 1. A FIFO: refused at once, the agent still answers.
mkfifo "$T_DIR/fifo.yaml"
out=$(V policy load "$T_DIR/fifo.yaml" 2>&1); rc=$?
case "$out" in *"fifo.yaml: not a regular file"*) ok 0 "a FIFO is refused as not a regular file";;
*) ok 1 "a FIFO is refused as not a regular file"; diag "rc $rc: $out";; esac
check "the agent answers after a FIFO was named" -- Vq policy list

# 2. Nested 65536 deep: refused quickly.
python3 -c "print('rules: ' + '[' * 65536 + ']' * 65536)" >"$T_DIR/deep.yaml"
t0=$(ms); out=$(V policy load "$T_DIR/deep.yaml" 2>&1); t1=$(ms)
diag "load of a file nested 65536 deep answered in $((t1 - t0)) ms"
case "$out" in *"deep.yaml:1:"*"nested deeper than 32 levels"*) ok 0 "deep nesting refused, with the place";;
*) ok 1 "deep nesting refused, with the place"; diag "$out";; esac
[ $((t1 - t0)) -lt 1000 ]; ok $? "deep nesting refused in under 1 s"

# 3. Bigger than 1 MiB: refused by size.
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$T_DIR/big.yaml"
out=$(V policy load "$T_DIR/big.yaml" 2>&1)
case "$out" in *"big.yaml: 1048577 bytes; a policy file is at most 1048576"*) ok 0 "a file over 1 MiB is refused";;
*) ok 1 "a file over 1 MiB is refused"; diag "$out";; esac

# 4. A file whose first line looks like a secret: not echoed.
SECRET="s3cr3t-token-$$"
printf '%s: x\nroot:$6$%s:19000:0:99999:7:::\n' "$SECRET" "$SECRET" >"$T_DIR/shadow"
chmod 0640 "$T_DIR/shadow"
out=$(V policy load "$T_DIR/shadow" 2>&1)
case "$out" in *"shadow:1:1: "*) ok 0 "a non-policy file is refused with its place";;
*) ok 1 "a non-policy file is refused with its place"; diag "$out";; esac
check "the reply does not quote the file" -- bash -c "! grep -q '$SECRET' <<<'$out'"
check "the agent's log does not quote it" -- bash -c "! grep -q '$SECRET' '$T_DIR/agent.err'"

# 5. Symlink, world-writable, group-writable, not owned by root.
printf 'rules:\n  - {name: d, action: drop, cidr: 192.0.2.1}\n' >"$T_DIR/good.yaml"
chmod 0644 "$T_DIR/good.yaml"
ln -s "$T_DIR/good.yaml" "$T_DIR/link.yaml"
cp -p "$T_DIR/good.yaml" "$T_DIR/ww.yaml"; chmod 0646 "$T_DIR/ww.yaml"
cp -p "$T_DIR/good.yaml" "$T_DIR/gw.yaml"; chmod 0664 "$T_DIR/gw.yaml"
cp -p "$T_DIR/good.yaml" "$T_DIR/nobody.yaml"; chown 65534 "$T_DIR/nobody.yaml"
# refused FILE WANT DESCRIPTION
refused() {
	local out
	out=$(V policy load "$T_DIR/$1" 2>&1) && { ok 1 "$3"; diag "loaded: $out"; return; }
	case "$out" in *"$T_DIR/$1: $2"*) ok 0 "$3";; *) ok 1 "$3"; diag "$out";; esac
}
refused link.yaml "a symbolic link: refused" "a symlink is refused"
refused ww.yaml "writable by others (mode 0646): refused" "a world-writable file is refused"
refused gw.yaml "writable by its group (mode 0664): refused" "a group-writable file is refused"
refused nobody.yaml "owned by uid 65534, not root: refused" "a file not owned by root is refused"
check "the file itself loads" -- Vq policy load "$T_DIR/good.yaml"

# 6. An IPv4-mapped block is stored as the IPv4 block the hooks look up.
printf 'rules:\n  - {name: m, action: drop, cidr: "::ffff:10.99.0.0/120"}\n' >"$T_DIR/mapped.yaml"
check "an IPv4-mapped block loads" -- Vq policy load "$T_DIR/mapped.yaml"
out=$(V policy list 2>&1)
case "$out" in *" 10.99.0.0/24 "*) ok 0 "it is in force as 10.99.0.0/24";;
*) ok 1 "it is in force as 10.99.0.0/24"; diag "$out";; esac
V policy load >/dev/null 2>&1; V policy unload "$T_DIR/mapped.yaml" >/dev/null 2>&1

# 7. Twenty idle control clients: events and replies keep flowing.
SOCK=$(ls /run/vigil/"$(basename "$T_PIN")".sock)
python3 - "$SOCK" 20 <<'PY' &
import socket, sys, time
s = [socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in range(int(sys.argv[2]))]
for c in s: c.connect(sys.argv[1])
time.sleep(30)
PY
IDLE=$!
on_exit "kill $IDLE"
sleep 0.3
t0=$(ms); /bin/true "idle-clients-$$"; wait_for 20 grep -q "idle-clients-$$" "$EV"; t1=$(ms)
diag "with 20 idle control clients, an exec event reached the output in $((t1 - t0)) ms"
[ $((t1 - t0)) -lt 1000 ]; ok $? "an event still reaches the output in under 1 s"
t0=$(ms); V policy list >/dev/null; rc=$?; t1=$(ms)
diag "with 20 idle control clients, policy list answered in $((t1 - t0)) ms"
[ $rc -eq 0 ] && [ $((t1 - t0)) -lt 1000 ]; ok $? "policy list still answers in under 1 s"
kill $IDLE 2>/dev/null; wait $IDLE 2>/dev/null

# 8. SIGTERM is obeyed after all of the above.
kill -TERM $AGENT_PID
wait_for 10 bash -c "! kill -0 $AGENT_PID 2>/dev/null"; ok $? "the agent stops on SIGTERM"
wait $AGENT_PID; is $? 0 "and exits cleanly"
