#!/usr/bin/env bash
# File rules match the path as the opening process sees it across mounts
# (docs/policy.md, "The path"): a file on a tmpfs mounted below the test's
# folder, the same files through a bind mount of a folder, by an absolute
# and a relative path, and a name too long for a dentry's inline buffer.
# The mounts are made in a private mount namespace (unshare -m) that ends
# with its one process. Run with both path walks (path.bpf.h): the loads of
# the *_cast hooks, where the kernel has bpf_rdonly_cast, which hand over
# to the helper walk at a mount; and that helper walk alone
# (VIGIL_TEST_REFUSE=rdonly_cast), which is what 6.1 runs.
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || skip_all "no unshare"
plan 12

LONG=$(printf 'n%.0s' $(seq 60))
mkdir -p "$T_DIR/real/sub" "$T_DIR/mnt" "$T_DIR/bind"
echo r >"$T_DIR/real/sub/f"
echo l >"$T_DIR/real/$LONG"
cat >"$T_DIR/p.yaml" <<YAML
rules:
  - name: t-mounts
    on: [open, openat, openat2, creat]
    path: { prefix: ["$T_DIR/"] }
    action: post
YAML
chmod 644 "$T_DIR/p.yaml"

opened() { event_seen "$1" '.process_tracepoint | .policy_name == "t-mounts" and .path == "'"$2"'"'; }
for walk in loads helper; do
	if [ $walk = helper ]; then export VIGIL_TEST_REFUSE=rdonly_cast; fi
	ev=$T_DIR/ev.$walk.json
	start_agent -o "$ev" --policy "$T_DIR/p.yaml" || exit 1
	unshare -m sh -c "mount --make-rprivate / &&
		mount -t tmpfs vigil-test '$T_DIR/mnt' && mkdir '$T_DIR/mnt/d' &&
		echo t >'$T_DIR/mnt/d/f' && cat '$T_DIR/mnt/d/f' &&
		mount --bind '$T_DIR/real' '$T_DIR/bind' &&
		cat '$T_DIR/bind/sub/f' '$T_DIR/bind/$LONG' && cd '$T_DIR/bind' && cat sub/f" >/dev/null
	ok $? "$walk: the opens in a private mount namespace ran"
	cat "$T_DIR/real/sub/f" >/dev/null
	wait_for 5 opened "$ev" "$T_DIR/real/sub/f"
	ok $? "$walk: a file in the test's folder"
	opened "$ev" "$T_DIR/mnt/d/f"
	ok $? "$walk: a file on a tmpfs mounted below it, by the path through the mount"
	opened "$ev" "$T_DIR/bind/sub/f"
	ok $? "$walk: a file through a bind mount, by the path the process used"
	opened "$ev" "$T_DIR/bind/$LONG"
	ok $? "$walk: a 60-byte name (not inline in its dentry)"
	[ "$(jq -n '[inputs | select(.process_tracepoint.path == "'"$T_DIR/bind/sub/f"'")] | length' "$ev")" -ge 2 ]
	ok $? "$walk: the relative open of the same file, by the same path"
	stop_agent
	unset VIGIL_TEST_REFUSE
done
done_testing
