#!/usr/bin/env bash
# vigil-collector --publish: every line it writes is also a JetStream
# message (subject PREFIX.NODE.KIND, message id boot-ring-rSEQ), and agents
# are acknowledged only once JetStream has acknowledged. A private
# nats-server with JetStream on loopback; a JetStream consumer (js_read)
# reads back what was published.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v nats-server >/dev/null || skip_all "nats-server is not installed"
plan 19
JS_READ="$TOP/$BUILD/tests/js_read"
OUT="$T_DIR/out.json"
N=600

# start_nats [PORT]: a private server on loopback (PORT, else one it picks),
# its store in this test's folder; sets NATS_PID, NATS_PORT.
start_nats() {
	local log="$T_DIR/nats.log"
	: >"$log"
	nats-server -a 127.0.0.1 -p "${1:--1}" -js -sd "$T_DIR/js" -l "$log" &
	NATS_PID=$!
	on_exit "kill -9 $NATS_PID; wait $NATS_PID"
	wait_for 10 grep -q 'Listening for client connections' "$log" || { diag "nats-server did not start"; return 1; }
	NATS_PORT=$(grep -o 'Listening for client connections on [0-9.]*:[0-9]*' "$log" | tail -1 | sed 's/.*://')
}
# What stream $1 holds, one JSON object a message (js_read).
js_dump() { "$JS_READ" "nats://127.0.0.1:$NATS_PORT" "$1" "${2:-vigil.>}" 1; }
# Markers at a capped rate: bursts of 25, then a pause.
gen() { local i; for ((i = 1; i <= N; i += 25)); do run_markers "$1" $i $((i + 24 > N ? N : i + 24)); sleep 0.02; done; }
# The markers of TAG in a js_dump, in stream order.
js_markers() { jq -r --arg t "$1-" '.data.process_exec.process.arguments // "" | select(startswith($t)) | ltrimstr($t)' "$2"; }
js_markers_in_order() { [ "$(js_markers "$1" "$2" | tr '\n' ' ')" = "$(seq 1 "$N" | tr '\n' ' ')" ]; }
no_dup_id() { [ -z "$(jq -r .id "$1" | sort | uniq -d)" ]; }

start_nats || exit 1
NATS="nats://127.0.0.1:$NATS_PORT"

# 1. Bad settings are refused at start, naming what is wrong.
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish nats://127.0.0.1:1 2>"$T_DIR/bad1.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'publish nats://127.0.0.1:1: cannot connect' "$T_DIR/bad1.err"
ok $? "an unreachable --publish is refused, naming the URL"
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish "$NATS" --publish-subject 'a.*' 2>"$T_DIR/bad2.err"
[ $? -ne 0 ] && grep -q "publish-subject 'a.\*'" "$T_DIR/bad2.err"
ok $? "a wildcard subject prefix is refused"
timeout 10 "$COLLECTOR" --listen tcp://127.0.0.1:0 --publish "$NATS" --publish-subject other \
	--publish-stream ONE 2>"$T_DIR/mk.err" & MK=$!
wait_for 10 grep -q 'listening on' "$T_DIR/mk.err"
kill -TERM $MK; wait $MK
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish "$NATS" --publish-stream ONE 2>"$T_DIR/bad3.err"
[ $? -ne 0 ] && grep -q 'stream ONE does not take subjects vigil.>' "$T_DIR/bad3.err"
ok $? "a stream that does not take the subjects is refused, naming both"

# 2. Published as written: every marker once, in order, on its subject,
# with its message id; the file holds the same lines.
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --publish "$NATS" || exit 1
PORT=$COLL_PORT
grep -q 'created JetStream stream VIGIL for vigil.>' "$T_DIR/c.err"
ok $? "the collector creates the stream when it is missing"
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
TAG="js$$"
gen "$TAG"
wait_for 20 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
js_dump VIGIL >"$T_DIR/js1.json"
check "JetStream holds every marker once, in order" -- js_markers_in_order "$TAG" "$T_DIR/js1.json"
NODE=$(jq -r 'select(.process_exec) | .node_name' "$OUT" | head -1)
BOOT=$(grep -o 'boot [0-9a-f]*' "$T_DIR/c.err" | head -1 | cut -d' ' -f2)
RING=$(grep -o 'ring [0-9]*' "$T_DIR/c.err" | head -1 | cut -d' ' -f2)
SUBJ_NODE=$(printf %s "$NODE" | tr -c 'A-Za-z0-9_-' '_')
jq -s -e --arg s "vigil.$SUBJ_NODE.process_exec" --arg p "$BOOT-$RING-r" --arg t "$TAG-1" \
	'map(select(.data.process_exec.process.arguments == $t)) |
	 length == 1 and .[0].subject == $s and .[0].id == ($p + (.[0].data.seq | tostring))' \
	"$T_DIR/js1.json" >/dev/null
ok $? "an exec is published on vigil.NODE.process_exec with id BOOT-RING-rSEQ"
[ "$(jq -r .subject "$T_DIR/js1.json" | grep -vc "^vigil\.$SUBJ_NODE\.[a-z_]*$")" = 0 ]
ok $? "every subject is vigil.NODE.KIND"
# The file goes on growing (this test's own commands are events): each
# published line is compared with the file's line of the same sequence.
jq -S -c '.data' "$T_DIR/js1.json" | sort >"$T_DIR/js1.sorted"
jq -r .data.seq "$T_DIR/js1.json" | sort -u >"$T_DIR/js1.seqs"
jq -S -c 'select(.seq)' "$OUT" | jq -c --slurpfile s <(jq -s . "$T_DIR/js1.seqs") \
	'select(.seq as $q | $s[0] | index($q))' | jq -S -c . | sort >"$T_DIR/out.sorted"
[ -s "$T_DIR/js1.sorted" ] && cmp -s "$T_DIR/js1.sorted" "$T_DIR/out.sorted"
ok $? "each published line is the export file's line of the same sequence number"

# 3. JetStream goes away mid-stream and comes back on the same store: the
# collector holds, the agent keeps its records, nothing is lost or doubled.
TAG="jd$$"
gen "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 sh -c "[ \$(grep -c '\"$TAG-' '$OUT') -ge 100 ]"
kill -TERM $NATS_PID; wait $NATS_PID 2>/dev/null
wait_for 10 grep -q 'does not acknowledge' "$T_DIR/c.err"
ok $? "the collector says it holds while JetStream is away"
sleep 1
start_nats "$NATS_PORT" || exit 1
wait $G
wait_for 30 grep -q 'acknowledges again' "$T_DIR/c.err"
ok $? "and that JetStream acknowledges again"
wait_for 30 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
js_dump VIGIL >"$T_DIR/js2.json"
check "JetStream away: every marker once, in order" -- js_markers_in_order "$TAG" "$T_DIR/js2.json"
check "JetStream away: no message id twice" -- no_dup_id "$T_DIR/js2.json"

# 4. JetStream goes away, and the collector is killed while it holds:
# nothing it held was acknowledged, so the agent sends it again.
TAG="jh$$"
gen "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 sh -c "[ \$(grep -c '\"$TAG-' '$OUT') -ge 100 ]"
cp "$T_DIR/c.err" "$T_DIR/c.err.before"
kill -TERM $NATS_PID; wait $NATS_PID 2>/dev/null
wait_for 10 sh -c "[ \$(grep -c 'does not acknowledge' '$T_DIR/c.err') -gt \$(grep -c 'does not acknowledge' '$T_DIR/c.err.before') ]"
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
start_nats "$NATS_PORT" || exit 1
wait $G
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" --publish "$NATS" || exit 1
wait_for 30 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
js_dump VIGIL >"$T_DIR/js3.json"
check "killed while holding: every marker once in JetStream, in order" -- js_markers_in_order "$TAG" "$T_DIR/js3.json"

# 5. The collector is killed mid-stream and restarted: what it had
# published but not acknowledged comes again, and the stream's duplicate
# window keeps one.
TAG="jk$$"
gen "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 sh -c "[ \$(grep -c '\"$TAG-' '$OUT') -ge 100 ]"
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
sleep 0.5
start_collector c "" --listen "tcp://127.0.0.1:$PORT" -o "$OUT" --publish "$NATS" || exit 1
wait $G
wait_for 30 sh -c "grep -q '\"$TAG-$N\"' '$OUT'"
js_dump VIGIL >"$T_DIR/js4.json"
check "collector killed: every marker once in JetStream, in order" -- js_markers_in_order "$TAG" "$T_DIR/js4.json"
check "collector killed: no message id twice in the stream" -- no_dup_id "$T_DIR/js4.json"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID
ok $? "the collector stops cleanly"
grep -q 'JetStream: [0-9]* events published' "$T_DIR/c.err"
ok $? "and says how many events it published"

# 6. --publish without -o: JetStream is the only output; other names.
"$COLLECTOR" --listen tcp://127.0.0.1:0 --publish "$NATS" --publish-subject site.v \
	--publish-stream TWO >"$T_DIR/stdout" 2>"$T_DIR/d.err" & D=$!
on_exit "kill -9 $D"
wait_for 10 grep -q 'listening on' "$T_DIR/d.err"
DPORT=$(grep -o 'listening on tcp://[^ ]*' "$T_DIR/d.err" | sed 's/.*://')
start_agent --send "tcp://127.0.0.1:$DPORT" --no-procfs --poll-ms 20 || exit 1
TAG="jo$$"
N=50 gen "$TAG"
wait_for 20 sh -c "'$JS_READ' '$NATS' TWO 'site.v.>' 0.3 | grep -q '\"$TAG-50\"'"
ok $? "--publish-subject and --publish-stream name where events go"
stop_agent
kill -TERM $D; wait $D
[ ! -s "$T_DIR/stdout" ]
ok $? "with --publish and no -o, nothing goes to stdout"
done_testing
