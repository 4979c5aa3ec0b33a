# For the fleet tests (make test-fleet): a JetStream cluster of three
# private nats-servers on loopback, synthetic agents, and the check that
# every agent's events are in the stream once and in order.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../stream_lib.sh"
command -v nats-server >/dev/null || skip_all "nats-server is not installed"
JS_TOOL="$TOP/$BUILD/tests/js_tool"
FLEET_AGENT="$TOP/tests/fleet_agent.py"

# Ports nobody listens on now, one a line (each bound and let go: a test
# starts its servers on them at once).
free_ports() {
	python3 -c 'import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1",0))
print("\n".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# cluster_start: servers n1 n2 n3, cluster "vc", stores in this test's
# folder; sets CPORT[i], NPID[i] (i = 1..3) and NATS_URLS.
declare -A CPORT RPORT NPID
cluster_start() {
	local ports i j routes
	mapfile -t ports < <(free_ports 6)
	for i in 1 2 3; do
		CPORT[$i]=${ports[$((i - 1))]}
		RPORT[$i]=${ports[$((i + 2))]}
	done
	for i in 1 2 3; do
		routes=""
		for j in 1 2 3; do
			[ $j = $i ] || routes="$routes${routes:+, }nats://127.0.0.1:${RPORT[$j]}"
		done
		cat >"$T_DIR/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${CPORT[$i]}
jetstream { store_dir: "$T_DIR/store$i" }
cluster { name: vc, listen: 127.0.0.1:${RPORT[$i]}, routes: [ $routes ] }
CONF
		node_start $i
	done
	NATS_URLS="nats://127.0.0.1:${CPORT[1]},nats://127.0.0.1:${CPORT[2]},nats://127.0.0.1:${CPORT[3]}"
	for i in 1 2 3; do
		wait_for 15 grep -qs 'Server is ready' "$T_DIR/n$i.log" || { diag "n$i did not start"; return 1; }
	done
}
# node_start I: (again) server nI, on its ports and store.
node_start() {
	nats-server -c "$T_DIR/n$1.conf" -l "$T_DIR/n$1.log" &
	NPID[$1]=$!
	on_exit "kill -9 ${NPID[$1]} 2>/dev/null; wait ${NPID[$1]} 2>/dev/null"
}
# stream_leader: the index (1..3) of the server leading stream VIGIL.
stream_leader() {
	local i name
	for i in 1 2 3; do
		name=$("$JS_TOOL" leader "nats://127.0.0.1:${CPORT[$i]}" VIGIL 2>/dev/null) && [ -n "$name" ] &&
			{ echo "${name#n}"; return 0; }
	done
	return 1
}
# add_stream: VIGIL for vigil.>, three replicas, once the cluster has a
# meta leader to create it.
add_stream() {
	wait_for 30 "$JS_TOOL" add-stream "nats://127.0.0.1:${CPORT[1]}" VIGIL 'vigil.>' -1 3 2>/dev/null
}
# js_lines FILE: every event line in the stream (js_tool lines), from a
# server that answers.
js_lines() {
	local i
	for i in 1 2 3; do
		"$JS_TOOL" lines "nats://127.0.0.1:${CPORT[$i]}" VIGIL 'vigil.>' 2 >"$1" 2>"$1.err" && return 0
	done
	return 1
}
# stream_holds FILE NAME AGENTS EVENTS: reads the stream into FILE until
# once_in_order says yes, for up to 20 s (a server just back may answer
# with less); then says what differs.
stream_holds() {
	wait_for 20 read_and_check "$@" || once_in_order "$@"
}
read_and_check() { js_lines "$1" && once_in_order "$@" >/dev/null; }
# once_in_order FILE NAME AGENTS EVENTS: agents NAME0.. each have exit
# events 1..EVENTS in FILE, each once, in that order; says what differs.
once_in_order() {
	jq -r 'select(.process_exit) | "\(.node_name) \(.seq)"' "$1" |
		awk -v name="$2" -v agents="$3" -v n="$4" '
		index($1, name) == 1 { if ($2 != next_[$1] + 1) { bad++; if (bad < 5) printf "# %s: %s after %d\n", $1, $2, next_[$1] }
			next_[$1] = $2; count[$1]++ }
		END { for (i = 0; i < agents; i++) { a = name i
			if (count[a] != n || next_[a] != n) { bad++; printf "# %s: %d events, last %d\n", a, count[a], next_[a] } }
			exit bad > 0 }'
}
