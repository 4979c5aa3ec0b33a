#!/usr/bin/env bash
# Network events and reports travel the stream like every other record: the
# agent announces their types in its hello, a private vigil-collector on
# loopback accepts them and writes the same JSON lines as the agent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
. "$(dirname "$0")/net_lib.sh"
plan 6

LOCAL="$T_DIR/local.json"
COLL="$T_DIR/coll.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
start_collector c1 "" --listen tcp://127.0.0.1:0 -o "$COLL" || exit 1
start_agent --send "tcp://127.0.0.1:$COLL_PORT" -o "$LOCAL" --export-file-max-size-mb 0 \
	--poll-ms 20 --report-interval 1 || exit 1
wait_for 10 grep -q 'connected' "$T_DIR/agent.err"

net_run x client_rst 500 700
C=$(pid_of x client)
line() { grep "\"$1\":{\"process\":{\"exec_id\":\"[^\"]*\",\"pid\":$C," "$2"; }
wait_for 10 sh -c "grep -q '\"process_close\":{\"process\":{\"exec_id\":\"[^\"]*\",\"pid\":$C,' '$COLL'"
for kind in process_connect process_close process_reset; do
	L=$(line $kind "$LOCAL")
	[ -n "$L" ] && [ "$(line $kind "$COLL")" = "$L" ]
	ok $? "$kind reaches the collector, the same JSON line as the agent's"
done
wait_for 10 grep -q '"report_end"' "$COLL"
ok $? "reports reach the collector"

stop_agent
kill -TERM "$COLL_PID"
wait "$COLL_PID"
grep -q ' 0 missing in sequence' "$T_DIR/c1.err"
ok $? "the collector counted no gap"
grep -q ' 0 connections closed for bad input, 0 refused' "$T_DIR/c1.err"
ok $? "the collector refused nothing"
done_testing
