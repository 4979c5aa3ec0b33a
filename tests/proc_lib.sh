# shellcheck shell=bash
# Exec and file rule test helpers, sourced after lib.sh: the test binaries
# those rules are tried on, static and without libc, so that nothing runs
# before their _start (a kill at exec leaves them no byte to write).

# proc_static_cc OUT: compiles the _start read on stdin, with
# sys3(number, a, b, c) for x86-64 syscalls, into the static binary OUT.
proc_static_cc() {
	local src
	src=$(mktemp "$T_DIR/static.XXXX.c") || return 1
	{
		cat <<'C'
static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}
C
		cat
	} >"$src"
	cc -O2 -nostdlib -static -fno-stack-protector -o "$1" "$src"
}

# proc_writer OUT: a binary that writes "x" to stdout and exits 0.
proc_writer() {
	proc_static_cc "$1" <<'C'
void _start(void)
{
	sys3(1, 1, (long)"x", 1);
	sys3(60, 0, 0, 0);
	for (;;)
		;
}
C
}
