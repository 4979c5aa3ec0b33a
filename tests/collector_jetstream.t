#!/usr/bin/env bash
# vigil-collector --publish: every line it writes is also a JetStream
# message (subject PREFIX.NODE.KIND, message id boot-ring-rSEQ), and agents
# are acknowledged only once JetStream has acknowledged. A private
# nats-server with JetStream on loopback; a JetStream consumer (js_tool read)
# reads back what was published.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
command -v nats-server >/dev/null || skip_all "nats-server is not installed"
plan 28
JS_TOOL="$TOP/$BUILD/tests/js_tool"
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
# What stream $1 holds, one JSON object a message (js_tool read).
js_dump() { "$JS_TOOL" read "nats://127.0.0.1:$NATS_PORT" "$1" "${2:-vigil.>}" "${3:-1}"; }
# js_has STREAM SUBJECTS STRING: the stream holds a message with STRING.
js_has() { js_dump "$1" "$2" 0.3 | grep -q "$3"; }
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
# with its message id; the file holds the same lines. (The URL is a list,
# as for a cluster, whose first server is not there.)
# (never rotated: the lines are compared with JetStream's below, and a busy
# host would rotate them out of $OUT)
start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" --export-file-max-size-mb 0 \
	--publish "nats://127.0.0.1:1,$NATS" || exit 1
PORT=$COLL_PORT
grep -q 'created JetStream stream VIGIL for vigil.>' "$T_DIR/c.err"
ok $? "the collector creates the stream when it is missing"
start_agent --send "tcp://127.0.0.1:$PORT" --no-procfs --poll-ms 20 || exit 1
TAG="js$$"
gen_markers "$TAG"
wait_for 20 js_has VIGIL 'vigil.>' "\"$TAG-$N\""
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
gen_markers "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 seen_at_least "$TAG" 100 "$OUT"
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
gen_markers "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 seen_at_least "$TAG" 100 "$OUT"
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
gen_markers "$TAG" & G=$!
on_exit "kill $G"
wait_for 10 seen_at_least "$TAG" 100 "$OUT"
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
N=50 gen_markers "$TAG"
wait_for 20 js_has TWO 'site.v.>' "\"$TAG-50\""
ok $? "--publish-subject and --publish-stream name where events go"
stop_agent
kill -TERM $D; wait $D
[ ! -s "$T_DIR/stdout" ]
ok $? "with --publish and no -o, nothing goes to stdout"

# 7. JetStream refuses (a stream full, that discards new messages): what it
# refused is not acknowledged, so the agent gives it to the next collector.
"$JS_TOOL" add-stream "$NATS" FULL 'full.>' 5 || exit 1
start_collector f "" --listen tcp://127.0.0.1:0 --publish "$NATS" --publish-subject full \
	--publish-stream FULL || exit 1
FPORT=$COLL_PORT
start_agent --send "tcp://127.0.0.1:$FPORT" --no-procfs --poll-ms 20 || exit 1
TAG="jf$$"
N=50 gen_markers "$TAG"
wait_for 10 grep -q 'does not acknowledge (.*maximum messages' "$T_DIR/f.err"
ok $? "a refusal is logged with the server's reason"
kill -9 $COLL_PID; wait $COLL_PID 2>/dev/null
start_collector f "" --listen "tcp://127.0.0.1:$FPORT" --publish "$NATS" || exit 1
wait_for 30 js_has VIGIL 'vigil.>' "\"$TAG-50\""
js_dump VIGIL >"$T_DIR/js7.json"
N=50 js_markers_in_order "$TAG" "$T_DIR/js7.json"
ok $? "refused events were not acknowledged: the next collector publishes them all"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID

# 8. UDP agents' lines are published too.
start_collector u "" --listen udp://127.0.0.1:0 --publish "$NATS" || exit 1
UPORT=$(grep -o 'listening on udp://[^ ]*' "$T_DIR/u.err" | sed 's/.*://')
start_agent --send "udp://127.0.0.1:$UPORT" --no-procfs --poll-ms 20 || exit 1
TAG="ju$$"
N=20 gen_markers "$TAG"
wait_for 20 js_has VIGIL 'vigil.>' "\"$TAG-20\""
ok $? "events sent over UDP are published"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID

# 9. While JetStream is away the collector reads nobody: a connection with
# half a record waiting is not closed for it when JetStream comes back.
start_collector h "" --listen tcp://127.0.0.1:0 -o "$T_DIR/out9.json" --publish "$NATS" \
	--frame-timeout 2 || exit 1
HPORT=$COLL_PORT
start_agent --send "tcp://127.0.0.1:$HPORT" --no-procfs --poll-ms 20 || exit 1
cat >"$T_DIR/half.py" <<'PY'
# A synthetic agent (tests/collector_hostile.py speaks the format): its
# hello and half a record, the rest when GO appears; prints "acked" once
# the collector acknowledges the whole record.
import os, socket, struct, sys, time
sys.path.insert(0, sys.argv[3])
from collector_hostile import exit_event, hello, record
port, go = int(sys.argv[1]), sys.argv[2]
rec = record(exit_event(1, 4242))
s = socket.create_connection(('127.0.0.1', port))
s.sendall(hello(name=b'half-node') + rec[:40])
print('half', flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
try:
    s.sendall(rec[40:])
    s.settimeout(10)
    buf = b''
    while len(buf) < 16:
        b = s.recv(16 - len(buf))
        if not b:
            break
        buf += b
    print('acked' if len(buf) == 16 and struct.unpack('<IIQ', buf)[2] == len(rec) else 'closed', flush=True)
except OSError as e:
    print('closed', e, flush=True)
PY
/usr/bin/python3 "$T_DIR/half.py" "$HPORT" "$T_DIR/go" "$TOP/tests" >"$T_DIR/half.out" 2>&1 & H=$!
on_exit "kill $H"
wait_for 5 grep -q half "$T_DIR/half.out"
kill -TERM $NATS_PID; wait $NATS_PID 2>/dev/null
N=20 gen_markers "jw$$"
wait_for 10 grep -q 'does not acknowledge' "$T_DIR/h.err"
sleep 3	# past --frame-timeout, held
start_nats "$NATS_PORT" || exit 1
wait_for 30 grep -q 'acknowledges again' "$T_DIR/h.err"
touch "$T_DIR/go"
wait $H
is "$(tail -1 "$T_DIR/half.out")" acked "a frame half read before the outage is finished and acknowledged after it"
grep -q 'frame left unfinished' "$T_DIR/h.err"
ok $((! $?)) "no connection was closed for the time the collector held"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID

# 10. The export file's disk fills up: a batch that did not go out is neither
# acknowledged nor forgotten; once there is room, every event is written
# and published once, and the file has no torn line.
mkdir -p "$T_DIR/small"
# 2 MiB, filled but for 20 KiB: once the filler goes, room for the test's
# events and for whatever else the host runs meanwhile.
mount -t tmpfs -o size=2m tmpfs "$T_DIR/small" || exit 1
on_exit "umount -l '$T_DIR/small'"
start_collector s "" --listen tcp://127.0.0.1:0 -o "$T_DIR/small/out.json" \
	--export-file-max-size-mb 0 --publish "$NATS" || exit 1
dd if=/dev/zero of="$T_DIR/small/filler" bs=1k count=2028 2>/dev/null
start_agent --send "tcp://127.0.0.1:$COLL_PORT" --no-procfs --poll-ms 20 || exit 1
TAG="jn$$"
N=100 gen_markers "$TAG"
wait_for 10 grep -q 'cannot write events out' "$T_DIR/s.err"
ok $? "a full disk is logged"
rm -f "$T_DIR/small/filler"
wait_for 30 js_has VIGIL 'vigil.>' "\"$TAG-100\""
js_dump VIGIL >"$T_DIR/js10.json"
N=100 js_markers_in_order "$TAG" "$T_DIR/js10.json"
ok $? "after the disk was full: every event once, in order, in JetStream"
N=100 markers_in_order "$TAG" 100 "$T_DIR/small/out.json"
ok $? "and in the export file"
jq -e . "$T_DIR/small/out.json" >/dev/null
ok $? "the export file has no torn line"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID
done_testing
