#!/usr/bin/env bash
# 32-bit syscalls and file rules (docs/policy.md, "What these hooks do not
# see"): the syscall tracepoints never fire for ia32 syscalls, so a file
# under a sigkill rule opened by a 32-bit binary, or by int 0x80 from a
# 64-bit one, is read and the rule does not fire; what vigil does instead
# is count each process's execs of 32-bit binaries (`vigil policy list`:
# "32-bit processes, opens not seen by file rules"), so the blind spot
# shows; int 0x80 from a 64-bit binary is neither seen nor counted. Exec rules still see a
# 32-bit binary's exec. The kill rule is scoped by this test's cgroup and
# a file in its folder.
. "$(dirname "$0")/lib.sh"

CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup v2 mount"
CG=$(new_cgroup pcompat) || exit 1
[ "$(uname -m)" = x86_64 ] || skip_all "ia32 syscalls are x86_64's"
mkdir -p "$T_DIR/bin" "$T_DIR/files"
# open(path), read, write to stdout, exit: with int 0x80 (ia32 numbers:
# open 5, read 3, write 4, exit 1). No libc, so no 32-bit libc needed.
cat >"$T_DIR/o32.c" <<'C'
static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a), "c"(b), "d"(c) : "memory");
	return r;
}
static char buf[64];
void _start(void)
{
	long fd = sys3(5, (long)PATH, 0, 0), n = fd < 0 ? 0 : sys3(3, fd, (long)buf, sizeof(buf));

	sys3(4, 1, (long)buf, n > 0 ? n : 0);
	sys3(1, fd < 0, 0, 0);
	for (;;)
		;
}
C
SECRET="$T_DIR/files/secret"
# A 32-bit binary, and a 64-bit one making the same ia32 syscalls (its
# addresses are below 4 GiB: static, not position-independent).
cc -m32 -O2 -nostdlib -static -fno-stack-protector -fno-pic -no-pie -DPATH="\"$SECRET\"" \
	-o "$T_DIR/bin/o32" "$T_DIR/o32.c" 2>"$T_DIR/cc.err" ||
	skip_all "cc -m32 cannot build a static binary here: $(head -1 "$T_DIR/cc.err")"
cc -O2 -nostdlib -static -fno-stack-protector -fno-pic -no-pie -DPATH="\"$SECRET\"" \
	-o "$T_DIR/bin/int80" "$T_DIR/o32.c" || exit 1
plan 10
echo secret >"$SECRET"

cat >"$T_DIR/policy.yaml" <<POL
rules:
  - name: c-open-kill
    on: [open, openat, openat2, creat]
    path: { equal: ["$SECRET"] }
    cgroup: $CG
    action: sigkill
  - { name: c-exec, on: exec, binary: { in: ["$T_DIR/bin/o32"] }, action: post }
POL
chmod 644 "$T_DIR/policy.yaml"
in_cg() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@" 2>/dev/null; }
out() { local o rc; o=$(in_cg "$@"); rc=$?; echo "$rc:$o"; }

is "$(od -An -t u1 -j4 -N1 "$T_DIR/bin/o32" | tr -d " ")" 1 "the test binary is 32-bit (ELFCLASS32)"
is "$(out "$T_DIR/bin/o32")" "0:secret" "without the agent, the 32-bit binary reads the file"

start_agent -o "$T_DIR/events.json" --export-file-max-size-mb 0 --policy "$T_DIR/policy.yaml" || exit 1
is "$(out cat "$SECRET")" "137:" "a 64-bit open of the file: SIGKILL (the rule works)"
is "$(out "$T_DIR/bin/o32")" "0:secret" "a 32-bit binary's open is not seen: it reads the file (the documented blind spot)"
is "$(out "$T_DIR/bin/int80")" "0:secret" "int 0x80 from a 64-bit binary: not seen either"

"$VIGIL" --pin-dir "$T_PIN" policy list --json >"$T_DIR/list.json" 2>&1
"$VIGIL" --pin-dir "$T_PIN" policy list >"$T_DIR/list.txt" 2>&1
jq -e -s '[.[] | select(.kind == "ia32" and .comm == "o32" and .execs == 1)] | length == 1' "$T_DIR/list.json" >/dev/null
ok $? "policy list counts the 32-bit binary's exec"
jq -e -s '[.[] | select(.kind == "ia32" and .comm == "int80")] | length == 0' "$T_DIR/list.json" >/dev/null
ok $? "int 0x80 from a 64-bit binary is not counted (as documented)"
grep -q '^32-bit processes, opens not seen by file rules:' "$T_DIR/list.txt"
ok $? "the text list names them as not seen by file rules"
jq -e -s '.[] | select(.name == "c-exec") | .hits == 1' "$T_DIR/list.json" >/dev/null
ok $? "an exec rule matches the 32-bit binary's exec (hits 1)"
wait_for $((10 * T_SLOW)) event_seen "$T_DIR/events.json" '.process_tracepoint.policy_name == "c-exec"'
ok $? "and posts its event"
stop_agent
done_testing
