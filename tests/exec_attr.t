#!/usr/bin/env bash
# Exec attribution of binaries that are not at a path (issue 17): a memfd run
# with execveat(AT_EMPTY_PATH) or through /proc/self/fd/N, and a binary
# deleted before it was run, are named as Tetragon names them: "binary" is
# the exec filename, binary_properties.file has the memfd's name or the old
# path marked " (deleted)", its inode and link count; "fileless" flags a
# binary with no link left. A normal binary is reported as before.
. "$(dirname "$0")/lib.sh"
plan 24

PY=/usr/bin/python3
EV="$T_DIR/events.json"

# run_fd MODE NAME SOURCE ARG: a process that copies SOURCE into a memfd NAME
# (or, MODE deleted, into a file NAME in T_DIR that it unlinks) and execs it
# with argument ARG by fd (execveat AT_EMPTY_PATH, as fexecve does) or MODE
# proc (/proc/self/fd/N). It writes "fd inode" to $T_DIR/NAME.info first.
run_fd() {
	$PY - "$T_DIR" "$@" <<'PYEOF' &
import os, sys
tdir, mode, name, src, arg = sys.argv[1:6]
data = open(src, 'rb').read()
if mode == 'deleted':
    path = os.path.join(tdir, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o755)
    os.write(fd, data)
    os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    os.unlink(path)
else:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
with open(os.path.join(tdir, name + '.info'), 'w') as f:
    f.write('%d %d\n' % (fd, os.fstat(fd).st_ino))
os.set_inheritable(fd, True)
if mode == 'proc':
    os.execv('/proc/self/fd/%d' % fd, [name, arg])
os.execve(fd, [name, arg], {})
PYEOF
}

# A memfd process running before the agent starts (found by the iterator).
run_fd fd vt-pre /usr/bin/sleep 30
PRE=$!
disown $PRE	# killed at exit: no job notice
on_exit "kill -9 $PRE"
wait_for 5 test -s "$T_DIR/vt-pre.info"

start_agent -o "$EV" --poll-ms 20 || exit 1

ex() { jq -c --argjson pid "$1" 'select(.process_exec.process.pid == $pid and (.process_exec.process.flags | test("execve"))) | .process_exec.process' "$EV" | tail -1; }
fileless() { jq -e '.flags | split(" ") | index("fileless")' <<<"$1" >/dev/null; }
not_fileless() { ! fileless "$1"; }
seen_exit() { event_seen "$EV" ".process_exit.process.pid == $1"; }

# fileless_exec WHAT MODE NAME BINARY-PREFIX FILE-PATH: runs /usr/bin/true
# through run_fd MODE NAME and checks its exec event, 5 tests.
fileless_exec() {
	local what=$1 mode=$2 name=$3 prefix=$4 path=$5 P FD INO E
	run_fd "$mode" "$name" /usr/bin/true x
	P=$!
	wait $P
	wait_for 5 seen_exit $P
	read -r FD INO <"$T_DIR/$name.info"
	E=$(ex $P)
	is "$(jq -r .binary <<<"$E")" "$prefix$FD" "$what: binary is the exec filename"
	is "$(jq -r .binary_properties.file.path <<<"$E")" "$path (deleted)" "$what: file path $path, marked deleted"
	is "$(jq -r '.binary_properties.file.inode | "\(.number) \(.links)"' <<<"$E")" "$INO 0" \
		"$what: inode number, link count 0"
	check "$what: flag fileless" -- fileless "$E"
	is "$(jq -r .arguments <<<"$E")" x "$what: arguments"
}

# 1. execveat(fd, "", AT_EMPTY_PATH) of a memfd, as fexecve does.
fileless_exec "memfd by execveat" fd vt-memfd /dev/fd/ memfd:vt-memfd
# 2. The same through /proc/self/fd/N.
fileless_exec "memfd by /proc/self/fd" proc vt-proc /proc/self/fd/ memfd:vt-proc
# 3. A binary deleted before exec (run by its fd: no path names it any more).
fileless_exec "deleted binary" deleted vt-gone /dev/fd/ "$T_DIR/vt-gone"

# 4. A deleted name of a file still linked elsewhere: marked, not fileless.
cp /usr/bin/true "$T_DIR/vt-two"
ln "$T_DIR/vt-two" "$T_DIR/vt-link"
$PY -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.unlink(sys.argv[1]); os.set_inheritable(fd, True)
os.execve(fd, ["vt-two"], {})' "$T_DIR/vt-two" &
P=$!
wait $P
wait_for 5 seen_exit $P
E=$(ex $P)
is "$(jq -r .binary_properties.file.path <<<"$E")" "$T_DIR/vt-two (deleted)" "a deleted name with another link: old path, marked deleted"
is "$(jq -r .binary_properties.file.inode.links <<<"$E")" 1 "... its link count is 1"
check "... and it is not fileless" -- not_fileless "$E"

# 5. A normal binary is reported as before: its path, no properties.
/usr/bin/true &
P=$!
wait $P
wait_for 5 seen_exit $P
E=$(ex $P)
is "$(jq -r .binary <<<"$E")" /usr/bin/true "a normal binary: its path"
is "$(jq -c '[.binary_properties, .flags]' <<<"$E")" '[null,"execve"]' "a normal binary: no binary_properties, flags execve"

# 6. The memfd process found at start: no exec filename known, so its name.
E=$(jq -c --argjson pid $PRE 'select(.process_exec.process.pid == $pid) | .process_exec.process' "$EV" | head -1)
is "$(jq -r .binary <<<"$E")" "memfd:vt-pre" "a memfd process found at start: binary is the memfd's name"
is "$(jq -r '.binary_properties.file.path' <<<"$E")" "memfd:vt-pre (deleted)" "... and marked deleted"

# 7. A working directory deeper than the path buffer (4096 bytes): its path
# is cut at the root side and flagged truncCWD; what is kept is the true
# tail. (The walk's position must be unknown to the verifier: on a kernel
# before 6.7 a constant start lost the cut, bpf/lib/loop.bpf.h.)
N=$(printf 'd%.0s' $(seq 200))
(cd "$T_DIR" && for i in $(seq 24); do mkdir "$N$i" && cd "$N$i" || exit 1; done && exec /usr/bin/true) &
P=$!
wait $P
wait_for 5 seen_exit $P
E=$(ex $P)
C=$(jq -r .cwd <<<"$E")
check "a cwd past 4096 bytes: flagged truncCWD" -- jq -e '.flags | split(" ") | index("truncCWD")' <<<"$E"
check "... the tail kept, whole components (${#C} bytes)" -- \
	sh -c "[ ${#C} -gt 3000 ] && [ ${#C} -lt 4096 ] && echo '$C' | grep -Eq '^(/${N}[0-9]+)+\$' && echo '$C' | grep -q '/${N}24\$'"

stop_agent
done_testing
