#!/usr/bin/env bash
# The systemd units, as far as a machine without a running systemd can try
# them (tests/vm/systemd.t starts them with a real one: make
# test-systemd): both pass `systemd-analyze verify`; their exposure
# (`systemd-analyze security`) stays within 6.5 for vigild and 2.0 for the
# collector; vigild
# works with only the capabilities its unit leaves it (policy, namespaces,
# interfaces); both daemons say READY=1 on the notify socket once started
# (Type=notify) and STOPPING=1 when stopping; the shipped config files hold
# only options the daemons know.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || skip_all "no systemd-analyze"
plan 10

# The units as make install writes them, pointing at this build.
P="$T_DIR/prefix"
mkdir -p "$P/sbin" "$P/bin"
ln -s "$TOP/$BUILD/vigild" "$P/sbin/vigild"
ln -s "$TOP/$BUILD/vigil-collector" "$P/bin/vigil-collector"
for u in vigild vigil-collector; do
	sed "s|@PREFIX@|$P|g" "$TOP/dist/$u.service" >"$T_DIR/$u.service"
	systemd-analyze verify --man=no "$T_DIR/$u.service" >"$T_DIR/verify" 2>&1
	ok $? "systemd-analyze verify $u.service" || sed 's/^/#   /' "$T_DIR/verify"
done
exposure() {
	systemd-analyze security --offline=true "$T_DIR/$1.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
a=$(exposure vigild); c=$(exposure vigil-collector)
awk -v a="$a" 'BEGIN { exit !(a != "" && a <= 6.5) }'
ok $? "vigild.service exposure $a (at most 6.5)"
awk -v c="$c" 'BEGIN { exit !(c != "" && c <= 2.0) }'
ok $? "vigil-collector.service exposure $c (at most 2.0)"

# vigild with the unit's capabilities only: a policy with a cgroup rule, a
# reset in a namespace and a rule on an interface there all go in force.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$TOP/dist/vigild.service" |
	tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
CG=$(new_cgroup caps) || exit 1
NS=$(new_netns caps) || exit 1
printf 'rules:
  - {name: d, action: deny, cgroup: %s, port: 9}
  - {name: r, action: reset, netns: %s, port: 10}
  - {name: i, action: reject, interfaces: [lo], netns: %s, port: 11}
' "$CG" "$NS" "$NS" >"$T_DIR/p.yaml"
chmod 600 "$T_DIR/p.yaml"
setpriv --bounding-set=-all,"$caps" --inh-caps=-all "$VIGILD" --pin-dir "$T_PIN" \
	-o "$T_DIR/caps.json" --policy "$T_DIR/p.yaml" -d 2 2>"$T_DIR/caps.err"
rc=$?
[ $rc -eq 0 ] && grep -q '"procFS"' "$T_DIR/caps.json" && grep -q "enforcing on lo in $NS" "$T_DIR/caps.err"
ok $? "vigild runs with only $caps: procFS scan, policy, namespaces, interfaces (exit $rc)" ||
	tail -3 "$T_DIR/caps.err" | sed 's/^/#   /'
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1

# Type=notify: a datagram socket in systemd's place.
cat >"$T_DIR/notify.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode() + "\n")
PY
/usr/bin/python3 "$T_DIR/notify.py" "$T_DIR/notify.sock" "$T_DIR/notified" &
on_exit "kill $!"
wait_for 5 test -S "$T_DIR/notify.sock"
NOTIFY_SOCKET="$T_DIR/notify.sock" "$VIGILD" --pin-dir "$T_PIN" --no-procfs -o /dev/null \
	2>"$T_DIR/agent.err" &
pid=$!
on_exit "kill $pid"
wait_for 20 grep -q READY=1 "$T_DIR/notified"
ok $? "vigild says READY=1 once started"
grep -q 'attached\|resumed' "$T_DIR/agent.err"
ok $? "and only after it attached"
kill -TERM $pid; wait $pid
wait_for 5 grep -q STOPPING=1 "$T_DIR/notified"
ok $? "vigild says STOPPING=1 when it stops"
"$VIGIL" --pin-dir "$T_PIN" unpin >/dev/null 2>&1
: >"$T_DIR/notified"
NOTIFY_SOCKET="$T_DIR/notify.sock" "$TOP/$BUILD/vigil-collector" --listen tcp://127.0.0.1:0 \
	-o "$T_DIR/coll.json" 2>"$T_DIR/coll.err" &
pid=$!
wait_for 10 grep -q READY=1 "$T_DIR/notified" && grep -q listening "$T_DIR/coll.err"
ok $? "vigil-collector says READY=1 once listening"
kill -TERM $pid; wait $pid

# The shipped config files name only options the daemons have.
unknown=$(for f in vigild:vigild.conf vigil-collector:collector.conf; do
	bin=${f%%:*}; conf=${f#*:}
	help=$("$TOP/$BUILD/$bin" --help)
	sed -n 's/^#* *\([a-z][a-z0-9-]*\) *=.*/\1/p' "$TOP/dist/$conf" | while read -r o; do
		grep -q -- "--$o\b" <<<"$help" || echo "$conf:$o"; done; done)
is "$unknown" "" "dist/vigild.conf and dist/collector.conf use known options only"
done_testing
