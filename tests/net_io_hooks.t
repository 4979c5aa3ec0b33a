#!/usr/bin/env bash
# --no-io-hooks: no hook at every send and receive; an accepted socket's
# owner is named at accept() in the process that accepted it (a pre-forked
# worker; the accept hooks are attached in either mode), and a restart that
# changes the setting swaps the pinned send and receive hooks.
# In namespaces this test creates.
. "$(dirname "$0")/lib.sh"
needs io-tracepoints
. "$(dirname "$0")/net_lib.sh"
plan 10

EV="$T_DIR/events.json"
net_pair || { diag "cannot create the namespaces"; exit 1; }
linked() { test -e "$T_PIN/link_$1"; }

start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1
linked net_send && linked net_recv && linked net_accept4 && linked net_accept
ok $? "by default the send and receive hooks are attached, and the accept hooks"
# This agent's own send and receive programs (another vigild on the node has
# its own, which this test must not count).
IO_PROGS=$(for l in net_send net_recv; do bpftool -j link show pinned "$T_PIN/link_$l"; done |
	jq -s -c '[.[].prog_id]')
stop_agent

start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 --no-io-hooks || exit 1
! linked net_send && ! linked net_recv && linked net_accept4 && linked net_accept
ok $? "--no-io-hooks: a restart detaches the send and receive hooks, keeps the accept hooks"
is "$(grep -c 'detached .*link_net_\(send\|recv\)' "$T_DIR/agent.err")/$(grep -c 'cannot' "$T_DIR/agent.err")" 2/0 \
	"the detaching is logged, with no error"
# Detached, not only unpinned: no link in the kernel runs either program.
is "$(jq length <<<"$IO_PROGS")/$(bpftool -j link show | jq --argjson p "$IO_PROGS" '[.[] | select(.prog_id as $i | $p | index($i))] | length')" 2/0 \
	"no link runs this agent's send or receive program"

# The listener's owner forks a worker that accepts and does the I/O.
net_server prefork prefork 1000 2000
net_client prefork client_fin 1000 2000
wait "$SERVER_PID"
S=$(pid_of prefork server)
W=$(pid_of prefork worker)
flushed process_close "$W"
sleep 0.2
WC=$(ev process_close "$W" '.process_close.direction == "incoming"')
is "$(wc -l <<<"$WC")/$(nev process_close "$S" '.process_close.direction == "incoming"')" 1/0 \
	"prefork: the close names the worker that accepted, not the listener's owner"
is "$(field '.process_close | [.owner_refined, .closed_by, .stats.bytes_sent, .stats.bytes_received] | join(" ")' "$WC")" \
	"true peer_fin 2000 1000" "prefork: owner_refined, who closed, exact bytes"
C=$(pid_of prefork client)
is "$(field '.process_close | [.owner_refined // false, .stats.bytes_sent] | join(" ")' "$(ev process_close "$C")")" \
	"false 1000" "the connecting side keeps the owner connect() named"
stop_agent

start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 || exit 1
linked net_send && linked net_recv && linked net_accept4 && linked net_accept
ok $? "a restart without it swaps back"
net_run again client_fin 10 10
flushed process_close "$(pid_of again server)"
ok $? "connections are still reported after the swap"
stop_agent
grep -q ' 0 gaps and 0 duplicates' "$T_DIR/agent.err"
ok $? "no gap and no duplicate in the sequence numbers"
done_testing
