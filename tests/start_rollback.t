#!/usr/bin/env bash
# A start that fails changes nothing: afterwards the pin folder holds what it
# held before (nothing, for a fresh start) and no program it loaded stays
# attached; a start that fails over the pins of an earlier agent leaves
# that agent's pins and links exactly as they were. Cheap refusals (a
# collector's name that does not resolve, a namespace that is not there)
# come before anything is made; a trailing slash on --pin-dir names the
# same folder.
. "$(dirname "$0")/lib.sh"
plan 13
NS=$(new_netns rb) || exit 1
on_exit "ip netns del $NS"

# The pins and the kernel objects behind them, as the test sees them.
pins() { ls "$T_PIN" 2>/dev/null | tr '\n' ' '; }
ids() {
	local p
	for p in "$T_PIN"/link_* "$T_PIN"/cgroup_* "$T_PIN"/enforce_link_*; do
		[ -e "$p" ] && echo "link $(bpftool link show pinned "$p" -j | jq .id)"
	done
}
# Runs a start that must fail, noting every link id that shows in
# the pin folder meanwhile; then none of them may be left in the kernel.
fail_start() {
	"$VIGILD" --pin-dir "$T_PIN" --no-procfs -d 5 "$@" 2>"$T_DIR/err" &
	local pid=$! rc
	: >"$T_DIR/seen"
	while kill -0 $pid 2>/dev/null; do ids >>"$T_DIR/seen" 2>/dev/null; sleep 0.02; done
	wait $pid; rc=$?
	sort -u -o "$T_DIR/seen" "$T_DIR/seen"
	return $rc
}
none_left() {
	local kind id
	while read -r kind id; do
		[ -n "$id" ] || continue
		if bpftool "$kind" show id "$id" >/dev/null 2>&1; then
			diag "$kind $id is still there: $(bpftool "$kind" show id "$id" | head -1)"
			return 1
		fi
	done <"$T_DIR/seen"
	return 0
}

# 1. Fresh starts.
fail_start --send tcp://no-such-host.invalid:9
rc=$?
[ $rc -eq 1 ] && grep -q 'refused, nothing started' "$T_DIR/err" && [ ! -e "$T_PIN" ]
ok $? "an unresolvable --send host: exit 1 before anything is made ($(tail -1 "$T_DIR/err"))"
fail_start --enforce-on "vt-no-such-ns-$$/lo"
rc=$?
[ $rc -eq 1 ] && grep -q 'not found' "$T_DIR/err" && [ ! -e "$T_PIN" ]
ok $? "a missing namespace: exit 1 before anything is made ($(tail -1 "$T_DIR/err"))"
# Fails only once all is loaded: the interface is looked up in the namespace.
fail_start --enforce-on "$NS/no-such-if"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$T_PIN" ]
ok $? "a start that fails late (no such interface): exit 1, no pin folder left ($(tail -1 "$T_DIR/err"))"
[ -s "$T_DIR/seen" ]
ok $? "(it had made pins: $(wc -l <"$T_DIR/seen") links seen)"
wait_for 5 none_left 2>/dev/null
ok $? "none of the links it made is left in the kernel"

# 2. A trailing slash names the same folder.
start_agent --pin-dir "$T_PIN/" -o "$T_DIR/ev.json" --no-procfs || exit 1
[ -e "$T_PIN/vigil_ring" ] && grep -q "pinned at $T_PIN;" "$T_DIR/agent.err"
ok $? "--pin-dir with a trailing slash is the folder without it"
stop_agent
"$VIGILD" --pin-dir / -d 1 2>"$T_DIR/err"
[ $? -eq 2 ] && grep -q 'pins need a folder of their own' "$T_DIR/err"
ok $? "--pin-dir / is refused with a clear message"

# 3. Over the pins of an earlier agent (stopped: its programs run on).
BEFORE_PINS=$(pins)
BEFORE_IDS=$(ids | sort)
for args in "--send tcp://no-such-host.invalid:9" "--enforce-on vt-no-such-ns-$$/lo" \
	    "--enforce-on $NS/no-such-if --no-io-hooks"; do
	# shellcheck disable=SC2086
	fail_start $args
	rc=$?
	[ $rc -eq 1 ] && [ "$(pins)" = "$BEFORE_PINS" ]
	ok $? "over earlier pins, $args: exit 1, the same pins"
	is "$(ids | sort | tr '\n' ' ')" "$(echo "$BEFORE_IDS" | tr '\n' ' ')" "  and the same links"
done
done_testing
