#!/usr/bin/env bash
# vigil's units started by a real systemd: `make test-systemd` boots the VM
# (tests/vm/run.sh) with the host's systemd as PID 1 (tests/vm/guest.sh,
# VM_SYSTEMD=1) and runs this file as a service there. The units and config
# files go in as `make install` writes them; then, for real:
#   vigil-collector: start (READY once listening), an agent streams to it
#     over mutual TLS on loopback, stop;
#   vigild: first run outside systemd with the same config, for what a
#     sandbox could take away; then `systemctl start` returns only after
#     READY (pins, programs and the policy in force); the same pins and
#     kernel features as outside; events in the export file; a cgroup deny
#     rule refuses a connect; `systemctl reload` (SIGHUP) re-reads the
#     policy; a reset rule it brings in resets an idle flow in another
#     namespace from its state (setns, AF_PACKET injection); `systemctl
#     stop` leaves the programs and the ring pinned (docs/operations.md).
# Elsewhere it skips: it installs units and uses the default pin folder,
# which only the throwaway VM may.
. "$(dirname "$0")/../lib.sh"
[ "${VM_SYSTEMD:-}" = 1 ] && [ "$(cat /proc/1/comm)" = systemd ] ||
	skip_all "only in the VM with systemd as PID 1 (make test-systemd)"
[ ! -e /sys/fs/bpf/vigil ] || skip_all "an agent is pinned at /sys/fs/bpf/vigil"
. "$(dirname "$0")/../enforce_lib.sh"
. "$(dirname "$0")/../tls_lib.sh"
plan 22

PINS=/sys/fs/bpf/vigil
EXPORT=/var/log/vigil/events.json
FLEET=/var/lib/vigil-collector/fleet.json
CLI=/usr/local/bin/vigil
on_exit "rm -rf $PINS"
on_exit "$CLI unpin"
on_exit "systemctl stop vigild vigil-collector"

# What the journal says about a unit, as TAP comments and into T_DIR.
journal() {
	journalctl -u "$1" --no-pager -o short-monotonic >"$T_DIR/journal-$1.txt" 2>&1
	tail -40 "$T_DIR/journal-$1.txt" | sed 's/^/#   /'
}
# okj RC DESCRIPTION UNIT...: ok, and on failure the units' journal.
okj() {
	local rc=$1 d=$2 u; shift 2
	ok "$rc" "$d"
	[ "$rc" -eq 0 ] && return 0
	for u in "$@"; do journal "$u"; done
	return 1
}

make -s -C "$TOP" BUILD="$BUILD" install PREFIX=/usr/local >"$T_DIR/install.log" 2>&1 &&
	systemctl daemon-reload
okj $? "make install PREFIX=/usr/local; systemctl daemon-reload" || sed 's/^/#   /' "$T_DIR/install.log"

# Certificates: the collector's in its credentials folder, root's only.
ca ca && cert ca collector collector 'IP:127.0.0.1' && cert ca agent vmnode 'DNS:vmnode' &&
	install -m 600 "$P/collector.pem" /etc/vigil/collector-tls/collector.crt &&
	install -m 600 "$P/collector.key" /etc/vigil/collector-tls/collector.key &&
	install -m 600 "$P/ca.pem" /etc/vigil/collector-tls/ca.crt &&
	install -m 600 "$P/agent.pem" /etc/vigil/agent.crt &&
	install -m 600 "$P/agent.key" /etc/vigil/agent.key &&
	install -m 600 "$P/ca.pem" /etc/vigil/ca.crt
ok $? "certificates for the collector (credentials) and the agent"

# --- vigil-collector, with the shipped collector.conf as it is.
systemctl start vigil-collector
rc=$?
[ $rc -eq 0 ] && ss -Htln 'sport = :7400' | grep -q .
okj $? "systemctl start vigil-collector: listening on 7400 when start returns (exit $rc)" vigil-collector ||
	systemctl stop vigil-collector	# no restarts taking the one vCPU

# --- vigild's config: the shipped file, plus a policy, enforcement in a
# router namespace with flow tracking, and a stream to the collector.
enf_router a r b || exit 1
CG=$(new_cgroup deny) || exit 1
policy() { # policy DENY-PORT [RESET-PORT]
	{
		echo rules:
		printf '  - {name: deny-%s, action: deny, protocol: tcp, port: %s, cgroup: /%s}\n' \
			"$1" "$1" "${CG##*/}"
		[ -z "${2:-}" ] || printf '  - {name: reset-%s, action: reset, direction: ingress, protocol: tcp, port: %s}\n' "$2" "$2"
	} >/etc/vigil/vmtest.yaml
	chmod 600 /etc/vigil/vmtest.yaml
}
policy 9
cat >>/etc/vigil/vigild.conf <<CONF
# tests/vm/systemd.t
policy = /etc/vigil/vmtest.yaml
enforce-on = $NS_r/ra
enforce-on = $NS_r/rb
track-flows
node-name = vmnode
send = tls://127.0.0.1:7400
tls-cert = /etc/vigil/agent.crt
tls-key = /etc/vigil/agent.key
tls-ca = /etc/vigil/ca.crt
CONF
diag "vigild.conf:"; grep -v '^#' /etc/vigil/vigild.conf | sed 's/^/#   /'

# --- Outside systemd first: what vigild pins and finds with no sandbox
# (the export file's folder is the unit's LogsDirectory=, made here by hand).
install -d -m 700 /var/log/vigil
/usr/local/sbin/vigild --config /etc/vigil/vigild.conf 2>"$T_DIR/outside.err" &
pid=$!
t0=$SECONDS
wait_for $((30 * T_SLOW)) grep -qs 'attached\|resumed' "$T_DIR/outside.err"
okj $? "vigild outside systemd, same config: attached in $((SECONDS - t0)) s" || sed 's/^/#   /' "$T_DIR/outside.err"
# (Under TCG an agent can miss the CLI's 1 s to answer: asked again.)
agent_status() { $CLI status >"$1" 2>&1; grep -q '^records by kind' "$1"; }
wait_for $((10 * T_SLOW)) agent_status "$T_DIR/outside.status"
ls "$PINS" | sort >"$T_DIR/outside.pins"
kill -TERM $pid
wait $pid
$CLI unpin >/dev/null 2>&1
rm -f "$EXPORT"

# --- vigild under systemd. Under TCG (T_SLOW) the 6.1 verifier takes
# minutes where a machine takes seconds: more than systemd's default 90 s.
if [ "$T_SLOW" -gt 1 ]; then
	mkdir -p /run/systemd/system/vigild.service.d
	printf '[Service]\nTimeoutStartSec=%s\n' $((120 * T_SLOW)) >/run/systemd/system/vigild.service.d/tcg.conf
	systemctl daemon-reload
fi
t0=$SECONDS
systemctl start vigild
rc=$?
# Nothing waited for: Type=notify, so start returns after READY=1.
[ -e "$PINS/vigil_ring" ] && $CLI policy list 2>&1 | grep -q "deny-9 " &&
	[ "$(systemctl is-active vigild)" = active ]
okj $? "systemctl start vigild returns after READY ($((SECONDS - t0)) s): ring pinned, policy in force (exit $rc)" vigild ||
	{ echo "Bail out! vigild.service did not start"; exit 1; }
wait_for $((10 * T_SLOW)) agent_status "$T_DIR/unit.status"
ls "$PINS" | sort >"$T_DIR/unit.pins"
is "$(diff "$T_DIR/outside.pins" "$T_DIR/unit.pins")" "" \
	"the same $(wc -l <"$T_DIR/unit.pins") pins as outside systemd"
is "$(grep '^kernel ' "$T_DIR/unit.status")" "$(grep '^kernel ' "$T_DIR/outside.status")" \
	"vigil status: the same kernel features in force as outside systemd"
/usr/bin/true vmtest-marker-41
wait_for $((10 * T_SLOW)) grep -qs vmtest-marker-41 "$EXPORT"
ok $? "tracepoints attached: an exec is in the export file $EXPORT"

denied() { # denied PORT: what a connect to 127.0.0.1:PORT from the test cgroup says
	bash -c "echo \$\$ >'$CG/cgroup.procs' && exec 3<>/dev/tcp/127.0.0.1/$1" 2>&1
}
grep -q 'Operation not permitted' <<<"$(denied 9)"
ok $? "cgroup deny: a connect to port 9 from the test cgroup gets EPERM"
grep -q 'Connection refused' <<<"$(denied 19)"
ok $? "  and one to port 19 (no rule yet) is refused by the kernel, not vigil"

wait_for $((20 * T_SLOW)) grep -qs '"node":"vmnode"\|vmnode' "$FLEET"
okj $? "the agent streams to the collector over mutual TLS on loopback ($FLEET)" vigil-collector vigild

# --- systemctl reload: a changed policy, with a reset rule for an idle
# flow A -> B through the router namespace R.
state() { cut -d' ' -f1 "$T_DIR/idle/$1/state"; }
reset_seen() { [ "$(state a)" = ECONNRESET ] && [ "$(state b)" = ECONNRESET ]; }
enf_flow "$NS_a" "$NS_b" "$T_DIR/idle" 7101 10.78.2.1 idle
ok $? "an idle flow A -> B:7101 through R, tracked by vigild there"
sleep 1
policy 19 7101
systemctl reload vigild
rc=$?
# ExecReload sends SIGHUP and returns: the reload itself is asynchronous.
now=$($CLI policy list 2>&1)
grep -q "deny-19 " <<<"$now" && diag "the new policy was in force when reload returned" ||
	diag "the new policy was not yet in force when reload returned (SIGHUP is asynchronous)"
wait_for $((10 * T_SLOW)) sh -c "$CLI policy list 2>&1 | grep -q 'deny-19 ' && ! $CLI policy list | grep -q 'deny-9 '"
okj $? "systemctl reload vigild (exit $rc): the changed rule shows in vigil policy list" vigild ||
	$CLI policy list 2>&1 | sed 's/^/#   /'
grep -q 'Operation not permitted' <<<"$(denied 19)"
ok $? "  and is in force: port 19 denied now"
wait_for $((5 * T_SLOW)) reset_seen
ok $? "reset rule: the idle flow's ends both see ECONNRESET (A: $(state a), B: $(state b))"
wait_for $((5 * T_SLOW)) grep -qs '"reply":"rst_injected"' "$EXPORT"
okj $? "  from RSTs injected from the flow state (AF_PACKET, in R by setns)" vigild
grep -q '^ *enforce_rsts_injected *[1-9]' <<<"$($CLI status 2>&1)"
ok $? "  counted in vigil status (enforce_rsts_injected)"

# --- systemctl stop: vigild ends cleanly; programs and ring stay pinned.
systemctl stop vigild
rc=$?
[ $rc -eq 0 ] && [ "$(systemctl show -P Result vigild)" = success ] &&
	[ "$(systemctl show -P ExecMainStatus vigild)" = 0 ]
okj $? "systemctl stop vigild: a clean exit (exit $rc, $(systemctl show -P Result vigild))" vigild
ls "$PINS" | sort | diff "$T_DIR/unit.pins" - | sed 's/^/#   pins after stop: /'
[ -e "$PINS/vigil_ring" ] && ! $CLI status 2>/dev/null | grep -q '^records by kind'
ok $? "  programs and ring stay pinned at $PINS ($(ls "$PINS" | wc -l) pins), the agent answers no more"
grep -q 'Operation not permitted' <<<"$(denied 19)"
ok $? "  and the policy stays in force while it is stopped"

systemctl stop vigil-collector
rc=$?
[ $rc -eq 0 ] && [ "$(systemctl show -P Result vigil-collector)" = success ] &&
	! ss -Htln 'sport = :7400' | grep -q .
okj $? "systemctl stop vigil-collector: a clean exit, no longer listening (exit $rc)" vigil-collector
# Errors the unit's journal has that the run outside had not, over the
# whole run: something the sandbox took away (a syscall, an address family,
# a capability, a path) and vigild only logged.
msgs() { sed -E 's/^([0-9TZ:.-]+ )?vigild: //' | grep -iE 'cannot|not permitted|denied|refused|fail' | sort -u; }
msgs <"$T_DIR/outside.err" >"$T_DIR/outside.msgs"
journalctl -u vigild -o cat --no-pager | msgs >"$T_DIR/unit.msgs"
is "$(comm -13 "$T_DIR/outside.msgs" "$T_DIR/unit.msgs")" "" "no error under systemd that the run outside had not"

[ $_t_fail -eq 0 ] || { diag "journal of vigild:"; journal vigild; diag "journal of vigil-collector:"; journal vigil-collector; }
done_testing
