#!/usr/bin/env bash
# --metrics through a real Prometheus (a private instance on loopback that
# this test starts, with a scrape config it writes): after a known workload
# the values read back through Prometheus's HTTP API are exact for series
# the test owns (its deny rule's hits, a synthetic agent's records at the
# collector, the garbage it sends the collector) and at least the workload
# for host-wide ones. Health: /livez and /readyz answer; a collector
# outage makes the agent not ready but still live. The HTTP server is
# bounded: garbage requests get 400, a slowloris holding every connection
# does not slow the event path, and scrapes work again once it is cut.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/prom_lib.sh"
plan 17
H=/usr/bin/python3
CG=$(new_cgroup m) || exit 1
NS=$(new_netns m) || exit 1

start_collector c "" --listen tcp://127.0.0.1:0 -o "$T_DIR/coll.json" --metrics 127.0.0.1:0 || exit 1
CPORT=$COLL_PORT
CMET=$(metrics_addr "$T_DIR/c.err")
printf 'rules:\n  - {name: t-deny, action: deny, protocol: tcp, port: 7301, cgroup: %s}\n' "$CG" >"$T_DIR/p.yaml"
chmod 600 "$T_DIR/p.yaml"
start_agent -o "$T_DIR/ev.json" --no-procfs --policy "$T_DIR/p.yaml" --metrics 127.0.0.1:0 \
	--send "tcp://127.0.0.1:$CPORT" || exit 1
AMET=$(metrics_addr "$T_DIR/agent.err")

# Prometheus, scraping both every second.
start_prometheus vigild="$AMET" collector="$CMET"
ok $? "Prometheus scrapes both daemons"

# The workload: 3 connects the rule denies, from the test's cgroup; a
# synthetic agent's 50 records; one garbage connection to the collector.
for _ in 1 2 3; do
	sh -c 'echo $$ >"$1/cgroup.procs" && exec ip netns exec "$2" /usr/bin/python3 -c "
import socket; s = socket.socket()
try: s.connect((\"127.0.0.1\", 7301))
except OSError: pass"' _ "$CG" "$NS"
done
is "$($H "$TOP/tests/collector_hostile.py" "$CPORT" good 50)" "acked $((50 * 88))" "a synthetic agent's 50 records are acknowledged"
$H "$TOP/tests/collector_hostile.py" "$CPORT" garbage >/dev/null
wait_for 15 query_is 'vigil_policy_events_total{policy="t-deny"}' 3
is "$(query 'vigil_policy_events_total{policy="t-deny",action="deny"}')" 3 "the rule's 3 hits, exactly, through Prometheus"
wait_for 10 query_ge vigil_collector_records_total 50
ok $? "the collector's records: at least the synthetic agent's 50 ($(query vigil_collector_records_total))"
wait_for 10 query_is 'vigil_collector_refused_total{reason="bad_input"}' 1
is "$(query 'vigil_collector_refused_total{reason="bad_input"}')" 1 "the garbage connection, exactly once"
is "$(query 'vigil_collector_process_cache_full_total') $(query 'vigil_collector_process_lookups_missed_total' | grep -c .)" "0 1" \
	"the collector's process cache counts: none full, lookups missed exported"
n=$(query 'sum(vigil_events_total{job="vigild"})')
[ "${n:-0}" -ge 3 ] 2>/dev/null
ok $? "the agent's events by type: at least the workload ($n)"
query_ge 'vigil_process_cache_entries' 1 && query_ge 'vigil_process_cache_capacity' 65536
ok $? "the agent's process cache: entries and capacity"
is "$(query 'vigil_up{job="vigild"}') $(query 'vigil_sink_state{state="up"}')" "1 1" \
	"vigil_up and the stream's one-hot state"

# Every family either daemon serves is in docs/operations.md.
undocumented=$(for m in "$AMET" "$CMET"; do curl -s "http://$m/metrics"; done | awk '/^# TYPE/ { print $3 }' |
	while read -r f; do grep -q "\`$f[{\`]" "$TOP/docs/operations.md" || echo "$f"; done)
is "$undocumented" "" "every series served is documented in docs/operations.md"

# Health.
A="http://$AMET"
is "$(curl -s -o /dev/null -w '%{http_code}' "$A/livez") $(curl -s "$A/readyz" | jq -r .status)" "200 ready" \
	"/livez 200, /readyz ready"
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
wait_for 10 sh -c "curl -s '$A/readyz' | jq -e '.status == \"not ready\"' >/dev/null"
ok $? "the collector gone, the agent is not ready ($(curl -s "$A/readyz" | tr -d '\n'))"
is "$(curl -s -o /dev/null -w '%{http_code}' "$A/livez")" 200 "but still live"

# Bounded: garbage, then a slowloris on every connection the server takes.
r=$(printf 'GARBAGE \x01\x02 /x\r\n\r\n' | timeout 5 $H -c '
import socket, sys
h, p = sys.argv[1].rsplit(":", 1); s = socket.create_connection((h, int(p)), 3)
s.sendall(sys.stdin.buffer.read()); print(s.recv(64).decode(errors="replace").split("\r\n")[0])' "$AMET")
[[ "$r" == "HTTP/1.1 400"* ]]
ok $? "a garbage request gets 400 ($r)"
$H -c '
import socket, sys, time
h, p = sys.argv[1].rsplit(":", 1); cs = []
for _ in range(48):
    try: s = socket.create_connection((h, int(p)), 2); s.sendall(b"GET /metrics HTTP/1.1\r\nX-a: "); cs.append(s)
    except OSError: pass
t = time.time()
while time.time() - t < 8:
    for s in cs:
        try: s.send(b"a")
        except OSError: pass
    time.sleep(0.5)' "$AMET" &
slow=$!
sleep 2
/bin/true metrics-slowloris-marker
wait_for 10 grep -q '"metrics-slowloris-marker"' "$T_DIR/ev.json"
ok $? "events keep flowing to the export file under the slowloris"
wait $slow
wait_for 10 sh -c "curl -s --max-time 2 '$A/metrics' | grep -q '^vigil_up 1'"
ok $? "scrapes work again once the slowloris is gone"
stop_agent
ok $? "the agent stops cleanly"
done_testing
