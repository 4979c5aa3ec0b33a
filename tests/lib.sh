# shellcheck shell=bash
# TAP helpers for vigil's tests. Each test file sources this, says how many
# tests it plans, and registers its own cleanup with `on_exit`; everything it
# made (namespaces, pins, processes, temp files) is removed on any exit;
# T_KEEP=1 keeps the temp folder (T_DIR, named after the test) to look into.
set -u
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VIGILD="$TOP/$BUILD/vigild"
VIGIL="$TOP/$BUILD/vigil"
T_NAME=$(basename "$0" .t)
T_ID="${T_NAME}_$$"
T_DIR=$(mktemp -d "/tmp/vigil-test.${T_ID}.XXXX")
T_PIN="/sys/fs/bpf/vigil-test-${T_ID}"
# T_SLOW: how many times slower than this machine the tests run (5 in the
# VM under TCG, tests/vm/run.sh): time caps on load generators scale by it.
T_SLOW=${T_SLOW:-1}
_t_n=0
_t_fail=0
_t_cleanups=()

plan() { echo "1..$1"; }
on_exit() { _t_cleanups+=("$*"); }
_t_cleanup() {
	local i
	for ((i = ${#_t_cleanups[@]} - 1; i >= 0; i--)); do eval "${_t_cleanups[$i]}" >/dev/null 2>&1; done
	# new_netns and new_cgroup run in $(...), where on_exit cannot reach
	# this shell: what they made is found by its name.
	_t_del_netns $(ip netns list 2>/dev/null | awk -v p="vt-${T_ID}-" 'index($1, p) == 1 { print $1 }')
	_t_del_cgroups
	[ -d "$T_PIN" ] && "$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1
	rm -rf "$T_PIN" 2>/dev/null	# also when the CLI is missing: pins are files on bpffs
	[ -n "${T_KEEP:-}" ] || rm -rf "$T_DIR"
}
trap _t_cleanup EXIT
trap 'exit 130' INT TERM

ok() { # ok COND-EXIT-CODE DESCRIPTION
	_t_n=$((_t_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_t_n - $2"; else echo "not ok $_t_n - $2"; _t_fail=1; fi
}
check() { # check DESCRIPTION -- COMMAND...: ok when the command succeeds
	local d=$1; shift; [ "$1" = "--" ] && shift
	"$@"; ok $? "$d"
}
is() { # is GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; fi
}
diag() { echo "# $*"; }

# kernel_has KIND NAME: the running kernel's BTF holds that type (STRUCT
# tcx_entry, FUNC bpf_sock_destroy, TYPEDEF btf_trace_sock_send_length),
# read once per test. The same probes vigild makes (agent/core/kernel_features.c).
kernel_has() {
	[ -s "$T_DIR/vmlinux.btf" ] ||
		bpftool btf dump file /sys/kernel/btf/vmlinux >"$T_DIR/vmlinux.btf" 2>/dev/null
	grep -q "^\[[0-9]*\] $1 '$2'" "$T_DIR/vmlinux.btf"
}
# needs FEATURE: a test file that is all about FEATURE skips whole, with the
# reason, on a kernel without it (docs/kernels.md says what vigild does
# there, and which test checks that).
needs() {
	case $1 in
	sock-destroy)
		kernel_has FUNC bpf_sock_destroy ||
			skip_all "no bpf_sock_destroy kfunc (Linux 6.5 or later): live sockets are not destroyed here, and vigild says so (tests/process_events.t)" ;;
	io-tracepoints)
		kernel_has TYPEDEF btf_trace_sock_send_length ||
			skip_all "no sock:sock_send_length/sock_recv_length tracepoints (Linux 6.3 or later): vigild has no send/receive hooks here (tests/net_events.t checks what it does instead)" ;;
	*) echo "needs: unknown feature $1" >&2; exit 2 ;;
	esac
}
# has_tcx: TC enforcement is pinned TCX links that outlive the agent (6.6+);
# else netlink clsact filters that vigild removes when it stops.
has_tcx() { kernel_has STRUCT tcx_entry; }
skip() { _t_n=$((_t_n + 1)); echo "ok $_t_n # SKIP $*"; }	# skip REASON: one check
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

# Waits up to $1 seconds for COMMAND... to succeed.
wait_for() {
	local t=$1; shift
	local end=$((SECONDS + t))
	until "$@"; do [ $SECONDS -ge "$end" ] && return 1; sleep 0.05; done
}

# Starts vigild in the background on this test's pins; AGENT_PID is set.
# Waits until it is attached (its "attached"/"resumed" line on stderr).
start_agent() {
	: >"$T_DIR/agent.err"	# truncated here, before the wait below reads it
	"$VIGILD" --pin-dir "$T_PIN" "$@" 2>>"$T_DIR/agent.err" &
	AGENT_PID=$!
	on_exit "kill -TERM $AGENT_PID; wait $AGENT_PID"
	# (Under TCG, 6.1's verifier takes seconds per enforcement program.)
	wait_for $((20 * T_SLOW)) grep -qs 'attached\|resumed' "$T_DIR/agent.err" || {
		diag "agent did not start:"; sed 's/^/#   /' "$T_DIR/agent.err"; return 1; }
}
# Stops the agent; an unclean exit (a sanitizer report, a crash) fails the
# test file even when every assertion passed.
stop_agent() {
	local rc
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	rc=$?
	if [ $rc -ne 0 ]; then
		diag "vigild exited with status $rc:"; tail -20 "$T_DIR/agent.err" | sed 's/^/#   /'
		_t_fail=1
	fi
	return $rc
}

# Creates a network namespace owned by this test; removed at exit.
new_netns() {
	local ns="vt-${T_ID}-$1"
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
	echo "$ns"
}
_t_del_netns() {
	local ns
	for ns in "$@"; do
		# Never kill by namespace when a name points at the root one.
		[ "$(stat -L -c %i "/run/netns/$ns")" != "$(stat -L -c %i /proc/1/ns/net)" ] &&
			ip netns pids "$ns" | xargs -r kill -9
		ip netns del "$ns"
	done >/dev/null 2>&1
}

# Creates a cgroup v2 directory owned by this test (the v2 mount is found at
# run time); its processes are killed and it is removed at exit.
cgroup2_mount() { awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts; }
new_cgroup() {
	local root; root=$(cgroup2_mount)
	[ -n "$root" ] || return 1
	mkdir "$root/vigil-test-${T_ID}-$1" || return 1
	echo "$root/vigil-test-${T_ID}-$1"
}
_t_del_cgroups() {
	local root cg; root=$(cgroup2_mount)
	[ -n "$root" ] || return 0
	# Children first (a test may name cgroups below its own, as runtimes do).
	for cg in "$root/vigil-test-${T_ID}-"*; do
		[ -d "$cg" ] || continue
		find "$cg" -depth -type d | while read -r d; do
			xargs -r kill -9 <"$d/cgroup.procs"
			wait_for 5 sh -c "! grep -q . '$d/cgroup.procs'"
			rmdir "$d"
		done
	done >/dev/null 2>&1
}

# True when some line of the JSON lines FILE matches the jq FILTER.
event_seen() { jq -n -e "[inputs | select($2)] | length > 0" "$1" >/dev/null 2>&1; }

done_testing() { exit $_t_fail; }
