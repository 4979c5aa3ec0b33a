#!/usr/bin/env bash
# Hostile strings in arguments and paths reach the JSON export intact where
# they are valid and safely replaced where not: every line still parses.
. "$(dirname "$0")/lib.sh"
plan 4

EV="$T_DIR/events.json"
WD=$T_DIR/$'dir "q" \\ \x01 \xff end'
mkdir -p "$WD"
start_agent -o "$EV" --poll-ms 20 --no-procfs || exit 1

(cd "$WD" && exec /bin/true 'a"b' 'c\d' $'\x01\x1b\t\n' $'\xff\xfe' 'é€😀' '') &
P=$!
wait $P
wait_for 5 event_seen "$EV" ".process_exit.process.pid == $P"
stop_agent

jq -e . "$EV" >/dev/null
ok $? "every line parses with jq"
LINE=$(jq -c --argjson pid $P 'select(.process_exec.process.pid == $pid)' "$EV")
/usr/bin/python3 - "$LINE" "$WD" <<'PY'
import json, sys
ev = json.loads(sys.argv[1])["process_exec"]["process"]
want_args = '"a\\"b" c\\d \x01\x1b\t\n \ufffd\ufffd é€😀 ""'
wd = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
ok = [ev["arguments"] == want_args, ev["cwd"] == wd, ev["binary"] == "/usr/bin/true"]
for i, (o, what) in enumerate(zip(ok, ["arguments", "cwd", "binary"])):
    if not o:
        print("# %s: got %r" % (what, ev.get(what)), file=sys.stderr)
sys.exit(0 if all(ok) else 1)
PY
ok $? "quotes, backslashes, control bytes and UTF-8 round-trip; invalid bytes become U+FFFD"
grep -q $'\x01' "$EV"
ok $((!$?)) "no raw control byte in the export"
iconv -f UTF-8 -t UTF-8 "$EV" >/dev/null
ok $? "the export is valid UTF-8"
done_testing
