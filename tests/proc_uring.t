#!/usr/bin/env bash
# io_uring opens, which file rules' syscall hooks never see (docs/policy.md,
# "What these hooks do not see"): a process of this test opens a file under
# a sigkill rule's path through IORING_OP_OPENAT. The rule does not fire
# (the process reads the file and exits 0), and `vigil policy list` counts
# the process's ring, submission and open, so the unseen open is visible.
# The same file opened with openat(2) is killed: the rule is live.
. "$(dirname "$0")/lib.sh"

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup procuring) || exit 1
[ "$(sysctl -n kernel.io_uring_disabled 2>/dev/null || echo 0)" = 0 ] || skip_all "io_uring disabled"
[ -d /sys/kernel/tracing/events/io_uring ] || [ -d /sys/kernel/debug/tracing/events/io_uring ] ||
	skip_all "no io_uring tracepoints"
plan 6

mkdir -p "$T_DIR/files/kill"
echo secret >"$T_DIR/files/kill/f"
in_cg() { sh -c "echo \$\$ >'$CG/cgroup.procs' && $1"; }
cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: t-uring-kill
    on: [open, openat, openat2, creat]
    path: { prefix: ["$T_DIR/files/kill/"] }
    cgroup: $CG
    action: sigkill
POL
chmod 644 "$T_DIR/policy.yaml"

start_agent -o "$T_DIR/events.json" --export-file-max-size-mb 0 --policy "$T_DIR/policy.yaml" || exit 1
out=$(in_cg "exec cat '$T_DIR/files/kill/f'" 2>/dev/null); rc=$?
is "$rc:$out" "137:" "openat(2) of the file: the rule kills"

in_cg "echo \$\$ >'$T_DIR/pid'; exec '$TOP/$BUILD/tests/uring_open' '$T_DIR/files/kill/f'" >"$T_DIR/uring.out" 2>&1; rc=$?
is "$rc:$(cat "$T_DIR/uring.out")" "0:secret" "the same file opened through io_uring: read, the rule never fired"
pid=$(cat "$T_DIR/pid")

"$VIGIL" --pin-dir "$T_PIN" policy list --json >"$T_DIR/list.json" 2>&1
jq -e -s '.[] | select(.name == "t-uring-kill") | .kills == 1 and .hits == 1' "$T_DIR/list.json" >/dev/null
ok $? "the rule counts one kill, the openat(2) one, and no io_uring hit"
jq -e -s --argjson p "$pid" '.[] | select(.kind == "io_uring" and .pid == $p) |
	.rings == 1 and .submissions >= 1 and .opens == 1 and .comm == "uring_open"' "$T_DIR/list.json" >/dev/null
ok $? "policy list counts the process's io_uring ring, submission and open"
"$VIGIL" --pin-dir "$T_PIN" policy list >"$T_DIR/list.txt" 2>&1
grep -Eq "^$pid +uring_open +1 +[0-9]+ +1\$" "$T_DIR/list.txt"
ok $? "and says so in the table, under io_uring, not seen by file rules"

# Without file rules the counters detach with the hooks: nothing is counted.
printf 'rules: []\n' >"$T_DIR/empty.yaml"; chmod 644 "$T_DIR/empty.yaml"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/empty.yaml" >/dev/null
[ ! -e "$T_PIN/link_proc_uring_submit" ] && [ ! -e "$T_PIN/link_proc_uring_create" ]
ok $? "no file rule: io_uring's counters are detached"
stop_agent
done_testing
