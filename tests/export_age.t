#!/usr/bin/env bash
# Retention by age for the export file (--export-max-age): a rotated file
# whose last line is SECONDS old is removed; the current file is rotated
# once its first line is half that old; so a line stays between SECONDS and
# 1.5 x SECONDS (plus the one-second check).
. "$(dirname "$0")/lib.sh"
plan 8

EV="$T_DIR/events.json"

# Rotated files found at start: an old one goes, a fresh one stays.
echo '{"old":1}' >"$EV.1"
touch -d '-2 hours' "$EV.1"
echo '{"fresh":1}' >"$EV.2"
# An hour's age: a slow start (a VM under TCG) must not age the fresh one.
start_agent -o "$EV" --export-max-age 3600 --poll-ms 20 || exit 1
[ ! -e "$EV.1" ] && [ -e "$EV.2" ]
ok $? "at start, a rotated file whose last line is older than the age is removed, a fresh one kept"
stop_agent
rm -f "$EV" "$EV".*
start_agent -o "$EV" --export-max-age 6 --poll-ms 20 || exit 1

# A marker line: in the current file, rotated out after 3 s, removed after 6.
/bin/echo "vt-age$$" >/dev/null
T0=$SECONDS
has() { cat "$@" 2>/dev/null | grep -q "\"arguments\":\"vt-age$$\""; }
wait_for 5 has "$EV"
ok $? "the marker is written to the current file"
wait_for 8 has "$EV.1"
ok $? "the current file is rotated once its first line is half the age old ($((SECONDS - T0)) s)"
T1=$((SECONDS - T0))
wait_for 15 sh -c "! cat '$EV' '$EV'.* 2>/dev/null | grep -q '\"arguments\":\"vt-age$$\"'"
ok $? "the marker's file is removed once its last line is the age old"
T2=$((SECONDS - T0))
[ "$T2" -ge 6 ] && [ "$T2" -le 12 ]
ok $? "the marker lived between the age and 1.5 x the age, plus checks (rotated at ${T1} s, gone at ${T2} s)"
stop_agent

"$VIGILD" --pin-dir "$T_PIN" --export-max-age 5 -d 1 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q "export-max-age.*export-file" "$T_DIR/err"
ok $? "--export-max-age without --export-file is refused"
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" --export-max-age 5 --export-file-max-backups 1 -d 1 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q "export-max-age needs --export-file-max-backups 2 or more" "$T_DIR/err"
ok $? "--export-max-age with fewer than 2 rotated files is refused (one would be overwritten early)"
"$VIGILD" --pin-dir "$T_PIN" -o "$EV" --export-max-age 5s -d 1 2>"$T_DIR/err"
[ $? -ne 0 ] && grep -q "invalid value '5s' for --export-max-age" "$T_DIR/err"
ok $? "a bad --export-max-age is refused, naming it"
done_testing
