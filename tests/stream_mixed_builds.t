#!/usr/bin/env bash
# A fleet with mixed builds, for real (docs/stream.md, "Schema versions"):
# the collector and vigild of an earlier commit, built here from the
# repository's history, against this build's. This agent streams to the
# earlier collector, and the earlier agent to this collector: every event
# arrives once, in order, nothing is called hostile. Then the earlier
# collector as the build before a kind was added would be (its catalogue
# without fork events): this agent's forks are acknowledged, counted and
# skipped with one log line, the rest is written, no number is missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
# The first commit of this schema major (3.0: socket cookies and throttle
# phases; 2.0 was a9eafbd, the first with the catalogue and minor versions).
# A new major moves it to its own first commit: records of another major
# are refused by design, which is not what this test is about.
BASE=0a6c4b2e8161dc071dcabb6389a6294c7bad1b6a
git -C "$TOP" cat-file -e "$BASE^{commit}" 2>/dev/null ||
	skip_all "needs the repository's history back to ${BASE:0:7} (a full clone)"
plan 12
OLD="$T_DIR/old"
# Built against this build's vmlinux.h, not the running kernel's: the earlier
# BPF code names fields as the kernel it was written on did (kernfs_node's
# __parent), which another kernel (6.1 in tests/vm) spells otherwise. CO-RE
# relocates them where the program loads.
mkdir -p "$OLD/build" && git -C "$TOP" archive "$BASE" | tar -x -C "$OLD" &&
	touch "$OLD/build/btf-thisbuild.stamp" && cp "$TOP/$BUILD/vmlinux.h" "$OLD/build/vmlinux.h" &&
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$OLD" -j2 BUILD=build BTF_ID=thisbuild build/vigil-collector build/vigild >"$T_DIR/build.log" 2>&1
ok $? "the collector and vigild of ${BASE:0:7} are built" || { sed 's/^/#   /' "$T_DIR/build.log" | tail -20; exit 1; }
# Its catalogue without the fork kind, and nothing else changed.
cp -a "$OLD" "$T_DIR/nofork" && sed -i '/X(VIGIL_EV_FORK,/d' "$T_DIR/nofork/include/vigil/event_kinds.h" &&
	! grep -q VIGIL_EV_FORK, "$T_DIR/nofork/include/vigil/event_kinds.h" &&
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$T_DIR/nofork" -j2 BUILD=build BTF_ID=thisbuild build/vigil-collector >>"$T_DIR/build.log" 2>&1
ok $? "and that collector without fork events in its catalogue"

# to_collector BINARY NAME TAG: this agent streams markers TAG-1..50 to a
# fresh collector NAME run from BINARY, whose output is $T_DIR/NAME.json.
to_collector() {
	COLLECTOR=$1
	start_collector "$2" "" --listen tcp://127.0.0.1:0 -o "$T_DIR/$2.json" || exit 1
	start_agent --send "tcp://127.0.0.1:$COLL_PORT" --node-name mixed-new --no-procfs \
		--poll-ms 20 || exit 1
	run_markers "$3" 1 50
	wait_for 20 grep -q "\"$3-50\"" "$T_DIR/$2.json"
}

# 1. This agent to the earlier collector.
to_collector "$OLD/build/vigil-collector" c1 "mn$$"
check "this agent to the earlier collector: every event once, in order" -- markers_in_order "mn$$" 50 "$T_DIR/c1.json"
! grep -q "closing" "$T_DIR/c1.err"
ok $? "the earlier collector calls nothing hostile" || sed 's/^/#   /' "$T_DIR/c1.err"
stop_agent
ok $? "this agent stops cleanly"
kill -TERM $COLL_PID; wait $COLL_PID

# 2. The earlier agent to this collector, pinned in a folder of its own.
COLLECTOR="$TOP/$BUILD/vigil-collector"
start_collector c2 "" --listen tcp://127.0.0.1:0 -o "$T_DIR/c2.json" || exit 1
OLD_PIN="$T_PIN-old"
"$OLD/build/vigild" --pin-dir "$OLD_PIN" --send "tcp://127.0.0.1:$COLL_PORT" --node-name mixed-old \
	--no-procfs --poll-ms 20 2>"$T_DIR/old_agent.err" &
OLD_PID=$!
on_exit "kill -TERM $OLD_PID 2>/dev/null; wait $OLD_PID; '$VIGIL' --pin-dir '$OLD_PIN' unpin >/dev/null 2>&1; rmdir '$OLD_PIN' 2>/dev/null"
wait_for 20 sh -c "grep -qs -e attached -e 'cannot load BPF object' '$T_DIR/old_agent.err'"
# The earlier build predates vigil's support of kernels before 6.6 (6.1 in
# tests/vm): there its BPF does not load, and this part cannot run.
if grep -qs 'cannot load BPF object' "$T_DIR/old_agent.err"; then
	for i in 1 2 3 4; do
		skip "the vigild of ${BASE:0:7} does not load on this kernel ($(grep -m1 -o 'cannot load BPF object [a-z_]*' "$T_DIR/old_agent.err"))"
	done
	wait $OLD_PID
else
	grep -qs attached "$T_DIR/old_agent.err"
	ok $? "the earlier vigild starts" || sed 's/^/#   /' "$T_DIR/old_agent.err"
	run_markers "mo$$" 1 50
	wait_for 20 grep -q "\"mo$$-50\"" "$T_DIR/c2.json"
	check "the earlier agent to this collector: every event once, in order" -- markers_in_order "mo$$" 50 "$T_DIR/c2.json"
	! grep -q "closing" "$T_DIR/c2.err" && [ "$(grep -vc '"node_name":"mixed-old"' "$T_DIR/c2.json")" -eq 0 ]
	ok $? "this collector calls nothing hostile, every line names the earlier agent's node"
	kill -TERM $OLD_PID; wait $OLD_PID
	ok $? "the earlier agent stops cleanly"
fi
kill -TERM $COLL_PID; wait $COLL_PID

# 3. This agent to a collector that does not know one of its kinds.
to_collector "$T_DIR/nofork/build/vigil-collector" c3 "mf$$"
check "a collector that lacks the fork kind: every exec once, in order" -- markers_in_order "mf$$" 50 "$T_DIR/c3.json"
stop_agent
kill -TERM $COLL_PID; wait $COLL_PID
[ "$(grep -c 'sends event type 3, a kind this collector' "$T_DIR/c3.err")" -eq 1 ]
ok $? "it names the fork kind once in its log" || sed 's/^/#   /' "$T_DIR/c3.err"
skipped=$(sed -n 's/.* 0 missing in sequence, .* \([0-9]*\) of kinds unknown here skipped.*/\1/p' "$T_DIR/c3.err")
[ "${skipped:-0}" -ge 50 ] && ! grep -q vigil_gap "$T_DIR/c3.json"
ok $? "the forks are counted as skipped (${skipped:-none}), no number is missing"
done_testing
