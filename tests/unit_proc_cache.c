// SPDX-License-Identifier: GPL-2.0
/*
 * Unit checks (TAP) for the process cache's bounds (lib/proc_cache.c): the
 * bytes each entry holds are counted, a byte budget is never passed however
 * long the strings a peer sends, exited processes make room first (oldest
 * first), and a fork whose parent makes room for it still copies the
 * parent's strings (run under ASan to see a use after free).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "proc_cache.h"

static int n, failed;

static void ok(int good, const char *what)
{
	printf("%sok %d - proc cache: %s\n", good ? "" : "not ", ++n, what);
	failed |= !good;
}

/* An exec of pid whose binary path, arguments and cwd take len bytes in all
 * (cwd gets the rest past the two others). */
static struct vigil_exec *exec_of(uint32_t pid, size_t len)
{
	static union {
		struct vigil_exec ev;
		char b[VIGIL_EVENT_MAX_SIZE];
	} u;
	struct vigil_exec *ev = &u.ev;
	size_t bin = len < VIGIL_PATH_MAX ? len : VIGIL_PATH_MAX;
	size_t args = len - bin < VIGIL_ARGS_MAX ? len - bin : VIGIL_ARGS_MAX;

	memset(&u, 0, sizeof(u));
	ev->proc.pid = ev->proc.tid = pid;
	ev->proc.exec_ktime = 1000 + pid;
	ev->binary_len = bin;
	ev->args_len = args;
	ev->cwd_len = len - bin - args;
	memset(ev->data, 'a' + pid % 26, len);
	return ev;
}

static void exit_of(struct vigil_proc_cache *c, uint32_t pid)
{
	vigil_proc_cache_exited(c, pid, 1000 + pid);
}

int main(void)
{
	const size_t big = 2 * VIGIL_PATH_MAX + VIGIL_ARGS_MAX;	/* the longest an exec sends */
	const size_t cost = vigil_proc_entry_bytes(big);
	struct vigil_proc_cache c;
	struct vigil_proc_entry *e;
	struct vigil_fork fk = {};
	size_t cached = 0;

	/* What an entry costs is what it holds. */
	vigil_proc_cache_init(&c, 1024);
	vigil_proc_cache_exec(&c, exec_of(1, 100));
	ok(c.bytes == vigil_proc_entry_bytes(100) && vigil_proc_entry_bytes(100) >= 100 +
	   sizeof(struct vigil_proc_entry), "an entry counts its struct and its strings");
	vigil_proc_cache_exec(&c, exec_of(1, 5000));
	ok(c.bytes == vigil_proc_entry_bytes(5000) && c.count == 1,
	   "a pid exec'd again counts only its new strings");
	ok(cost > big && cost < big + 256, "a long exec costs its length plus a little");
	vigil_proc_cache_free(&c);

	/* A peer sending execs with the longest strings, none of them exiting:
	 * the budget holds, the rest are not cached, and said so. */
	vigil_proc_cache_init(&c, 1024);
	vigil_proc_cache_budget(&c, 100 * cost + cost / 2);
	for (uint32_t pid = 1; pid <= 1000; pid++)
		cached += !!vigil_proc_cache_exec(&c, exec_of(pid, big));
	ok(c.bytes <= 100 * cost + cost / 2, "1000 long execs stay within the byte budget");
	ok(cached == 100 && c.count == 100 && c.misses == 900,
	   "as many are cached as the budget holds, the others counted as misses");
	ok(vigil_proc_cache_find(&c, 1, 0) && !vigil_proc_cache_find(&c, 101, 0),
	   "the live processes cached first stay");

	/* Exited ones make room, oldest first. */
	exit_of(&c, 7);
	exit_of(&c, 3);
	e = vigil_proc_cache_exec(&c, exec_of(2000, big));
	ok(e && !vigil_proc_cache_find(&c, 7, 0) && vigil_proc_cache_find(&c, 3, 0),
	   "a new process takes the room of the oldest exited one");
	e = vigil_proc_cache_exec(&c, exec_of(2001, 10));
	ok(e && vigil_proc_cache_find(&c, 3, 0), "a short one fits where a long one did not");
	ok(c.bytes <= 100 * cost + cost / 2 && c.nexited == 1, "still within the budget");

	/* A fork of the exited parent whose room it takes: the child still
	 * gets the parent's strings, copied before the parent goes. */
	fk.proc.pid = 3000;
	fk.proc.ppid = 3;
	fk.proc.parent_exec_ktime = 1003;
	fk.proc.exec_ktime = 5;
	e = vigil_proc_cache_fork(&c, &fk);
	ok(e && e->binary_len == VIGIL_PATH_MAX && e->binary[0] == 'a' + 3 &&
	   e->binary[e->binary_len - 1] == 'a' + 3 && !vigil_proc_cache_find(&c, 3, 0),
	   "a fork taking its exited parent's room copies the parent's strings");
	ok(c.bytes <= 100 * cost + cost / 2 && c.nexited == 0, "and the budget still holds");
	vigil_proc_cache_free(&c);

	/* When even every exited process gone would not make room, they stay. */
	vigil_proc_cache_init(&c, 1024);
	vigil_proc_cache_budget(&c, 2 * cost + cost / 2);
	vigil_proc_cache_exec(&c, exec_of(1, 10));
	vigil_proc_cache_exec(&c, exec_of(2, big));
	vigil_proc_cache_exec(&c, exec_of(3, big));
	exit_of(&c, 1);
	e = vigil_proc_cache_exec(&c, exec_of(4, big));
	ok(!e && vigil_proc_cache_find(&c, 1, 0) && c.count == 3,
	   "exited ones are kept when freeing them cannot make room");
	vigil_proc_cache_free(&c);

	/* The entry bound makes room the same way. */
	vigil_proc_cache_init(&c, 4);
	for (uint32_t pid = 1; pid <= 4; pid++)
		vigil_proc_cache_exec(&c, exec_of(pid, 10));
	exit_of(&c, 2);
	ok(vigil_proc_cache_exec(&c, exec_of(5, 10)) && !vigil_proc_cache_find(&c, 2, 0) &&
	   c.count == 4, "past max entries, an exited process makes room");
	ok(!vigil_proc_cache_exec(&c, exec_of(6, 10)) && c.count == 4,
	   "past max entries with none exited, a new one is not cached");
	vigil_proc_cache_free(&c);

	/* Without a budget (the agent's own cache), only the entries count. */
	vigil_proc_cache_init(&c, 2000);
	for (uint32_t pid = 1; pid <= 1500; pid++)
		vigil_proc_cache_exec(&c, exec_of(pid, big));
	ok(c.count == 1500 && c.bytes == 1500 * cost, "no budget: every entry cached, counted");
	vigil_proc_cache_free(&c);

	printf("1..%d\n", n);
	return failed;
}
