#!/usr/bin/env bash
# vigil-collector --publish --metrics: JetStream's side of the collector in
# its metrics and readiness. A synthetic agent's events are counted as
# published; a JetStream server that stops answering (SIGSTOP) makes the
# collector hold its agents, not ready (503) with the reason, and counts
# the refused attempts; continued, it is ready again and the events are
# published. A private nats-server on loopback.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v nats-server >/dev/null || skip_all "nats-server is not installed"
plan 6
H=/usr/bin/python3
: >"$T_DIR/nats.log"
nats-server -a 127.0.0.1 -p -1 -js -sd "$T_DIR/js" -l "$T_DIR/nats.log" &
NATS_PID=$!
on_exit "kill -CONT $NATS_PID; kill -9 $NATS_PID; wait $NATS_PID"
wait_for 10 grep -q 'Listening for client connections' "$T_DIR/nats.log" || exit 1
NATS_PORT=$(grep -o 'Listening for client connections on [0-9.]*:[0-9]*' "$T_DIR/nats.log" | tail -1 | sed 's/.*://')
start_collector c "" --listen tcp://127.0.0.1:0 --publish "nats://127.0.0.1:$NATS_PORT" \
	--publish-wait 1 --metrics 127.0.0.1:0 || exit 1
M=http://$(grep -o 'metrics on http://[^ ]*' "$T_DIR/c.err" | sed 's|.*http://||')
metric() { curl -s --max-time 2 "$M/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
metric_ge() { local v; v=$(metric "$1"); [ -n "$v" ] && [ "$v" -ge "$2" ]; }

is "$($H "$TOP/tests/collector_hostile.py" "$COLL_PORT" good 50)" "acked $((50 * 88))" \
	"a synthetic agent's 50 events are acknowledged once JetStream has them"
wait_for 5 metric_ge vigil_collector_jetstream_published_total 50
ok $? "vigil_collector_jetstream_published_total counts them ($(metric vigil_collector_jetstream_published_total))"

kill -STOP $NATS_PID
$H "$TOP/tests/collector_hostile.py" "$COLL_PORT" good 20 >"$T_DIR/held" &
held=$!
wait_for 15 sh -c "curl -s '$M/readyz' | jq -e '.status == \"not ready\"' >/dev/null"
ok $? "JetStream stopped: the collector is not ready ($(curl -s "$M/readyz" | tr -d '\n'))"
is "$(metric vigil_collector_jetstream_holding) $(curl -s -o /dev/null -w '%{http_code}' "$M/livez")" "1 200" \
	"holding its agents, and still live"
kill -CONT $NATS_PID
wait_for 30 sh -c "curl -s '$M/readyz' | jq -e '.status == \"ready\"' >/dev/null"
ok $? "JetStream back: ready again"
wait $held
metric_ge vigil_collector_jetstream_refusals_total 1 && metric_ge vigil_collector_jetstream_published_total 70
ok $? "the refused attempts are counted ($(metric vigil_collector_jetstream_refusals_total)) and every event published ($(metric vigil_collector_jetstream_published_total))"
done_testing
