#!/usr/bin/env bash
# A reset rule landing destroys the live local sockets it matches, in the
# namespaces it names and nowhere else: ECONNABORTED on the destroyed side,
# ECONNRESET at its peer. Connections in a second namespace and in the root
# namespace (loopback, the test's own) are left alone. The iterators run only
# in the namespace this test creates and names.
. "$(dirname "$0")/lib.sh"
needs sock-destroy
plan 12

PORT=38001
NS_A=$(new_netns a) || exit 1
NS_B=$(new_netns b) || exit 1

# A loopback connection; waits for $T_DIR/go, then reports what the client's
# send and the server's recv saw.
cat > "$T_DIR/pair.py" <<'PY'
import errno, os, socket, sys, time
port, go = int(sys.argv[1]), sys.argv[2]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(1)
c = socket.create_connection(("127.0.0.1", port)); s, _ = ls.accept()
us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); us.bind(("127.0.0.1", port))
# IPv4 through an IPv6 socket (::ffff:127.0.0.1), and IPv6 itself.
m = socket.socket(socket.AF_INET6); m.connect(("::ffff:127.0.0.1", port)); ms, _ = ls.accept()
ls6 = socket.socket(socket.AF_INET6); ls6.bind(("::1", port)); ls6.listen(1)
c6 = socket.socket(socket.AF_INET6); c6.connect(("::1", port)); s6, _ = ls6.accept()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.connect(("127.0.0.1", port))
print("ready", flush=True)
end = time.time() + 30
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.02)
def err(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
s.settimeout(2); u.settimeout(0.5)
print("client=%s server=%s" % (err(lambda: c.send(b"x")), err(lambda: s.recv(1) or (_ for _ in ()).throw(OSError(0, "eof")))), flush=True)
try:
    u.recv(1); print("udp=data")
except socket.timeout:
    print("udp=alive")
except OSError as e:
    print("udp=%s" % errno.errorcode.get(e.errno, str(e.errno)))
print("mapped=%s v6=%s" % (err(lambda: m.send(b"x")), err(lambda: c6.send(b"x"))), flush=True)
PY
pair() { # pair NAME [NETNS]: starts a connection, waits until it is up
	local out="$T_DIR/$1.out"
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" /usr/bin/python3 "$T_DIR/pair.py" $PORT "$T_DIR/go" >"$out" 2>&1 &
	else
		/usr/bin/python3 "$T_DIR/pair.py" $PORT "$T_DIR/go" >"$out" 2>&1 &
	fi
	on_exit "kill $!"
	wait_for 10 grep -q ready "$out"
}
check "connection up in namespace A" -- pair a "$NS_A"
check "connection up in namespace B" -- pair b "$NS_B"
check "connection up in the root namespace" -- pair root

cat > "$T_DIR/reset.yaml" <<POL
rules:
  - name: reset-a
    action: reset
    direction: egress
    protocol: any
    cidr: [127.0.0.1, "::1"]   # exact: the peer address is read whole
    port: $PORT
    netns: $NS_A
POL
start_agent -o "$T_DIR/events.json" --no-procfs || exit 1
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/reset.yaml")
is "$out" "1 rules in force" "vigil policy load puts the reset rule in force"
touch "$T_DIR/go"
for f in a b root; do wait_for 10 grep -q v6= "$T_DIR/$f.out"; done
is "$(grep client= "$T_DIR/a.out")" "client=ECONNABORTED server=ECONNRESET" \
	"namespace A: the matching socket is destroyed, its peer reset"
is "$(grep udp= "$T_DIR/a.out")" "udp=ECONNABORTED" "namespace A: the connected UDP socket is destroyed"
is "$(grep v6= "$T_DIR/a.out")" "mapped=ECONNABORTED v6=ECONNABORTED" \
	"namespace A: IPv6, and IPv4 through an IPv6 socket, destroyed too"
res_b=$(grep = "$T_DIR/b.out" | tr '\n' ' '); res_root=$(grep = "$T_DIR/root.out" | tr '\n' ' ')
is "$res_b$res_root" "client=ok server=ok udp=alive mapped=ok v6=ok client=ok server=ok udp=alive mapped=ok v6=ok " \
	"namespace B and the root namespace are untouched"
hits=$("$VIGIL" --pin-dir "$T_PIN" policy list | awk '$2 == "reset-a" { print $7 }')
is "$hits" 4 "the destroyed sockets are counted on the rule"
ev='.network_enforce | select(.action == "reset" and .reply == "socket_destroyed" and .protocol == "TCP"
	and .direction == "egress" and .destination_ip == "127.0.0.1" and .destination_port == '$PORT'
	and .source_ip == "127.0.0.1" and .socket_cookie > 0)'
wait_for 5 event_seen "$T_DIR/events.json" "$ev"; ok $? "each destroyed socket is an event"

# The root namespace under another name than /proc/1/ns/net is refused when
# the policy is read, before anything changes (nothing is destroyed there).
sed "s|netns: .*|netns: /proc/$$/ns/net|; s|reset-a|reset-root|" "$T_DIR/reset.yaml" >"$T_DIR/root.yaml"
out=$("$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/root.yaml" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"root.yaml:2: rule 'reset-root': network namespace '/proc/$$/ns/net' is the root namespace"* ]]
ok $? "a rule naming the root namespace by another path is refused"
is "$("$VIGIL" --pin-dir "$T_PIN" policy list | awk 'NR > 1 { print $2 }')" reset-a "the rule in force stays"
done_testing
