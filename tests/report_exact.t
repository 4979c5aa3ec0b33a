#!/usr/bin/env bash
# Reports built by the BPF timer, over a known workload in two namespaces
# this test creates: K connections of B bytes from a known process add up
# exactly across periods; periods come one after another, each reported once,
# also across an agent restart (the timer runs on while the agent is away);
# --report-only drops the per-connection events in BPF and still counts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 29

EV1="$T_DIR/run1.json"
EV2="$T_DIR/run2.json"
B=1000
net_pair || { diag "cannot create the namespaces"; exit 1; }
NETNS_C=$(stat -L -c %i "/run/netns/$NS_C")
NETNS_S=$(stat -L -c %i "/run/netns/$NS_S")

# jq over complete lines of the given files (the agent may be mid-line).
q() { local f=$1; shift; cat "$@" | jq -R -n "[inputs | fromjson?] | $f"; }
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }
# Waits until a report_end covers time $1 (RFC 3339) in files $2...
reported_past() { local t=$1; shift
	wait_for 10 sh -c "cat $* | jq -R -e -n --arg t '$t' '[inputs | fromjson? | select(.report_end.period.end > \$t)] | length > 0' >/dev/null"; }
# sum FIELD PID FILES...: a process's counts over every report.
sum() { local k=$1 pid=$2; shift 2
	q "map(select(.process_report.process.pid == $pid) | .process_report.$k // 0) | add // 0" "$@"; }
# remote_sum FIELD IP DIRECTION NETNS FILES...: a remote end's counts.
remote_sum() { local k=$1 ip=$2 dir=$3 ns=$4; shift 4
	q "map(select(.remote_report.remote | .ip == \"$ip\" and .port == 8000 and .direction == \"$dir\" and .netns == $ns) | .remote_report.$k // 0) | add // 0" "$@"; }

start_agent -o "$EV1" --export-file-max-size-mb 0 --poll-ms 20 --report-interval 1 || exit 1

# 1. K connections of B bytes, 0.2 s apart: they span several periods.
K=12
net_run w1 client_fin $B 0 $K 0.2
C1=$(pid_of w1 client)
S1=$(pid_of w1 server)
bash -c 'echo $$ >"$1"; for i in 1 2 3 4 5; do /bin/true; done' sh "$T_DIR/execer.pid"
X=$(cat "$T_DIR/execer.pid")
END1=$(now)
reported_past "$END1" "$EV1"
ok $? "a report covers the end of the workload"

is "$(sum connects "$C1" "$EV1")" $K "client: connects add up to K=$K across periods"
is "$(sum bytes_sent "$C1" "$EV1")" $((K * B)) "client: bytes_sent add up to K*B"
is "$(sum bytes_received "$S1" "$EV1")" $((K * B)) "server: bytes_received add up to K*B"
is "$(sum accepts "$S1" "$EV1")" $K "server: accepts add up to K"
is "$(sum execs "$X" "$EV1")" 5 "a shell that ran 5 commands: execs 5"
is "$(remote_sum connections "$NET_S" outgoing "$NETNS_C" "$EV1")/$(remote_sum bytes_sent "$NET_S" outgoing "$NETNS_C" "$EV1")" \
	"$K/$((K * B))" "remote $NET_S:8000 outgoing: K connections, K*B bytes"
is "$(remote_sum connections "$NET_C" incoming "$NETNS_S" "$EV1")/$(remote_sum bytes_received "$NET_C" incoming "$NETNS_S" "$EV1")" \
	"$K/$((K * B))" "remote $NET_C (service port 8000) incoming: K connections, K*B bytes"
N=$(q "map(select(.process_report.process.pid == $C1 and .process_report.connects) | .process_report.period.id) | unique | length" "$EV1")
[ "$N" -ge 2 ]
ok $? "the connections were counted in $N periods"

# Each report_end says how many process records its period had.
BAD=$(q '(map(select(.process_report)) | group_by(.process_report.period.id) | map({key: (.[0].process_report.period.id | tostring), value: length}) | from_entries) as $n
	| map(select(.report_end) | .report_end | select(.processes != ($n[.period.id | tostring] // 0))) | length' "$EV1")
is "$BAD" 0 "every report_end counts its period's process records"
P1=$(q 'map(select(.report_end) | .report_end.period.id)' "$EV1")
is "$(jq -c '. == (sort | unique) and (length == (last - first + 1))' <<<"$P1")" true \
	"periods come one after another, each once ($(jq -c 'first, last' <<<"$P1" | paste -sd-))"
is "$(q 'map(select(.report_end) | .report_end.interval_ns) | unique' "$EV1" | jq -c .)" "[1000000000]" \
	"interval is the one asked for"
is "$(q 'map(select(.report_end) | .report_end | (.table_full // 0) + (.lost // 0)) | add' "$EV1")" 0 \
	"no count lost to a full table, no report record to a full ring"

# 2. Restart: the agent stops (pins kept), connections happen meanwhile, it
# comes back in --report-only mode and more happen.
stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "run 1: no gap and no duplicate in the sequence numbers"
K2=5
net_run w2 client_fin $B 0 $K2 0.1
C2=$(pid_of w2 client)
sleep 1.5	# the timer runs on: a report or two wait in the ring
start_agent -o "$EV2" --export-file-max-size-mb 0 --poll-ms 20 --report-interval 1 --report-only || exit 1
grep -q resumed "$T_DIR/agent.err"
ok $? "the second agent resumed the pinned programs"
K3=4
net_run w3 client_fin $B 0 $K3 0.1
C3=$(pid_of w3 client)
S3=$(pid_of w3 server)
END3=$(now)
reported_past "$END3" "$EV2"
ok $? "reports keep coming after the restart"

is "$(sum connects "$C1" "$EV1" "$EV2")" $K "run 1's client: still K connects, none counted twice"
is "$(sum connects "$C2" "$EV1" "$EV2")/$(sum bytes_sent "$C2" "$EV1" "$EV2")" "$K2/$((K2 * B))" \
	"connections made while the agent was away: reported once the agent is back"
is "$(sum connects "$C3" "$EV2")/$(sum bytes_sent "$C3" "$EV2")" "$K3/$((K3 * B))" \
	"report-only: connections counted exactly"
is "$(q "map(select((.process_connect // .process_close // .process_accept).process.pid | IN($C3, $S3))) | length" "$EV2")" 0 \
	"report-only: no per-connection event for them"
P=$(q 'map(select(.report_end) | .report_end.period.id)' "$EV1" "$EV2")
is "$(jq -c '. == (sort | unique)' <<<"$P")" true "no period reported twice across the restart"
is "$(jq -c 'length == (last - first + 1)' <<<"$P")" true "no period missing across the restart"
is "$(remote_sum connections "$NET_S" outgoing "$NETNS_C" "$EV1" "$EV2")" $((K + K2 + K3)) \
	"remote $NET_S:8000: every connection of the three runs, once"

# 3. More (process, remote) pairs than a CPU keeps between folds (64): one
# client connects once to each of 200 ports of one server process, so each
# connection is a pair of its own at both ends and pushes another out.
NP=200
ip netns exec "$NS_S" /usr/bin/python3 -c '
import socket, sys
ls = []
for p in range(9000, 9000 + int(sys.argv[1])):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", p)); s.listen(8); ls.append(s)
open(sys.argv[2] + "/pairs.pid", "w").write(str(__import__("os").getpid()))
open(sys.argv[2] + "/pairs.ready", "w").close()
for s in ls:
    c, _ = s.accept(); n = 0
    while n < int(sys.argv[3]):
        b = c.recv(65536)
        if not b: break
        n += len(b)
    c.close()
' "$NP" "$T_DIR" "$B" &
PAIRS_SERVER=$!
wait_for 5 test -e "$T_DIR/pairs.ready"
ip netns exec "$NS_C" /usr/bin/python3 -c '
import os, socket, sys
open(sys.argv[2] + "/pairs_client.pid", "w").write(str(os.getpid()))
for p in range(9000, 9000 + int(sys.argv[1])):
    s = socket.create_connection((sys.argv[4], p)); s.sendall(b"x" * int(sys.argv[3])); s.close()
' "$NP" "$T_DIR" "$B" "$NET_S"
wait "$PAIRS_SERVER"
PC=$(cat "$T_DIR/pairs_client.pid")
PS=$(cat "$T_DIR/pairs.pid")
reported_past "$(now)" "$EV2"
ok $? "a report covers the many pairs"
is "$(sum connects "$PC" "$EV2")/$(sum bytes_sent "$PC" "$EV2")" "$NP/$((NP * B))" \
	"client of $NP ports: every connect and byte counted once"
is "$(sum accepts "$PS" "$EV2")/$(sum bytes_received "$PS" "$EV2")" "$NP/$((NP * B))" \
	"server on $NP ports: every accept and byte counted once"
is "$(q "map(select(.remote_report.remote | .ip == \"$NET_S\" and .port >= 9000 and .port < $((9000 + NP)) and .direction == \"outgoing\")
	| .remote_report) | group_by(.remote.port) | map(map(.connections) | add) | [length, unique]" "$EV2" | jq -c .)" "[$NP,[1]]" \
	"each of the $NP remote ports: one connection"

stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "run 2: no gap and no duplicate in the sequence numbers"
C=$(cat "$EV1" "$EV2" | grep -c '"report_end"')
[ "$C" -ge 4 ]
ok $? "$C reports in all"
done_testing
