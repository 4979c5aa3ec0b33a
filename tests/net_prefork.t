#!/usr/bin/env bash
# A pre-forked server (issue 34, point 6): the listener's creator forks 4
# workers that all accept on its one socket. Each accept event names the
# worker whose accept() returned that connection (as Tetragon's
# inet_csk_accept fires in the caller), not the listener's creator, in
# vigil's form, in Tetragon's and in the compact view. In a namespace this
# test creates, on its loopback.
. "$(dirname "$0")/lib.sh"
plan 6

NS=$(new_netns prefork) || exit 1
EV="$T_DIR/events.json"
TV="$T_DIR/tetragon.json"
CV="$T_DIR/compact.txt"
start_agent -o "$EV" --export-file-max-size-mb 0 --poll-ms 20 --no-procfs || exit 1

# The server: 4 workers accept on the listener their parent made, PER
# connections each (so that every worker takes some); each writes "pid
# peer-port" for every connection it accepted, and answers.
cat >"$T_DIR/server.py" <<'PY'
import os, socket, sys
d, per = sys.argv[1], int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 8100))
ls.listen(64)
workers = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        ls.settimeout(5)
        with open(os.path.join(d, "accepted.%d" % os.getpid()), "w") as out:
            try:
                for _ in range(per):
                    c, peer = ls.accept()
                    out.write("%d %d\n" % (os.getpid(), peer[1]))
                    out.flush()
                    c.recv(16)
                    c.sendall(b"ok")
                    c.close()
            except socket.timeout:
                pass
        os._exit(0)
    workers.append(pid)
open(os.path.join(d, "server.pid"), "w").write(str(os.getpid()))
open(os.path.join(d, "ready"), "w").close()
for w in workers:
    os.waitpid(w, 0)
PY
ip netns exec "$NS" /usr/bin/python3 "$T_DIR/server.py" "$T_DIR" 4 &
SERVER=$!
wait_for 5 test -e "$T_DIR/ready"
# 16 connections, one at a time, each from its own port.
ip netns exec "$NS" /usr/bin/python3 -c '
import socket
for _ in range(16):
    s = socket.create_connection(("127.0.0.1", 8100), timeout=5)
    s.sendall(b"hi")
    s.recv(16)
    s.close()'
wait "$SERVER"
PARENT=$(cat "$T_DIR/server.pid")
cat "$T_DIR"/accepted.* | sort -n >"$T_DIR/accepted"
is "$(wc -l <"$T_DIR/accepted")/$(cut -d' ' -f1 "$T_DIR/accepted" | sort -u | wc -l)" 16/4 \
	"16 connections, accepted by the 4 workers"
wait_for 10 sh -c "[ \$(grep -c '\"process_accept\".*\"source_port\":8100' '$EV') -ge 16 ]"
stop_agent

# The accept events' process, by the peer's port.
jq -r 'select(.process_accept.source_port == 8100) | "\(.process_accept.process.pid // 0) \(.process_accept.destination_port)"' \
	"$EV" | sort -n >"$T_DIR/said"
diff "$T_DIR/accepted" "$T_DIR/said" >"$T_DIR/diff"
ok $? "each accept names the worker that accepted it, not the listener's creator ($PARENT)"
sed 's/^/#   /' "$T_DIR/diff" | head -8
is "$(jq -r 'select(.process_accept.source_port == 8100) | .process_accept.process.binary' "$EV" | sort -u)" \
	"$(readlink -f /usr/bin/python3)" "and the worker is a known process (its binary)"

# Again with Tetragon's form in the file and the compact view on stdout.
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null
: >"$T_DIR/agent.err"
"$VIGILD" --pin-dir "$T_PIN" --compact -o "$TV" --export-format tetragon --export-file-max-size-mb 0 \
	--poll-ms 20 --no-procfs >"$CV" 2>>"$T_DIR/agent.err" &
AGENT_PID=$!
on_exit "kill -TERM $AGENT_PID; wait $AGENT_PID"
wait_for 20 grep -qs 'attached\|resumed' "$T_DIR/agent.err" || { diag "agent did not start"; exit 1; }
mkdir -p "$T_DIR/t"
ip netns exec "$NS" /usr/bin/python3 "$T_DIR/server.py" "$T_DIR/t" 2 &
SERVER=$!
wait_for 5 test -e "$T_DIR/t/ready"
ip netns exec "$NS" /usr/bin/python3 -c '
import socket
for _ in range(8):
    s = socket.create_connection(("127.0.0.1", 8100), timeout=5)
    s.sendall(b"hi"); s.recv(16); s.close()'
wait "$SERVER"
cat "$T_DIR/t"/accepted.* | sort -n >"$T_DIR/t/accepted"
wait_for 10 sh -c "[ \$(grep -c '\"inet_csk_accept\"' '$TV') -ge 8 ]"
stop_agent
jq -r 'select(.process_kprobe.function_name == "inet_csk_accept" and .process_kprobe.args[0].sock_arg.sport == 8100)
	| "\(.process_kprobe.process.pid) \(.process_kprobe.args[0].sock_arg.dport)"' "$TV" | sort -n >"$T_DIR/t/said"
diff "$T_DIR/t/accepted" "$T_DIR/t/said" >/dev/null
ok $? "Tetragon's form: each inet_csk_accept names the worker"
jq -e -s '[.[] | .process_kprobe? | select(.args[0].sock_arg.sport == 8100)] |
	(map(select(.function_name == "inet_csk_accept") | .args[0].sock_arg.cookie) | sort) as $a |
	(map(select(.function_name == "tcp_close" and .args[0].sock_arg.dport != 0) | .args[0].sock_arg.cookie) | sort) as $c |
	($a | length) == 8 and $a == $c and all($a[]; . != null)' "$TV" >/dev/null
ok $? "each accept has its socket's cookie, the one its close has (read in accept()'s program)"
# compact: "accept  PID BINARY 127.0.0.1:8100 -> 127.0.0.1:PORT"
sed -n 's/^accept *\([0-9]*\) .* 127\.0\.0\.1:8100 -> 127\.0\.0\.1:\([0-9]*\)$/\1 \2/p' "$CV" | sort -n >"$T_DIR/t/compact"
diff "$T_DIR/t/accepted" "$T_DIR/t/compact" >/dev/null
ok $? "the compact view: each accept names its worker, none is '0 ?' ($(grep -c '^accept *0 ' "$CV") are)"
done_testing
