#!/usr/bin/env bash
# vigild --metrics-label binary, through a real Prometheus (tests/prom_lib.sh):
# three agents on pins of their own watch the same workload. Without the
# option (agent "plain") no series carries a binary label. With it ("label")
# the test's own binaries have exact counts: 5 execs and 5 exits of a copy
# of true, 3 connects a deny rule refused to a copy of bash (the policy
# series), and a binary whose name holds a byte that is not UTF-8, written
# escaped, which Prometheus still takes. With --metrics-binaries 3
# ("bound") the label has at most 3 binaries' values, the others count
# under "other".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/prom_lib.sh"
plan 10
CG=$(new_cgroup mb) || exit 1
NS=$(new_netns mb) || exit 1

# agent NAME ARGS...: vigild on pins $T_PIN/NAME, its metrics' address in
# $T_DIR/NAME.addr.
agent() {
	local name=$1; shift
	"$VIGILD" --pin-dir "$T_PIN/$name" --no-procfs -o /dev/null --metrics 127.0.0.1:0 "$@" \
		2>"$T_DIR/$name.err" &
	on_exit "kill -TERM $!; wait $!; $VIGIL --pin-dir $T_PIN/$name unpin"
	wait_for 20 grep -qs 'attached' "$T_DIR/$name.err" ||
		{ diag "agent $name did not start:"; sed 's/^/#   /' "$T_DIR/$name.err"; return 1; }
	metrics_addr "$T_DIR/$name.err" >"$T_DIR/$name.addr"
}
mkdir -p "$T_PIN"
printf 'rules:\n  - {name: t-deny, action: deny, protocol: tcp, port: 7302, cgroup: %s}\n' "$CG" >"$T_DIR/p.yaml"
chmod 600 "$T_DIR/p.yaml"
agent plain && agent label --metrics-label binary --metrics-binaries 1000 --policy "$T_DIR/p.yaml" &&
	agent bound --metrics-label binary --metrics-binaries 3 || exit 1
start_prometheus plain="$(cat "$T_DIR/plain.addr")" label="$(cat "$T_DIR/label.addr")" \
	bound="$(cat "$T_DIR/bound.addr")"
ok $? "Prometheus scrapes the three agents"

TRUE="$T_DIR/vigil-label-true" CONN="$T_DIR/vigil-label-conn" ODD="$T_DIR/odd"$'\xff'"name"
cp /bin/true "$TRUE" && cp /bin/bash "$CONN" && cp /bin/true "$ODD"
for i in 1 2 3 4 5; do "$TRUE" "label-$i"; done
"$ODD"
for i in 1 2 3; do
	sh -c 'echo $$ >"$1/cgroup.procs" && exec ip netns exec "$2" "$3" -c "exec 3<>/dev/tcp/127.0.0.1/7302"' \
		_ "$CG" "$NS" "$CONN" 2>/dev/null
done
for i in 1 2 3 4 5; do cp /bin/true "$T_DIR/many-$i" && "$T_DIR/many-$i"; done

B="binary=\"$TRUE\""
wait_for 15 query_is "vigil_events_total{job=\"label\",type=\"exit\",$B}" 5
is "$(query "vigil_events_total{job=\"label\",type=\"exec\",$B}") $(query "vigil_events_total{job=\"label\",type=\"exit\",$B}")" "5 5" \
	"with the label: the test binary's 5 execs and 5 exits, exactly" || prom_diag
wait_for 10 query_is "vigil_policy_events_total{job=\"label\",policy=\"t-deny\",binary=\"$CONN\"}" 3
is "$(query "vigil_policy_events_total{job=\"label\",policy=\"t-deny\",action=\"deny\",binary=\"$CONN\"}")" 3 \
	"the policy series: the rule's 3 refusals under the binary that connected"
is "$(query "vigil_events_total{job=\"label\",type=\"exec\",binary=\"$T_DIR/odd\\\\xffname\"}")" 1 \
	"a binary named with a byte that is not UTF-8: its exec, under the name escaped"
# (each job is scraped on its own schedule: wait for both)
wait_for 15 query_ge 'sum(vigil_events_total{job="label",type="exec"})' 11
wait_for 15 query_ge 'sum(vigil_events_total{job="plain",type="exec"})' 11
n=$(query 'sum(vigil_events_total{job="label",type="exec"})') m=$(query 'sum(vigil_events_total{job="plain",type="exec"})')
[ "${n:-0}" -ge 11 ] && [ "${m:-0}" -ge 11 ]
ok $? "every exec is counted, labelled or not ($n with the label, $m without)"

is "$(query 'count(vigil_events_total{job="plain",binary!=""})')" "" "without the option no series has a binary label"
is "$(query 'count(vigil_policy_events_total{job="plain",binary!=""})')" "" "nor a policy series"
wait_for 10 query_ge 'sum(vigil_events_total{job="bound",type="exec",binary="other"})' 2
ok $? "over --metrics-binaries 3, binaries count under other ($(query 'sum(vigil_events_total{job="bound",type="exec",binary="other"})'))"
n=$(query 'count(count by (binary) (vigil_events_total{job="bound",binary!~"|other|unknown"}))')
[ "${n:-0}" -ge 1 ] && [ "$n" -le 3 ]
ok $? "and no more than 3 binaries have a value of their own ($n)"
is "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets" | jq -r '[.data.activeTargets[] | select(.health != "up")] | length')" 0 \
	"every scrape was taken: no label value Prometheus refused"
done_testing
