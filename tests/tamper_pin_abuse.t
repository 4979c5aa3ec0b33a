#!/usr/bin/env bash
# What a process other than the agent can do to the pin folder's records,
# done by real test processes to this test's own agent and pins:
#   - rename another bpffs object (in a folder of the test's, outside the
#     pin folder) onto one of the folder's pins, which replaces the pin;
#     and swap one in (renameat2 RENAME_EXCHANGE): both pin_rename
#   - flood refused unlinks under the folder as nobody (EACCES, at syscall
#     rate, for a bounded time): at most 64 of them a second are recorded,
#     the rest counted; no health record is lost, and a root rm of a pin
#     during the flood is recorded
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
plan 7
EV="$T_DIR/events.json"
chmod 755 "$T_DIR"
start_agent --no-procfs --poll-ms 20 -o "$EV" || exit 1
status() { "$VIGIL" --pin-dir "$T_PIN" status 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
# record PID WHAT: the tamper record of process PID doing WHAT.
record() {
	local q="select(.vigil_tamper.process.pid == $1 and .vigil_tamper.what == \"$2\") | .vigil_tamper"
	wait_for $((10 * T_SLOW)) sh -c "jq -e -n '[inputs | $q] | length > 0' '$EV' >/dev/null 2>&1"
	jq -c "$q" "$EV" | head -1
}
dummy() { bpftool map create "$1" type array key 4 value 4 entries 1 name vt_dummy; }
SRC="$T_PIN-src"	# the test's own, beside its pin folder (same bpffs)
on_exit rm -rf "$SRC"
mkdir "$SRC" && chmod 700 "$SRC"

# 1. A rename onto a pin, from outside the folder.
dummy "$SRC/vt_evil" && dummy "$T_PIN/vt_target" || exit 1
python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2]); print(os.getpid())' \
	"$SRC/vt_evil" "$T_PIN/vt_target" >"$T_DIR/mv"
P=$(cat "$T_DIR/mv")
T=$(record "$P" pin_rename)
is "$(jq -r '[.pin, .result] | join(" ")' <<<"$T")" "vt_target 0" \
	"rename(2) of another bpffs object onto a pin: pin_rename, the pin's name"

# 2. RENAME_EXCHANGE: the pin swapped for an object outside the folder.
dummy "$SRC/vt_swap" || exit 1
python3 -c '
import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
SYS_renameat2 = {"x86_64": 316, "aarch64": 276}[platform.machine()]
r = libc.syscall(SYS_renameat2, AT_FDCWD, sys.argv[1].encode(), AT_FDCWD, sys.argv[2].encode(),
                 RENAME_EXCHANGE)
print(os.getpid(), r if r == 0 else -ctypes.get_errno())' "$SRC/vt_swap" "$T_PIN/vt_target" >"$T_DIR/swap"
read -r P RET <"$T_DIR/swap"
T=$(record "$P" pin_rename)
is "$(jq -r '[.pin, .result] | join(" ")' <<<"$T")" "vt_target $RET" \
	"renameat2 RENAME_EXCHANGE with a pin: pin_rename, the pin's name"
ok "$([ "$RET" = 0 ]; echo $?)" "and the exchange was done (result $RET)"

# 3. Refused unlinks under the folder, as nobody, for 2 s: any user can.
setpriv --reuid nobody --regid nogroup --clear-groups timeout $((2 * T_SLOW)) python3 -c '
import os, sys
while True:
    try: os.unlink(sys.argv[1])
    except OSError: pass' "$T_PIN/nothing" &
FLOOD=$!
sleep 1
dummy "$T_PIN/vt_real" || exit 1
cp /bin/rm "$T_DIR/vt-rm"
"$T_DIR/vt-rm" "$T_PIN/vt_real" &
P=$!
wait $P
wait $FLOOD
T=$(record "$P" pin_unlink)
is "$(jq -r '[.pin, .result] | join(" ")' <<<"$T")" "vt_real 0" \
	"a root rm of a pin during the flood is recorded"
is "$(status health_records_lost)" 0 "no health record lost to nobody's refused unlinks"
SKIPPED=$(status tamper_refused_not_recorded)
ok "$([ "${SKIPPED:-0}" -gt 0 ]; echo $?)" "refused calls past the budget are counted ($SKIPPED)"
N=$(jq -c 'select(.vigil_tamper.pin == "nothing" and .vigil_tamper.result == -13)' "$EV" | wc -l)
ok "$([ "$N" -gt 0 ] && [ "$N" -le $((64 * (2 * T_SLOW + 2) + 16)) ]; echo $?)" \
	"and at most 64 a second recorded ($N), result EACCES"
