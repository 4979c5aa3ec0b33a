#!/usr/bin/env bash
# Tamper records from BPF: a test process that detaches one of vigil's
# links with bpf() (bpftool link detach) is recorded, naming the process
# and the link (the record is written from BPF, at the call's entry).
. "$(dirname "$0")/lib.sh"
plan 5
EV="$T_DIR/events.json"
start_agent --no-procfs --poll-ms 20 -o "$EV" || exit 1
LINK="$T_PIN/link_report_exec"
[ -e "$LINK" ]
ok $? "vigil's report_exec link is pinned"
ID=$(bpftool link show pinned "$LINK" -j | jq .id)
cp "$(command -v bpftool)" "$T_DIR/vt-detacher"
"$T_DIR/vt-detacher" link detach pinned "$LINK" &
DET=$!
wait $DET
wait_for 10 sh -c "jq -e -n '[inputs | select(.vigil_tamper)] | length > 0' '$EV' >/dev/null 2>&1"
T=$(jq -c --argjson p $DET 'select(.vigil_tamper.process.pid == $p) | .vigil_tamper' "$EV")
is "$(jq -r .what <<<"$T")" link_detach "a tamper record says a link was detached"
is "$(jq -r .link_id <<<"$T")" "$ID" "it names the link"
is "$(jq -r .process.binary <<<"$T")" "$T_DIR/vt-detacher" "and the process that did it"
is "$(jq -r .agent_pid <<<"$T")" "$AGENT_PID" "and the agent it was done to"
done_testing
