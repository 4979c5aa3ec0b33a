#!/usr/bin/env bash
# The socket table holds every live socket up to --max-sockets: sets of 8
# entries chosen by the socket's address, and a spill for sets that fill.
# With a table of 4096 sockets (512 sets, a spill of 1024), 2100
# connections held open at once (4200 sockets: more than the sets hold
# however evenly they spread, with room left for the host's own sockets)
# must spill; every socket must still have its entry, every close its
# event, and the table must be empty after. The agent's metrics show the
# table's fill: at least those sockets, and of them in the spill at least
# what the dump finds there, while open; 2N fewer after.
# The namespace and the peers are this test's own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 9

N=2100
EV="$T_DIR/events.json"
NS="vt-${T_ID}-t"
ip netns add "$NS" || { diag "cannot create the namespace"; exit 1; }
on_exit "ip netns pids $NS | xargs -r kill -9; ip netns del $NS"
ip -n "$NS" link set lo up
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 --max-sockets 4096 \
	--metrics 127.0.0.1:0 || exit 1
M=http://$(grep -o 'metrics on http://[^ ]*' "$T_DIR/agent.err" | sed 's|.*http://||')
# metric NAME: its value as /metrics serves it now (rendered once a second).
metric() { curl -s --max-time 2 "$M/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }

# N connections over loopback, all open at once, closed when told.
cat >"$T_DIR/many.py" <<'PY'
import os, resource, socket, sys, time
n, d = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_NOFILE, (2 * n + 64, 2 * n + 64))
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(n)
conns = []
for _ in range(n):
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"x"); s.recv(1)
    conns += [c, s]
open(os.path.join(d, "pid"), "w").write(str(os.getpid()))
open(os.path.join(d, "open"), "w").close()
while not os.path.exists(os.path.join(d, "close")):
    time.sleep(0.02)
for c in conns:
    c.close()
ls.close()
PY
ip netns exec "$NS" /usr/bin/python3 "$T_DIR/many.py" "$N" "$T_DIR" &
on_exit "kill -9 $! 2>/dev/null"
wait_for 60 test -e "$T_DIR/open" || { diag "the peers did not start"; exit 1; }
P=$(cat "$T_DIR/pid")

# in_sets PID, in_spill PID: the table's entries owned by PID (in use: a
# key that is not 0).
in_sets() {
	bpftool map dump pinned "$T_PIN/vigil_socks" -j |
		jq --argjson p "$1" '[.[].formatted.value | [.key, .sk] | transpose[] |
			select(.[0] != 0 and .[1].owner.pid == $p)] | length'
}
in_spill() {
	bpftool map dump pinned "$T_PIN/vigil_socks_spill" -j |
		jq --argjson p "$1" '[.[] | select(.formatted.value.owner.pid == $p)] | length'
}
SETS=$(in_sets "$P") SPILL=$(in_spill "$P")
is "$((SETS + SPILL))" $((2 * N + 1)) "every socket has its entry while open (sets $SETS, spill $SPILL)"
[ "$SPILL" -gt 0 ]
ok $? "sets that filled spilled ($SPILL sockets)"
sleep 1.2	# the metrics are rendered once a second
E_OPEN=$(metric vigil_socket_table_entries) S_OPEN=$(metric vigil_socket_table_spilled)
[ "$E_OPEN" -ge $((2 * N + 1)) ] && [ "$S_OPEN" -ge "$SPILL" ] &&
	[ "$(metric vigil_socket_table_capacity) $(metric vigil_socket_table_spill_capacity)" = "4096 1024" ]
ok $? "the metrics: $E_OPEN entries, $S_OPEN spilled, of 4096 and 1024"

touch "$T_DIR/close"
wait_for 60 sh -c "[ \$(grep -c '\"process_close\":{\"process\":{\"exec_id\":\"[^\"]*\",\"pid\":$P,' '$EV') -ge $((2 * N + 1)) ]"
is "$(nev process_close "$P" '.process_close.closed_by != "listener_closed"')" $((2 * N)) \
	"every connection's two ends have their process_close"
is "$(in_sets "$P") $(in_spill "$P")" "0 0" "the entries go with the closes, from sets and spill"
sleep 1.2
E_SHUT=$(metric vigil_socket_table_entries)
[ -n "$E_SHUT" ] && [ "$E_SHUT" -le $((E_OPEN - 2 * N + 100)) ]	# the host's own sockets come and go
ok $? "and from the metrics: $E_SHUT entries, from $E_OPEN"
is "$(metric vigil_socket_table_full_total)" 0 "vigil_socket_table_full_total: none found no room"
is "$("$VIGIL" --pin-dir "$T_PIN" status | awk '$1 == "net_sockets_no_room" {print $2}')" 0 \
	"no socket found the table without room"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
