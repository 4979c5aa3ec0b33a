# shellcheck shell=bash
# Network test helpers: a client namespace and a server namespace joined by
# a veth pair (client 10.99.0.1 and fd00:99::1, server 10.99.0.2 and
# fd00:99::2), both created and removed by the test; peers from
# tests/net_peer.py. Sourced after lib.sh.
PEER="$TOP/tests/net_peer.py"
NET_C=10.99.0.1
NET_S=10.99.0.2
NET_C6=fd00:99::1
NET_S6=fd00:99::2

net_pair() {
	NS_C="vt-${T_ID}-c"
	NS_S="vt-${T_ID}-s"
	ip netns add "$NS_C" || return 1
	on_exit "ip netns pids $NS_C | xargs -r kill -9; ip netns del $NS_C"
	ip netns add "$NS_S" || return 1
	on_exit "ip netns pids $NS_S | xargs -r kill -9; ip netns del $NS_S"
	ip link add vc netns "$NS_C" type veth peer name vs netns "$NS_S" || return 1
	ip -n "$NS_C" addr add "$NET_C/24" dev vc
	ip -n "$NS_S" addr add "$NET_S/24" dev vs
	ip -n "$NS_C" addr add "$NET_C6/64" dev vc nodad
	ip -n "$NS_S" addr add "$NET_S6/64" dev vs nodad
	for ns in "$NS_C" "$NS_S"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_C" link set vc up && ip -n "$NS_S" link set vs up
}

# net_server NAME MODE IN OUT [COUNT]: a server on port ${PORT:-8000} in the
# server namespace, in the background (SERVER_PID); returns once it listens.
net_server() {
	local d="$T_DIR/$1"
	mkdir -p "$d"
	ip netns exec "$NS_S" /usr/bin/python3 "$PEER" server "${PORT:-8000}" "$2" "$3" "$4" "$d" "${5:-1}" &
	SERVER_PID=$!
	wait_for 5 test -e "$d/server.ready"
}

# net_client NAME MODE OUT IN [COUNT [GAP]]: the client, in the foreground,
# to ${ADDR:-$NET_S}.
net_client() {
	local d="$T_DIR/$1"
	mkdir -p "$d"
	ip netns exec "$NS_C" /usr/bin/python3 "$PEER" client "${ADDR:-$NET_S}" "${PORT:-8000}" "$2" "$3" "$4" "$d" \
		"${5:-1}" "${6:-0}"
}

# net_run NAME MODE C_OUT S_OUT [COUNT [GAP]]: one exchange, both sides.
net_run() {
	net_server "$1" "$2" "$3" "$4" "${5:-1}" || return 1
	net_client "$@"
	wait "$SERVER_PID"
}

pid_of() { cat "$T_DIR/$1/$2.pid"; }

# Queries on the agent's JSON output $EV, read as text lines first (the agent
# may be writing the last one).
# ev KIND PID [FILTER]: that process's events of that kind, one a line.
ev() { jq -c -R --argjson pid "$2" "fromjson? | select(.$1.process.pid == \$pid)${3:+ | select($3)}" "$EV"; }
nev() { ev "$@" | wc -l; }
field() { jq -r "$1" <<<"$2"; }
# flushed KIND PID: waits until such an event is out.
flushed() { wait_for 10 grep -q "\"$1\":{\"process\":{\"exec_id\":\"[^\"]*\",\"pid\":$2," "$EV"; }
exec_id() { jq -r -R --argjson pid "$1" 'fromjson? | select(.process_exec.process.pid == $pid) | .process_exec.process.exec_id' "$EV" | tail -1; }
