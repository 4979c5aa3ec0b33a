#!/usr/bin/env bash
# The export file rotates by size: PATH, PATH.1 .. PATH.N, whole lines only.
. "$(dirname "$0")/lib.sh"
plan 5

EV="$T_DIR/events.json"
start_agent -o "$EV" --export-file-max-size-mb 1 --export-file-max-backups 2 --poll-ms 20 || exit 1
for _ in $(seq 2500); do /bin/true; done    # bounded: ~7500 events, several MiB of JSON
sleep 0.5
stop_agent

[ -s "$EV" ] && [ -s "$EV.1" ] && [ -s "$EV.2" ]
ok $? "rotated files $(basename "$EV").1 and .2 exist beside the current one"
[ ! -e "$EV.3" ]
ok $? "no more backups than asked for"
big=0
for f in "$EV" "$EV.1" "$EV.2"; do
	[ "$(stat -c %s "$f")" -le $((2 * 1024 * 1024)) ] || big=1
done
ok $big "each file stays within the size (plus one batch)"
bad=0
for f in "$EV" "$EV.1" "$EV.2"; do jq -e . "$f" >/dev/null 2>&1 || bad=1; done
ok $bad "every file holds whole JSON lines"
a=$(tail -1 "$EV.1" | jq .seq); b=$(head -1 "$EV" | jq .seq)
[ "$a" -lt "$b" ]
ok $? "the current file continues where .1 ended (seq $a then $b)"
done_testing
