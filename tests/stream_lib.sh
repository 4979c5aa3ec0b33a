# shellcheck shell=bash
# Helpers for the stream tests (sourced after lib.sh): a private collector on
# loopback or in a test namespace, marker processes, and checks on what the
# collector wrote.
COLLECTOR="$TOP/$BUILD/vigil-collector"

# start_collector NAME [NETNS] [ARGS...]: listens on port 0 (loopback, or
# 10.x in NETNS when given with --listen in ARGS); sets COLL_PID, COLL_PORT
# (the last tcp:// or tls:// listener's port).
start_collector() {
	local name=$1 ns=$2; shift 2
	local err="$T_DIR/$name.err"
	: >"$err"
	if [ -n "$ns" ]; then
		nsenter --net="/run/netns/$ns" "$COLLECTOR" "$@" 2>>"$err" &
	else
		"$COLLECTOR" "$@" 2>>"$err" &
	fi
	COLL_PID=$!
	on_exit "kill -9 $COLL_PID; wait $COLL_PID"
	wait_for 10 grep -q 'listening on' "$err" || { diag "collector did not start:"; sed 's/^/#   /' "$err"; return 1; }
	COLL_PORT=$(grep -o 'listening on t[cl][ps]://[^ ]*' "$err" | tail -1 | sed 's/.*://')
}

# stream_netns NAME: a namespace of this test (new_netns), cleaned up at exit
# even when called in $(...), where new_netns's own on_exit is lost.
stream_netns() {
	local ns
	ns=$(new_netns "$1") || return 1
	on_exit "ip netns pids $ns | xargs -r kill -9; ip netns del $ns"
	STREAM_NS=$ns
}

# agent_in_netns NS ERRFILE ARGS...: vigild on this test's pins, its sockets
# in NS (nsenter: the mount namespace and bpffs stay the test's); AGENT_NS_PID.
agent_in_netns() {
	local ns=$1 err=$2; shift 2
	nsenter --net="/run/netns/$ns" "$VIGILD" --pin-dir "$T_PIN" --no-procfs --poll-ms 20 "$@" 2>"$err" &
	AGENT_NS_PID=$!
	on_exit "kill -TERM $AGENT_NS_PID; wait $AGENT_NS_PID"
}

# run_markers TAG FROM TO: one exec each, in order, arguments "TAG-i".
run_markers() {
	local i
	for ((i = $2; i <= $3; i++)); do /bin/true "$1-$i"; done
}

# gen_markers TAG: markers 1..$N at a capped rate (bursts of 25, then a
# pause), for a background load while a test breaks something.
gen_markers() {
	local i
	for ((i = 1; i <= N; i += 25)); do run_markers "$1" $i $((i + 24 > N ? N : i + 24)); sleep 0.02; done
}

# seen_at_least TAG K FILE: K of TAG's markers are in FILE.
seen_at_least() { [ "$(grep -c "\"$1-" "$3")" -ge "$2" ]; }

# The marker numbers of TAG's exec events in FILE..., in output order.
marker_list() {
	local tag=$1; shift
	cat "$@" 2>/dev/null | jq -r --arg t "$tag-" 'select(.process_exec.process.arguments // "" | startswith($t)) | .process_exec.process.arguments | ltrimstr($t)' 2>/dev/null
}
marker_count() { marker_list "$@" | wc -l; }

# marker_check TAG N FILE...: each of 1..N once, in order.
markers_in_order() {
	local tag=$1 n=$2; shift 2
	[ "$(marker_list "$tag" "$@" | tr '\n' ' ')" = "$(seq 1 "$n" | tr '\n' ' ')" ]
}

# No (node, seq) twice among every event the collector wrote.
no_dup_seq() {
	[ -z "$(cat "$@" | jq -r 'select(.vigil_gap == null) | "\(.node_name) \(.seq)"' | sort | uniq -d)" ]
}
