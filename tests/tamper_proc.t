#!/usr/bin/env bash
# Tamper records from BPF for what a process does to the agent's process,
# its pins and its maps, each done by a real test process to this test's
# own agent (nothing else is traced, read or written): the record names
# the process and what it did, with the call's result.
#   - ptrace: PTRACE_SEIZE of one of the agent's threads (not stopped; the
#     tracer exits, which detaches), PTRACE_ATTACH as nobody (refused:
#     EPERM, so the agent is never stopped)
#   - process_vm_readv of its stack, process_vm_writev to an address never
#     mapped (EFAULT: nothing written), pidfd_getfd of its fd 0
#   - opens of /proc/PID/mem, maps (by the thread's folder), environ
#   - unlinks and renames under the test's pin folder: a dummy pin, by an
#     absolute path with "//", by a path relative to the folder, by mv
#   - bpftool updating and deleting in one of vigil's maps; swapping an
#     inner map into the map of maps (itself, so the rules stay)
#   - the pattern tries are frozen: an update is refused, EPERM, and
#     recorded; a policy reload (fresh tries, frozen, swapped in) works
#   - neither the agent's own calls nor a restarted agent's are recorded
#   - while a file rule hooks openat, its hook checks the opens (tamper's
#     own is unpinned); without one, tamper's own is back; each open of
#     the agent's /proc files is recorded once either way, also across a
#     restart; creat(2) of /proc/PID/mem is recorded too; a hook of
#     another build left pinned under the rule hook's name is not trusted
#     with the check
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
plan 40
EV="$T_DIR/events.json"
PEER="$T_DIR/tamper_peer.py"
chmod 755 "$T_DIR"
install -m 755 "$TOP/tests/tamper_peer.py" "$PEER"
mkdir -p "$T_DIR/watched" "$T_DIR/watched2"
echo a >"$T_DIR/watched/f"
echo b >"$T_DIR/watched2/f"
policy() {
	cat >"$T_DIR/$1.yaml" <<POL
rules:
  - name: t-$1
    on: [openat]
    path: { prefix: ["$T_DIR/$1/"] }
    action: post
POL
}
policy watched
policy watched2
start_agent --no-procfs --poll-ms 20 -o "$EV" --policy "$T_DIR/watched.yaml" || exit 1

# record PID WHAT: the tamper record of process PID doing WHAT, once the
# agent wrote it out.
record() {
	local q="select(.vigil_tamper.process.pid == $1 and .vigil_tamper.what == \"$2\") | .vigil_tamper"
	wait_for 10 sh -c "jq -e -n '[inputs | $q] | length > 0' '$EV' >/dev/null 2>&1"
	jq -c "$q" "$EV" | head -1
}
# peer VERB TARGET [as nobody]: sets PID and RET
peer() {
	local out
	if [ "${3:-}" = nobody ]; then
		out=$(setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3 "$PEER" "$1" "$2")
	else
		out=$(python3 "$PEER" "$1" "$2")
	fi
	read -r PID RET <<<"$out"
}

TID=$(ls "/proc/$AGENT_PID/task" | grep -vx "$AGENT_PID" | head -1)
peer seize "${TID:-$AGENT_PID}"
T=$(record "$PID" ptrace_seize)
is "$(jq -r '[.target_pid, .result, .agent_pid] | join(" ")' <<<"$T")" "${TID:-$AGENT_PID} 0 $AGENT_PID" \
	"ptrace_seize of an agent thread: the tid given, result 0, the agent"
is "$(jq -r .comm <<<"$T")" python3 "it names the process (comm)"
peer attach "$AGENT_PID" nobody
is "$RET" -1 "PTRACE_ATTACH as nobody is refused (EPERM)"
T=$(record "$PID" ptrace_attach)
is "$(jq -r '[.target_pid, .result, .process.uid] | join(" ")' <<<"$T")" "$AGENT_PID -1 65534" \
	"ptrace_attach: recorded with the refusal and the uid"
peer vm_readv "$AGENT_PID"
T=$(record "$PID" process_vm_readv)
is "$(jq -r '[.target_pid, .result] | join(" ")' <<<"$T")" "$AGENT_PID 8" "process_vm_readv: 8 bytes read"
peer vm_writev "$AGENT_PID"
T=$(record "$PID" process_vm_writev)
is "$(jq -r '[.target_pid, .result] | join(" ")' <<<"$T")" "$AGENT_PID -14" \
	"process_vm_writev: recorded with its EFAULT"
peer pidfd_getfd "$AGENT_PID"
T=$(record "$PID" pidfd_getfd)
is "$(jq -r '[.target_fd, .result] | join(" ")' <<<"$T")" "0 $RET" "pidfd_getfd: the fd taken, the new fd"

cp /bin/cat "$T_DIR/vt-reader"
for f in mem task/$AGENT_PID/maps environ; do
	"$T_DIR/vt-reader" "/proc/$AGENT_PID/$f" >/dev/null 2>&1 &
	P=$!
	wait $P
	w=proc_$(basename $f)
	T=$(record "$P" "$w")
	is "$(jq -r '[.process.binary, .open_flags, (.result >= 0)] | join(" ")' <<<"$T")" \
		"$T_DIR/vt-reader 32768 true" "open of /proc/PID/$f: $w, by its binary, O_RDONLY|O_LARGEFILE"
done

# count PID WHAT FILE: how many records of PID doing WHAT are in FILE.
count() { jq -n --argjson p "$1" --arg w "$2" '[inputs | select(.vigil_tamper.process.pid == $p and .vigil_tamper.what == $w)] | length' "$3"; }
# proc_open FILE: the test's reader opens the agent's /proc/PID/FILE; P its pid.
proc_open() { "$T_DIR/vt-reader" "/proc/$AGENT_PID/$1" >/dev/null 2>&1 & P=$!; wait $P; }
# The rule on openat checked those opens in its own hook: tamper's is gone.
folded() { [ ! -e "$T_PIN/link_tamper_openat" ] && ls "$T_PIN"/link_proc_policy_openat* >/dev/null 2>&1; }
folded
ok $? "with a file rule on openat its hook checks the opens: link_tamper_openat is unpinned"
is "$(jq -n --arg b "$T_DIR/vt-reader" '[inputs | select(.vigil_tamper.process.binary == $b)] | length' "$EV")" 3 \
	"each of the three opens recorded once"

# Dummy pins in the test's own pin folder.
dummy() { bpftool map create "$T_PIN/$1" type array key 4 value 4 entries 1 name vt_dummy; }
cp /bin/rm "$T_DIR/vt-rm"
cp /bin/mv "$T_DIR/vt-mv"
dummy vt_dummy1 && dummy vt_dummy2 && dummy vt_dummy3
"$T_DIR/vt-rm" "$T_PIN//vt_dummy1" &
P=$!
wait $P
T=$(record "$P" pin_unlink)
is "$(jq -r '[.pin, .result, .process.binary] | join(" ")' <<<"$T")" "vt_dummy1 0 $T_DIR/vt-rm" \
	"rm of a pin by an absolute path (with //): pin_unlink, the name, the binary"
(cd "$T_PIN" && exec "$T_DIR/vt-rm" ./vt_dummy2) &
P=$!
wait $P
T=$(record "$P" pin_unlink)
is "$(jq -r '[.pin, .result] | join(" ")' <<<"$T")" "vt_dummy2 0" "rm by a path relative to the folder"
"$T_DIR/vt-mv" "$T_PIN/vt_dummy3" "$T_PIN/vt_dummy4" &
P=$!
wait $P
T=$(record "$P" pin_rename)
is "$(jq -r '[.pin, .result] | join(" ")' <<<"$T")" "vt_dummy3 0" "mv of a pin: pin_rename"
rm -f "$T_PIN/vt_dummy4"
rm -f "$T_DIR/nothing"
ok "$(jq -e -n '[inputs | select(.vigil_tamper.pin == "nothing")] | length == 0' "$EV" >/dev/null; echo $?)" \
	"an rm elsewhere is not recorded"

# bpftool on vigil's maps: the list of vigil's map ids itself (a key no
# map has), and the map of maps.
cp "$(command -v bpftool)" "$T_DIR/vt-bpftool"
TM=$(bpftool map show pinned "$T_PIN/vigil_tamper_maps" -j | jq .id)
"$T_DIR/vt-bpftool" map update pinned "$T_PIN/vigil_tamper_maps" key 0xfe 0xff 0xff 0xff value 1 0 0 0 &
P=$!
wait $P
T=$(record "$P" map_update)
is "$(jq -r '[.map_id, .result, .process.binary] | join(" ")' <<<"$T")" "$TM 0 $T_DIR/vt-bpftool" \
	"bpftool map update on a vigil map: map_update, its id, the binary"
"$T_DIR/vt-bpftool" map delete pinned "$T_PIN/vigil_tamper_maps" key 0xfd 0xff 0xff 0xff 2>/dev/null &
P=$!
wait $P
T=$(record "$P" map_delete)
is "$(jq -r '[.map_id, .result] | join(" ")' <<<"$T")" "$TM -2" "map delete: map_delete with ENOENT"

# The pattern tries in force: frozen, an update refused and recorded.
OUTER=$(bpftool map show pinned "$T_PIN/vigil_pstr" -j | jq .id)
inner_of() { # the tries in vigil_pstr now: "slot id" lines
	local k b
	for k in $(seq 0 11); do
		b=($(bpftool map lookup pinned "$T_PIN/vigil_pstr" key $k 0 0 0 -j 2>/dev/null |
			jq -r '.value // empty | .[]'))
		[ ${#b[@]} -eq 4 ] && echo "$k $((b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24))"
	done
}
read -r SLOT INNER < <(inner_of | head -1)
[ -n "${INNER:-}" ]
ok $? "the policy's pattern tries are in vigil_pstr (slot ${SLOT:-none}, map ${INNER:-none})"
is "$(bpftool map show id "$INNER" -j | jq -r .frozen)" 1 "the pattern trie is frozen"
KEYB=$(bpftool map show id "$INNER" -j | jq .bytes_key)
VALB=$(bpftool map show id "$INNER" -j | jq .bytes_value)
"$T_DIR/vt-bpftool" map update id "$INNER" key $(printf '0 %.0s' $(seq "$KEYB")) \
	value $(printf '0 %.0s' $(seq "$VALB")) >"$T_DIR/frozen.out" 2>&1 &
P=$!
wait $P
ok $(($? == 0)) "an update of the frozen trie fails"
grep -q "Operation not permitted" "$T_DIR/frozen.out"
ok $? "refused with EPERM"
T=$(record "$P" map_update)
is "$(jq -r '[.map_id, .result] | join(" ")' <<<"$T")" "$INNER -1" "and recorded: map_update, the trie's id, -EPERM"
"$T_DIR/vt-bpftool" map update pinned "$T_PIN/vigil_pstr" key "$SLOT" 0 0 0 value id "$INNER" &
P=$!
wait $P
T=$(record "$P" map_swap)
is "$(jq -r '[.map_id, .result] | join(" ")' <<<"$T")" "$OUTER 0" "a swap into the map of maps: map_swap"

# A reload still works: fresh tries, frozen, swapped in.
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/watched2.yaml" >"$T_DIR/load.out" 2>&1
ok $? "a policy load of new file rules works with frozen tries"
cat "$T_DIR/watched2/f" >/dev/null
wait_for 10 sh -c "jq -e -n '[inputs | select(.process_tracepoint.policy_name == \"t-watched2\")] | length > 0' '$EV' >/dev/null 2>&1"
ok $? "the new rule matches (its tries are in force)"
read -r _ INNER2 < <(inner_of | grep -v " $INNER\$" | head -1)
is "$(bpftool map show id "${INNER2:-0}" -j 2>/dev/null | jq -r .frozen)" 1 "the new tries are frozen too"
n=$(jq -n --argjson a "$AGENT_PID" '[inputs | select(.vigil_tamper and .vigil_tamper.process.pid == $a)] | length' "$EV")
is "$n" 0 "the agent's own writes, unlinks and reads are not recorded"
# No file rule on openat any more: tamper's own hook takes the check back,
# attached before the rule's goes.
printf 'rules:\n  - name: t-exec\n    on: exec\n    binary: { prefix: ["%s/none/"] }\n    action: post\n' \
	"$T_DIR" >"$T_DIR/exec.yaml"
"$VIGIL" --pin-dir "$T_PIN" policy load "$T_DIR/exec.yaml" >"$T_DIR/load2.out" 2>&1
ok $? "a policy with no file rule loads"
[ -e "$T_PIN/link_tamper_openat" ] && ! ls "$T_PIN"/link_proc_policy_openat* >/dev/null 2>&1
ok $? "tamper's own openat hook is pinned again, the rule's is gone"
proc_open environ
record "$P" proc_environ >/dev/null
is "$(count "$P" proc_environ "$EV")" 1 "an open of /proc/PID/environ then: recorded once"
# A restart: the new agent claims the folder first, so its own start
# (map writes, pins) is not recorded as tampering either.
stop_agent
start_agent --no-procfs --poll-ms 20 -o "$EV.2" --policy "$T_DIR/watched.yaml" || exit 1
sleep 1
n=$(jq -n --argjson a "$AGENT_PID" '[inputs | select(.vigil_tamper and .vigil_tamper.process.pid == $a)] | length' "$EV.2")
is "$n" 0 "a restarted agent's own start is not recorded"
folded
ok $? "the restarted agent's file rule takes the open check over again"
# And once more, restarted while the check is in the rule's hook: tamper's
# own is attached at the start (and skips) until the policy moves it.
stop_agent
start_agent --no-procfs --poll-ms 20 -o "$EV.3" --policy "$T_DIR/watched.yaml" || exit 1
folded
ok $? "a restart while the rule's hook checks: it checks again, tamper's own is unpinned"
proc_open maps
EV=$EV.3 record "$P" proc_maps >/dev/null
is "$(count "$P" proc_maps "$EV.3")" 1 "an open of the new agent's /proc/PID/maps: recorded once"

# creat(2) opens an existing file for writing: of /proc/PID/mem too.
python3 -c 'import ctypes, sys; print(ctypes.CDLL(None, use_errno=True).syscall(85, sys.argv[1].encode(), 0o600))' \
	"/proc/$AGENT_PID/mem" >"$T_DIR/creat.out" 2>&1 &
P=$!
wait $P
T=$(EV=$EV.3 record "$P" proc_mem)
is "$(jq -r '[.open_flags, .result] | join(" ")' <<<"$T")" "$((0x8001)) $(cat "$T_DIR/creat.out")" \
	"creat of /proc/PID/mem: proc_mem, O_WRONLY|O_LARGEFILE, the fd"

# An earlier agent's hook of another build, left pinned under the rule
# hook's name (here one that checks nothing): the next agent replaces it
# with this build's, and only then moves the check into it.
stop_agent
H=$(ls "$T_PIN"/link_proc_policy_openat* | head -1)
rm -f "$H"
"$TOP/$BUILD/tests/pin_hook" "$TOP/$BUILD/tests/foreign_open.bpf.o" test_foreign_openat "$H"
ok $? "another build's openat hook pinned as $(basename "$H")"
start_agent --no-procfs --poll-ms 20 -o "$EV.4" --policy "$T_DIR/watched.yaml" || exit 1
name=$(bpftool prog show id "$(bpftool link show pinned "$H" -j | jq -r .prog_id)" -j | jq -r .name)
[ "${name#proc_policy_op}" != "$name" ]
ok $? "the next agent put this build's hook in its place ($name)"
folded
ok $? "which checks the opens: link_tamper_openat is unpinned"
proc_open maps
EV=$EV.4 record "$P" proc_maps >/dev/null
is "$(count "$P" proc_maps "$EV.4")" 1 "an open of /proc/PID/maps then: recorded once"
done_testing
