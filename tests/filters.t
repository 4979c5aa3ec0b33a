#!/usr/bin/env bash
# Export filters (a policy's `filters:`) drop events in BPF before the
# ring: real execs, exits and connections filtered by each selector
# (binary exact and prefix, uid, cgroup, network namespace, allow lists),
# counted exactly by filter in `vigil status`, its --json, the stop line
# and /metrics; the events next to them kept; no sequence gap and no loss;
# a reload swaps the filters whole (a long-running process's binary is
# matched by the scan); a bad filter is refused with file:line:column.
# Only the test's own binaries, uid, cgroup and namespace are matched.
. "$(dirname "$0")/lib.sh"
plan 29

[ -n "$(cgroup2_mount)" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup filt) || exit 1
NS=$(new_netns f) || exit 1
chmod 755 "$T_DIR"
B="$T_DIR/bin"
mkdir -p "$B/pfx"
chmod 755 "$B" "$B/pfx"
for b in quiet loud mark uidprobe cgprobe; do cp /bin/true "$B/$b"; done
cp /bin/true "$B/pfx/one"; cp /bin/true "$B/pfx/two"
cp /bin/sleep "$B/sleepy"
FUID=$((60000 + $$ % 5000))	# a uid no one else runs as
N=5
EV="$T_DIR/ev.json"
P="$T_DIR/p.yaml"

policy_a() {
	cat <<POL
filters:
  - name: f-bin
    action: deny
    kinds: [exec, exit]
    binary: $B/quiet
  - name: f-prefix
    action: deny
    kinds: [exec]
    binary_prefix: $B/pfx/
  - name: f-uid
    action: deny
    kinds: [exec, exit]
    uid: $FUID
  - name: f-cgroup
    action: deny
    kinds: [connect]
    cgroup: $CG
  - name: f-netns
    action: deny
    kinds: [listen]
    netns: $NS
POL
}
# The same filters but f-bin, which now names loud; and sleepy's exit.
policy_b() {
	policy_a | sed "s|binary: $B/quiet|binary: $B/loud|"
	cat <<POL
  - name: f-sleepy
    action: deny
    kinds: [exit]
    binary: $B/sleepy
POL
}
# How many events of kind (process_exec...) name binary.
nbin() { jq -R --arg k "$1" --arg b "$2" 'fromjson? | select(.[$k].process.binary == $b)' "$EV" | jq -s length; }
# Connections to port (the server's side: accept; the client's: connect).
nport() { jq -R --arg k "$1" --argjson p "$2" 'fromjson? | .[$k] | select(. != null and (.destination_port == $p or .source_port == $p))' "$EV" | jq -s length; }
count() { "$VIGIL" --pin-dir "$T_PIN" status --json | jq -r --arg f "$1" '.filtered[$f]'; }
marker() { "$B/mark" "filters-marker-$1"; wait_for 10 grep -q "filters-marker-$1" "$EV"; }
# A TCP server on loopback (root namespace) that accepts n connections.
serve() { /usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(64); print(s.getsockname()[1], flush=True)
for _ in range(int(sys.argv[1])): s.accept()[0].close()' "$1"; }
connect_from_cg() { sh -c 'echo $$ > "$1/cgroup.procs" && exec /usr/bin/python3 -c "
import socket, sys
for _ in range(int(sys.argv[2])): socket.create_connection((\"127.0.0.1\", int(sys.argv[1]))).close()" "$2" "$3"' sh "$CG" "$1" "$2"; }

# 1. Bad filters are refused with file:line:column.
bad() { printf 'filters:\n  - name: b\n    action: deny\n%s\n' "$1" >"$T_DIR/bad.yaml"; "$VIGIL" policy check "$T_DIR/bad.yaml" 2>&1; }
is "$(bad '    kinds: [exce]')" "$T_DIR/bad.yaml:4:13: unknown kind (one of: exec, exit, fork, connect, accept, listen, close, reset)" \
	"an unknown kind is refused with its position"
is "$(bad '    kinds: [exec, tamper]')" "$T_DIR/bad.yaml:4:19: 'tamper' records are never filtered" \
	"tamper records cannot be filtered"
is "$(bad '    binnary: /x')" "$T_DIR/bad.yaml:4:5: unknown key in a filter (known: name, action, kinds, binary, binary_prefix, uid, cgroup, netns)" \
	"an unknown key is refused with its position"
is "$(bad '    binary: rel/x')" "$T_DIR/bad.yaml:4:13: bad binary: an absolute path of at most 255 bytes, without control characters" \
	"a relative binary is refused"

# 2. Each selector filters its own events, counted exactly.
policy_a >"$P"
start_agent -o "$EV" --no-procfs --poll-ms 10 --policy "$P" --metrics 127.0.0.1:0 || exit 1
MET=$(grep -o 'metrics on http://[^ ]*' "$T_DIR/agent.err" | sed 's|.*http://||')
PFX_PIDS=()
for ((i = 0; i < N; i++)); do
	"$B/quiet"; "$B/loud"; "$B/pfx/one" & PFX_PIDS+=($!); wait $!; "$B/pfx/two"
	setpriv --reuid "$FUID" --regid "$FUID" --clear-groups "$B/uidprobe"
done
serve "$N" >"$T_DIR/port" &
SRV=$!
wait_for 10 grep -q . "$T_DIR/port"
PORT=$(cat "$T_DIR/port")
connect_from_cg "$PORT" "$N"
wait "$SRV"
ip netns exec "$NS" /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)'
marker 1
is "$(nbin process_exec "$B/quiet") $(nbin process_exit "$B/quiet")" "0 0" "binary: no exec or exit of the filtered binary"
is "$(nbin process_exec "$B/loud")" "$N" "the binary next to it is kept"
# Their exits are kept, but name no binary: the stream never saw the exec.
nexit_pids() { jq -R --argjson p "[$(IFS=,; echo "$*")]" 'fromjson? | .process_exit.process.pid as $x | select($x != null and ($p | index($x)))' "$EV" | jq -s length; }
is "$(nbin process_exec "$B/pfx/one") $(nbin process_exec "$B/pfx/two") $(nexit_pids "${PFX_PIDS[@]}")" "0 0 $N" \
	"binary_prefix: no exec under the prefix; exits (a kind not named) kept"
is "$(nbin process_exec "$B/uidprobe") $(nbin process_exit "$B/uidprobe")" "0 0" "uid: the uid's exec and exit are filtered"
is "$(nbin process_exec /usr/bin/setpriv)" "$N" "the root exec before it is kept"
is "$(nport process_connect "$PORT")" 0 "cgroup: the cgroup's connects are filtered"
is "$(nport process_accept "$PORT")" "$N" "the accepts of the same connections are kept"
is "$(jq -R --argjson ns "$(stat -L -c %i /run/netns/"$NS")" 'fromjson? | .process_listen | select(. != null and .netns == $ns)' "$EV" | jq -s length)" 0 \
	"netns: the namespace's listen is filtered"
is "$(count f-bin) $(count f-prefix) $(count f-uid) $(count f-cgroup) $(count f-netns)" \
	"$((2 * N)) $((2 * N)) $((2 * N)) $N 1" "vigil status --json counts each filter exactly"
"$VIGIL" --pin-dir "$T_PIN" status | grep -q "^filtered: f-bin=$((2 * N)) f-prefix=$((2 * N)) f-uid=$((2 * N)) f-cgroup=$N f-netns=1$"
ok $? "vigil status says the same"
# (the page is rendered once a second: a scrape may come before the next)
metric_is() { curl -s --max-time 5 "http://$MET/metrics" | grep -q "^vigil_events_filtered_total{filter=\"$1\"} $2\$"; }
wait_for $((5 * T_SLOW)) metric_is f-uid $((2 * N))
ok $? "the metric vigil_events_filtered_total{filter} counts them"

# 3. A reload swaps the filters whole; a process running since before it
# is matched by its binary (the scan), and a kept name keeps its count.
"$B/sleepy" 30 &
SLEEPY=$!
marker 2
policy_b >"$P"
kill -HUP "$AGENT_PID"
wait_for 10 sh -c "[ \$(grep -c 'export filters in force' '$T_DIR/agent.err') -ge 2 ]"
for ((i = 0; i < N; i++)); do "$B/quiet"; "$B/loud"; setpriv --reuid "$FUID" --regid "$FUID" --clear-groups "$B/uidprobe"; done
kill "$SLEEPY"; wait "$SLEEPY" 2>/dev/null
marker 3
is "$(nbin process_exec "$B/quiet")" "$N" "after the reload the old binary filter is gone"
is "$(nbin process_exec "$B/loud")" "$N" "and the new one is in force"
is "$(nbin process_exit "$B/sleepy") $(count f-sleepy)" "0 1" "a process from before the reload is matched by its binary"
is "$(count f-uid)" $((4 * N)) "a filter kept by name keeps counting"
is "$(count f-bin)" $((4 * N)) "a filter whose selectors changed keeps its name's count"

# 4. Filtered is not lost: no gap in seq, no ring loss, and the stop line.
lost=$(curl -s --max-time 5 "http://$MET/metrics" | awk '/^vigil_events_lost_total\{stage="(reserve|sequence)"\}/ { s += $2 } END { print s + 0 }')
is "$lost" 0 "no event counted lost by reserve or by sequence gaps"
stop_agent
grep -q "stopped: [0-9]* records, 0 gaps and 0 duplicates in sequence; BPF counted 0 ring-full losses" "$T_DIR/agent.err"
ok $? "no sequence gap and no loss with filters dropping events"
line=$(grep "filtered before the ring (not lost)" "$T_DIR/agent.err")
[[ "$line" == *"f-uid=$((4 * N))"* && "$line" == *"f-sleepy=1"* ]]
ok $? "the stop line counts filtered events by filter, apart from loss" || diag "$line"

# 5. An allow list: only the cgroup's exits are kept; the rest counted
# as not_allowed.
cat >"$P" <<POL
filters:
  - name: cg-exits
    action: allow
    kinds: [exit]
    cgroup: $CG
POL
: >"$EV"
start_agent -o "$EV" --no-procfs --poll-ms 10 --policy "$P" || exit 1
for ((i = 0; i < N; i++)); do
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2"' sh "$CG" "$B/cgprobe"
	"$B/quiet"
done
marker 4
is "$(nbin process_exit "$B/cgprobe")" "$N" "allow: the cgroup's exits are kept"
is "$(nbin process_exit "$B/quiet") $(nbin process_exec "$B/quiet")" "0 $N" "other exits are dropped, other kinds kept"
n=$(count not_allowed)
[ "$n" -ge "$N" ]
ok $? "what no allow filter matched is counted as not_allowed ($n)"
is "$(count cg-exits)" 0 "an allow filter counts nothing itself"

# 6. A bad filters section on SIGHUP: refused with its position, the
# filters in force stay.
printf 'filters:\n  - name: x\n    action: deny\n    kinds: [exec, heartbeat]\n' >"$P"
kill -HUP "$AGENT_PID"
wait_for 10 grep -q "p.yaml:4:19: 'heartbeat' records are never filtered" "$T_DIR/agent.err"
ok $? "a bad filters section on reload is refused with file:line:column"
for ((i = 0; i < N; i++)); do "$B/quiet"; done
marker 5
is "$(nbin process_exit "$B/quiet")" 0 "and the filters in force stay"
stop_agent
done_testing
