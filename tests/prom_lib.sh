# shellcheck shell=bash
# A private Prometheus for the metrics tests (sourced after lib.sh): Debian's
# `prometheus`, on loopback, scraping the test's own daemons every second
# from a config this writes; values are read back through its HTTP API.
#   start_prometheus JOB=ADDR:PORT...   starts it (PROM_PORT) and waits until
#                                       every target is up
#   metrics_addr ERRFILE                the ADDR:PORT a daemon said it serves
#   query PROMQL                        the first sample's value, or nothing
#   query_is PROMQL VALUE, query_ge PROMQL VALUE
# Skips the whole test where prometheus is not installed.
command -v prometheus >/dev/null || skip_all "no prometheus (Debian's package)"

# metrics_addr ERRFILE: the address a daemon serves its metrics on.
metrics_addr() { grep -o 'metrics on http://[^ ]*' "$1" | head -1 | sed 's|.*http://||'; }

start_prometheus() {
	local t n=$#
	{
		echo 'global: { scrape_interval: 1s, evaluation_interval: 1s }'
		echo 'scrape_configs:'
		for t in "$@"; do
			printf '  - job_name: %s\n    static_configs: [{ targets: ["%s"] }]\n' "${t%%=*}" "${t#*=}"
		done
	} >"$T_DIR/prom.yml"
	# Port 0, and the port it took read from its log: a port found free
	# beforehand can be taken by anything before Prometheus binds it.
	prometheus --config.file="$T_DIR/prom.yml" --storage.tsdb.path="$T_DIR/tsdb" \
		--web.listen-address=127.0.0.1:0 >"$T_DIR/prom.log" 2>&1 &
	PROM_PID=$!
	on_exit "kill $PROM_PID"
	wait_for 30 grep -q 'msg="Listening on" address=' "$T_DIR/prom.log" &&
		PROM_PORT=$(grep -o 'msg="Listening on" address=127.0.0.1:[0-9]*' "$T_DIR/prom.log" | head -1 | sed 's/.*://') &&
		wait_for 60 sh -c "curl -s http://127.0.0.1:$PROM_PORT/api/v1/targets | jq -e '[.data.activeTargets[] | select(.health == \"up\")] | length == $n' >/dev/null 2>&1" &&
		return 0
	diag "Prometheus did not scrape all of $*:"
	prom_diag
	return 1
}
# prom_diag: why queries may have come back empty: whether this test's
# Prometheus still runs and answers, and the end of its log.
prom_diag() {
	diag "prometheus pid ${PROM_PID:-?} $([ -n "${PROM_PID:-}" ] && kill -0 "$PROM_PID" 2>/dev/null && echo runs || echo "is gone"), port ${PROM_PORT:-?}:" \
		"$(curl -s --max-time 3 "http://127.0.0.1:${PROM_PORT:-0}/api/v1/targets" | jq -c '[.data.activeTargets[] | {job: .labels.job, health, lastError}]' 2>&1)"
	tail -5 "$T_DIR/prom.log" | sed 's/^/#   /'
}
query() {
	curl -s --max-time 3 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}
query_is() { [ "$(query "$1")" = "$2" ]; }
query_ge() { local v; v=$(query "$1"); [ -n "$v" ] && [ "$v" -ge "$2" ]; }
