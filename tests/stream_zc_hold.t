#!/usr/bin/env bash
# Zero-copy sends lend the ring's pages to the kernel: none may go back to
# BPF before the kernel says it is done with them, whatever the spool holds.
# A collector that stops reading (SIGSTOP) while a small ring takes long
# records, then reads again: every record arrives whole, once, in order.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stream_lib.sh"
plan 8
RING=524288	# 512 KiB: a few hundred of these records
N=1500
LONG=$(printf 'x%.0s' {1..900})
gen_long() { local i; for ((i = $2; i <= $3; i++)); do /bin/true "$1-$i" "$LONG"; done; }

# Every marker's record as it was made: its arguments and its cwd.
intact() {
	local tag=$1 n=$2 file=$3 bad
	bad=$(jq -r --arg t "$tag-" --arg l "$LONG" --arg cwd "$PWD" '
		select(.process_exec.process.arguments // "" | startswith($t)) | .process_exec.process |
		select(.arguments != ((.arguments | split(" ")[0]) + " " + $l) or .cwd != $cwd) |
		.arguments[0:40]' "$file" | head -3)
	[ -z "$bad" ] || { diag "torn records: $bad"; return 1; }
	[ "$(jq -r --arg t "$tag-" 'select(.process_exec.process.arguments // "" | startswith($t)) |
		.process_exec.process.arguments | split(" ")[0] | ltrimstr($t)' "$file" | tr '\n' ' ')" = \
	  "$(seq 1 "$n" | tr '\n' ' ')" ]
}

for path in uring zerocopy; do
	OUT="$T_DIR/$path.json"
	TAG="zc$path$$"
	start_collector c "" --listen tcp://127.0.0.1:0 -o "$OUT" || exit 1
	start_agent --ring-size $RING --send "tcp://127.0.0.1:$COLL_PORT" --send-path $path \
		--spool-dir "$T_DIR/spool-$path" --no-procfs --poll-ms 10 || exit 1
	wait_for 10 grep -q 'connected' "$T_DIR/agent.err"
	gen_long "$TAG" 1 50
	wait_for 20 sh -c "grep -q '\"$TAG-50 ' '$OUT'"
	kill -STOP $COLL_PID
	gen_long "$TAG" 51 $N
	sleep 1
	kill -CONT $COLL_PID
	wait_for 60 sh -c "grep -q '\"$TAG-$N ' '$OUT'"
	ok $? "--send-path $path: the last record arrives once the collector reads again"
	check "--send-path $path: every record whole, once, in order" -- intact "$TAG" $N "$OUT"
	check "--send-path $path: no sequence number twice" -- no_dup_seq "$OUT"
	stop_agent
	grep -q 'BPF counted 0 ring-full losses' "$T_DIR/agent.err"
	ok $? "--send-path $path: BPF dropped nothing"
	kill -TERM $COLL_PID; wait $COLL_PID
	mv "$T_DIR/agent.err" "$T_DIR/agent-$path.err"
done
done_testing
