#!/usr/bin/env bash
# Exec and file rules on real processes, files and a test-owned cgroup.
# Every kill rule is scoped by this test's cgroup AND a path or binary in
# this test's temp folder, so it can reach nothing else on the machine.
#   - sigkill at exec: a static binary with no libc whose _start writes one
#     byte to an inherited pipe; N of N matching execs write nothing and die
#     by SIGKILL (N=1000; PROC_POLICY_EXECS=... scales it down)
#   - sigkill at open: the file never reaches the process, by a symlink, by
#     '..', by a relative path, by openat with a dirfd; O_CREAT and O_TRUNC
#     took effect and the event says so
#   - post, and mode: monitor (nothing killed, the would-have counted)
#   - a process outside the cgroup, or running another binary, is untouched
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proc_lib.sh"

N=${PROC_POLICY_EXECS:-1000}
CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup procpol) || exit 1
cc -v >/dev/null 2>&1 || skip_all "no C compiler for the test binary"
plan 21

mkdir -p "$T_DIR/bin" "$T_DIR/other" "$T_DIR/files/kill" "$T_DIR/files/post" "$T_DIR/files/mon" \
	"$T_DIR/files/side"
proc_writer "$T_DIR/bin/w" || exit 1
cp "$T_DIR/bin/w" "$T_DIR/other/w"
echo secret >"$T_DIR/files/kill/f"
echo keep >"$T_DIR/files/kill/f2"
echo public >"$T_DIR/files/post/f"
echo watched >"$T_DIR/files/mon/f"
ln -s "$T_DIR/files/kill/f" "$T_DIR/link"

# Runs a shell command inside the test's cgroup; its status is returned.
in_cg() { sh -c "echo \$\$ >'$CG/cgroup.procs' && $1"; }

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: t-exec-kill
    on: exec
    binary: { prefix: ["$T_DIR/bin/"] }
    cgroup: $CG
    action: sigkill
  - name: t-open-kill
    on: [open, openat, openat2, creat]
    path: { prefix: ["$T_DIR/files/kill/"] }
    cgroup: $CG
    action: sigkill
  - name: t-open-post
    on: [open, openat]
    path: { prefix: ["$T_DIR/files/post/"] }
    intent: read
    action: post
POL
cat >"$T_DIR/monitor.yaml" <<POL
mode: monitor
rules:
  - name: t-open-mon
    on: [openat]
    path: { postfix: ["/files/mon/f"], prefix: ["$T_DIR/"] }
    cgroup: $CG
    action: sigkill
POL
chmod 644 "$T_DIR"/*.yaml

# Without the policy the binary writes its byte and exits 0: the test can fail.
out=$(in_cg "'$T_DIR/bin/w'"); rc=$?
is "$rc:$out" "0:x" "without the rule, the test binary writes its byte and exits 0"

start_agent -o "$T_DIR/events.json" --export-file-max-size-mb 0 --policy "$T_DIR/policy.yaml" --policy "$T_DIR/monitor.yaml" || exit 1
"$VIGIL" --pin-dir "$T_PIN" policy list >"$T_DIR/list0" 2>&1
grep -q 't-exec-kill' "$T_DIR/list0"; ok $? "policy list shows the exec and file rules"

# N execs of the matching binary inside the cgroup, each through a pipe.
bash -c "echo \$\$ >'$CG/cgroup.procs'
	killed=0 bytes=0
	for ((i = 0; i < $N; i++)); do
		b=\$('$T_DIR/bin/w' | wc -c)
		bytes=\$((bytes + b))
	done
	echo \$bytes" >"$T_DIR/exec.bytes" 2>/dev/null
is "$(cat "$T_DIR/exec.bytes")" "0" "$N matching execs wrote 0 bytes"
# Exit statuses, counted by a loop that waits for each.
bash -c "echo \$\$ >'$CG/cgroup.procs'
	k=0
	for ((i = 0; i < $N; i++)); do '$T_DIR/bin/w' >/dev/null; [ \$? -eq 137 ] && k=\$((k + 1)); done
	echo \$k" >"$T_DIR/exec.killed" 2>/dev/null
is "$(cat "$T_DIR/exec.killed")" "$N" "$N of $N matching execs died by SIGKILL"

out=$(in_cg "'$T_DIR/other/w'"); rc=$?
is "$rc:$out" "0:x" "another binary in the cgroup is untouched"
out=$("$T_DIR/bin/w"); rc=$?
is "$rc:$out" "0:x" "the binary outside the cgroup is untouched"

# Opens.
out=$(in_cg "exec cat '$T_DIR/files/kill/f'" 2>/dev/null); rc=$?
is "$rc:$out" "137:" "open of a matching file: SIGKILL, nothing read"
out=$(in_cg "exec cat '$T_DIR/link'" 2>/dev/null); rc=$?
is "$rc:$out" "137:" "through a symbolic link: the path opened is matched"
out=$(in_cg "exec cat '$T_DIR/files/side/../kill/f'" 2>/dev/null); rc=$?
is "$rc:$out" "137:" "through '..'"
out=$(in_cg "cd '$T_DIR/files' && exec cat kill/f" 2>/dev/null); rc=$?
is "$rc:$out" "137:" "by a relative path"
in_cg "exec python3 -c '
import os
d = os.open(\"$T_DIR/files/kill\", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open(\"f\", os.O_RDONLY, dir_fd=d)
print(os.read(fd, 100))'" >"$T_DIR/dirfd.out" 2>/dev/null; rc=$?
is "$rc:$(cat "$T_DIR/dirfd.out")" "137:" "openat with a dirfd"
in_cg "echo data >'$T_DIR/files/kill/new'" 2>/dev/null; rc=$?
[ $rc -eq 137 ] && [ -e "$T_DIR/files/kill/new" ] && [ ! -s "$T_DIR/files/kill/new" ]
ok $? "O_CREAT: the process is killed, and the file was created (empty)"
in_cg ": >'$T_DIR/files/kill/f2'" 2>/dev/null; rc=$?
[ $rc -eq 137 ] && [ ! -s "$T_DIR/files/kill/f2" ]
ok $? "O_TRUNC: the process is killed, and the file was truncated"
out=$(cat "$T_DIR/files/kill/f"); rc=$?
is "$rc:$out" "0:secret" "the same file opened outside the cgroup is untouched"
out=$(in_cg "exec cat '$T_DIR/files/post/f'"); rc=$?
is "$rc:$out" "0:public" "a post rule lets the open through"
out=$(in_cg "exec cat '$T_DIR/files/mon/f'"); rc=$?
is "$rc:$out" "0:watched" "mode: monitor kills nothing"

wait_for 5 event_seen "$T_DIR/events.json" '.process_tracepoint.policy_name == "t-open-mon"'
"$VIGIL" --pin-dir "$T_PIN" policy list --json >"$T_DIR/list.json" 2>&1
jq -e -s --argjson n "$N" '.[] | select(.name == "t-exec-kill") | .kills >= $n and .hits >= $n' "$T_DIR/list.json" >/dev/null
ok $? "policy list counts the exec kills"
jq -e -s '.[] | select(.name == "t-open-mon") | .would_kill == 1 and .kills == 0 and .mode == "monitor"' "$T_DIR/list.json" >/dev/null
ok $? "policy list counts monitor mode's would-have kill"

event_seen "$T_DIR/events.json" '.process_tracepoint | .policy_name == "t-open-post" and .rule_action == "post" and .action == "KPROBE_ACTION_POST" and .args[0].string_arg == "'"$T_DIR"'/files/post/f" and .outcome == "posted"'
ok $? "the post rule's event names the path opened"
event_seen "$T_DIR/events.json" '.process_tracepoint | .policy_name == "t-open-kill" and .path == "'"$T_DIR"'/files/kill/new" and (.intent | test("create")) and (.intent | test("created")) and (.intent | test("truncate")) and .outcome == "signalled"'
ok $? "the O_CREAT kill's event says create, created and truncate took effect"
event_seen "$T_DIR/events.json" '.process_tracepoint | .policy_name == "t-open-mon" and .tags == ["monitor", "would:sigkill"] and .outcome == "monitor"'
ok $? "monitor mode's event is tagged monitor, would:sigkill"
stop_agent
done_testing
