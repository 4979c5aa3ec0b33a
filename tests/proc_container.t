#!/usr/bin/env bash
# The 'container' selector of exec and file rules, on cgroups this test
# makes below its own and names as the runtimes do (docker-<id>.scope,
# cri-containerd-<id>.scope, crio-<id>.scope, a bare <id>), so the id is
# read in BPF from the cgroup's kernfs name, not resolved at load.
#   - in: the whole id, its first 12 digits (docker ps), Kubernetes'
#     containerd://<id>; a cgroup below a container's is the container's;
#     a container's cgroup made after the policy was loaded
#   - not_in: every other cgroup, the host's included
#   - names that are not a runtime's (63 digits, a non-hex digit, no id)
#     match nothing
# Every kill rule is also scoped by this test's cgroup and a binary in its
# temp folder.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/proc_lib.sh"

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup pcid) || exit 1
cc -v >/dev/null 2>&1 || skip_all "no C compiler for the test binary"
plan 14

# Four ids, as runtimes make them (64 lowercase hex digits).
id() { printf '%s' "$1" | sha256sum | cut -c1-64; }
D=$(id docker-$T_ID) K=$(id containerd-$T_ID) O=$(id crio-$T_ID) B=$(id bare-$T_ID) L=$(id late-$T_ID)
mkdir "$CG/docker-$D.scope" "$CG/docker-$D.scope/inner" "$CG/cri-containerd-$K.scope" \
	"$CG/crio-$O.scope" "$CG/$B" "$CG/plain" "$CG/docker-${D:1}.scope" \
	"$CG/docker-${D:0:63}g.scope" || exit 1

mkdir -p "$T_DIR/bin" "$T_DIR/bin2" "$T_DIR/files"
proc_writer "$T_DIR/bin/w" || exit 1
cp "$T_DIR/bin/w" "$T_DIR/bin2/w"
echo data >"$T_DIR/files/f"

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: t-cid-kill
    on: exec
    binary: { prefix: ["$T_DIR/bin/"] }
    cgroup: $CG
    container: { in: ["${D:0:12}", "$K", "containerd://$O", "${L:0:20}"] }
    action: sigkill
  - name: t-cid-bare
    on: exec
    binary: { prefix: ["$T_DIR/bin2/"] }
    container: { in: "$B" }
    action: post
  - name: t-cid-not
    on: [openat]
    path: { equal: ["$T_DIR/files/f"] }
    container: { not_in: ["$D"] }
    action: post
POL
chmod 644 "$T_DIR/policy.yaml"
"$VIGIL" policy check "$T_DIR/policy.yaml" >/dev/null
ok $? "a policy with container ids checks"

# Runs a command in cgroup $1 (below the test's); out prints status:output.
in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG/$1" "${@:2}" 2>/dev/null; }
out() { local o rc; o=$(in_cg "$@"); rc=$?; echo "$rc:$o"; }

is "$(out "docker-$D.scope" "$T_DIR/bin/w")" "0:x" "without the policy, the binary runs in a container's cgroup"
start_agent -o "$T_DIR/events.json" --export-file-max-size-mb 0 --policy "$T_DIR/policy.yaml" || exit 1

is "$(out "docker-$D.scope" "$T_DIR/bin/w")" "137:" "docker-<id>.scope, listed by its first 12 digits: killed"
is "$(out "docker-$D.scope/inner" "$T_DIR/bin/w")" "137:" "a cgroup below the container's: the container's, killed"
is "$(out "cri-containerd-$K.scope" "$T_DIR/bin/w")" "137:" "cri-containerd-<id>.scope, the whole id: killed"
is "$(out "crio-$O.scope" "$T_DIR/bin/w")" "137:" "crio-<id>.scope, listed as containerd://<id>: killed"
mkdir "$CG/cri-containerd-$L.scope"
is "$(out "cri-containerd-$L.scope" "$T_DIR/bin/w")" "137:" "a container whose cgroup was made after the load: killed"
is "$(out "$B" "$T_DIR/bin/w")" "0:x" "a bare <id> not listed: runs"
is "$(out plain "$T_DIR/bin/w")" "0:x" "a cgroup that names no container: runs"
is "$(out "docker-${D:1}.scope" "$T_DIR/bin/w")" "0:x" "63 hex digits name no container: runs"
is "$(out "docker-${D:0:63}g.scope" "$T_DIR/bin/w")" "0:x" "a digit that is not hex names no container: runs"

in_cg "$B" "$T_DIR/bin2/w" >/dev/null
in_cg plain "$T_DIR/bin2/w" >/dev/null
in_cg "docker-$D.scope" cat "$T_DIR/files/f" >/dev/null
in_cg "cri-containerd-$K.scope" cat "$T_DIR/files/f" >/dev/null
cat "$T_DIR/files/f" >/dev/null
wait_for 5 event_seen "$T_DIR/events.json" '.process_tracepoint.policy_name == "t-cid-bare"'
wait_for 5 sh -c "[ \$(grep -c '\"policy_name\":\"t-cid-not\"' '$T_DIR/events.json') -ge 2 ]"
stop_agent

bare=$(jq -c 'select(.process_tracepoint.policy_name == "t-cid-bare") | .process_tracepoint.process.docker' "$T_DIR/events.json")
is "$bare" "\"$B\"" "a bare <id> cgroup's exec matched its id (once: not from the plain cgroup)"
cids=$(jq -r 'select(.process_tracepoint.policy_name == "t-cid-not") | .process_tracepoint.process.docker // "host"' \
	"$T_DIR/events.json" | sort -u | tr '\n' ' ')
case "$cids" in *"$D"*) false ;; *"$K"*host*|*host*"$K"*) true ;; *) false ;; esac
ok $? "not_in: the open in another container and on the host posted, the listed container's did not ($cids)"
jq -e -s '[.[] | select(.process_tracepoint.policy_name == "t-cid-kill")] | length >= 5' "$T_DIR/events.json" >/dev/null
ok $? "the kills posted their events"
done_testing
