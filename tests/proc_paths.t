#!/usr/bin/env bash
# File rules' paths across mounts (docs/policy.md, "The path"): the path a
# rule matches and an event reports is the one the task opened it by, as
# it sees it up to its root, in its own mount namespace. All of it in a
# mount namespace this test makes (unshare -m, private: nothing it mounts
# is seen outside, and it all goes when the namespace does):
#   - a tmpfs mounted there: the path below its mount point
#   - a bind mount of a test folder: the path through the bind, not the
#     folder's own; a kill rule on the bind's path kills through it only
#   - a chroot: the path up to the task's root
#   - the event's process names that mount namespace's inode
# (Symbolic links, '..', relative paths and openat with a dirfd:
# tests/proc_policy.t.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proc_lib.sh"

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup ppath) || exit 1
command -v unshare >/dev/null || skip_all "no unshare"
cc -v >/dev/null 2>&1 || skip_all "no C compiler for the test binary"
plan 12

mkdir -p "$T_DIR/src" "$T_DIR/mnt/tmp" "$T_DIR/mnt/bind" "$T_DIR/root/data"
echo src >"$T_DIR/src/g"
echo kill >"$T_DIR/src/k"
echo rooted >"$T_DIR/root/data/f"
# A static opener with no libc for the chroot: open("/data/f"), copy it to
# stdout, exit.
proc_static_cc "$T_DIR/root/o" <<'C' || exit 1
void _start(void)
{
	char buf[64];
	long fd = sys3(2, (long)"/data/f", 0, 0), n = fd < 0 ? 0 : sys3(0, fd, (long)buf, sizeof(buf));

	sys3(1, 1, (long)buf, n > 0 ? n : 0);
	sys3(60, fd < 0, 0, 0);
	for (;;)
		;
}
C

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: p-kill-bind
    on: [open, openat]
    path: { equal: ["$T_DIR/mnt/bind/k"] }
    cgroup: $CG
    action: sigkill
  - { name: p-src,    on: [open, openat], path: { prefix: ["$T_DIR/src/"] }, action: post }
  - { name: p-bind,   on: [open, openat], path: { prefix: ["$T_DIR/mnt/bind/"] }, action: post }
  - { name: p-tmpfs,  on: [open, openat], path: { prefix: ["$T_DIR/mnt/tmp/"] }, action: post }
  - { name: p-rooted, on: [open, openat], path: { equal: [/data/f] }, cgroup: $CG, action: post }
  - { name: p-outer,  on: [open, openat], path: { equal: ["$T_DIR/root/data/f"] }, action: post }
POL
chmod 644 "$T_DIR/policy.yaml"
EV="$T_DIR/events.json"
start_agent -o "$EV" --export-file-max-size-mb 0 --enable-process-ns --policy "$T_DIR/policy.yaml" || exit 1

# Everything below in the test's cgroup and a private mount namespace.
# Prints, one a line: the namespace's inode, then each step's status:output.
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec unshare -m --propagation private sh -c "$1" sh "$2"' \
	sh "$CG" '
	T=$1
	stat -L -c %i /proc/self/ns/mnt
	mount -t tmpfs vigil-test "$T/mnt/tmp" || exit 1
	echo tmp >"$T/mnt/tmp/f"
	mount --bind "$T/src" "$T/mnt/bind" || exit 1
	o=$(cat "$T/mnt/tmp/f"); echo "$?:$o"
	o=$(cat "$T/mnt/bind/g"); echo "$?:$o"
	o=$(cat "$T/mnt/bind/k" 2>/dev/null); echo "$?:$o"
	o=$(cat "$T/src/k"); echo "$?:$o"
	o=$(chroot "$T/root" /o); echo "$?:$o"
' "$T_DIR" >"$T_DIR/steps" 2>"$T_DIR/steps.err"
ok $? "the steps ran in a mount namespace of their own"
grep -v "^Killed" "$T_DIR/steps.err" | sed 's/^/# /'
MNTNS=$(sed -n 1p "$T_DIR/steps")
is "$(sed -n '2,$p' "$T_DIR/steps" | tr '\n' ' ')" "0:tmp 0:src 137: 0:kill 0:rooted " \
	"tmpfs read, bind read, killed through the bind, the source itself read, chroot read"
[ "$MNTNS" != "$(stat -L -c %i /proc/self/ns/mnt)" ]
ok $? "the namespace is not the test's ($MNTNS)"
! grep -q "$T_DIR/mnt/tmp" /proc/self/mounts
ok $? "its mounts are not seen outside it"

wait_for 5 event_seen "$EV" '.process_tracepoint.policy_name == "p-rooted"'
stop_agent
# The first event of a rule: path, dev, the mount namespace's inode.
hit() { jq -c --arg n "$1" 'select(.process_tracepoint.policy_name == $n) | .process_tracepoint |
	[.path, .args[0].string_arg, .process.ns.mnt.inum, .dev, .outcome]' "$EV" | head -1; }
TMPDEV=$(jq -r 'select(.process_tracepoint.policy_name == "p-tmpfs") | .process_tracepoint.dev' "$EV" | head -1)
SRCDEV=$(jq -r 'select(.process_tracepoint.policy_name == "p-bind") | .process_tracepoint.dev' "$EV" | head -1)
is "$(hit p-tmpfs)" "[\"$T_DIR/mnt/tmp/f\",\"$T_DIR/mnt/tmp/f\",$MNTNS,$TMPDEV,\"posted\"]" \
	"a tmpfs in the namespace: the path below its mount point, the namespace's inode"
[ "$TMPDEV" != "$SRCDEV" ]
ok $? "the tmpfs is its own device ($TMPDEV, the folder's $SRCDEV)"
is "$(hit p-bind)" "[\"$T_DIR/mnt/bind/g\",\"$T_DIR/mnt/bind/g\",$MNTNS,$SRCDEV,\"posted\"]" \
	"through a bind mount: the path the process used"
is "$(jq -c 'select(.process_tracepoint.policy_name == "p-src") | .process_tracepoint.path' "$EV" | tr '\n' ' ')" \
	"\"$T_DIR/src/k\" " "the folder's own path rule saw only the open by that path"
is "$(hit p-kill-bind)" "[\"$T_DIR/mnt/bind/k\",\"$T_DIR/mnt/bind/k\",$MNTNS,$SRCDEV,\"signalled\"]" \
	"the kill through the bind names the bind's path"
is "$(hit p-rooted)" "[\"/data/f\",\"/data/f\",$MNTNS,$SRCDEV,\"posted\"]" \
	"in a chroot: the path up to the task's root"
is "$(jq -c 'select(.process_tracepoint.policy_name == "p-outer")' "$EV" | wc -l)" 0 \
	"and not the path from the host's root"
jq -e -s '[.[] | select(.process_tracepoint.policy_name == "p-kill-bind") | .process_tracepoint.process.binary]
	| all(endswith("/cat"))' "$EV" >/dev/null
ok $? "the killed process was the cat reading through the bind"
done_testing
