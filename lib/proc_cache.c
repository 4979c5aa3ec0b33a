// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proc_cache.h"

static size_t slot_of(const struct vigil_proc_cache *c, uint32_t pid)
{
	return (pid * 2654435761u) & (c->nslots - 1);
}

int vigil_proc_cache_init(struct vigil_proc_cache *c, size_t max)
{
	memset(c, 0, sizeof(*c));
	c->nslots = 1024;
	c->max = max;
	c->max_bytes = SIZE_MAX;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	return c->slots ? 0 : -ENOMEM;
}

void vigil_proc_cache_budget(struct vigil_proc_cache *c, size_t max_bytes)
{
	c->max_bytes = max_bytes;
}

/* What malloc takes for n bytes: glibc's chunk, n and its 8-byte header
 * rounded up to 16, at least 32. */
static size_t chunk(size_t n)
{
	n = (n + 8 + 15) & ~(size_t)15;
	return n < 32 ? 32 : n;
}

size_t vigil_proc_entry_bytes(size_t n)
{
	return chunk(sizeof(struct vigil_proc_entry)) + chunk(n + 1);
}

static size_t entry_bytes(const struct vigil_proc_entry *e)
{
	return vigil_proc_entry_bytes((size_t)e->binary_len + e->args_len + e->cwd_len +
				      e->cgroup_len);
}

static void entry_free(struct vigil_proc_cache *c, struct vigil_proc_entry *e)
{
	if (e->exited_slot >= 0) {
		c->exited[e->exited_slot] = NULL;
		c->nexited--;
		c->exited_bytes -= entry_bytes(e);
	}
	c->bytes -= entry_bytes(e);
	free(e->binary);
	free(e);
}

void vigil_proc_cache_free(struct vigil_proc_cache *c)
{
	for (size_t i = 0; i < c->nslots; i++) {
		struct vigil_proc_entry *e = c->slots[i], *n;

		for (; e; e = n) {
			n = e->next;
			entry_free(c, e);
		}
	}
	free(c->slots);
	c->slots = NULL;
}

struct vigil_proc_entry *vigil_proc_cache_get(struct vigil_proc_cache *c, uint32_t pid)
{
	struct vigil_proc_entry *e = c->slots[slot_of(c, pid)];

	while (e && e->proc.pid != pid)
		e = e->next;
	return e;
}

const struct vigil_proc_entry *vigil_proc_cache_in_cgroup(const struct vigil_proc_cache *c,
							 uint64_t cgroup_id)
{
	for (size_t i = 0; i < c->nslots; i++)
		for (const struct vigil_proc_entry *e = c->slots[i]; e; e = e->next)
			if (e->proc.cgroup_id == cgroup_id && e->cgroup_len)
				return e;
	return NULL;
}

struct vigil_proc_entry *vigil_proc_cache_find(struct vigil_proc_cache *c, uint32_t pid,
					      uint64_t exec_ktime)
{
	struct vigil_proc_entry *e = vigil_proc_cache_get(c, pid);

	if (e && exec_ktime && e->proc.exec_ktime != exec_ktime)
		e = NULL;
	if (!e && exec_ktime)
		c->lookups_missed++;
	return e;
}

/* Doubles the table when it is as full as it is wide: chains stay short. */
static void grow(struct vigil_proc_cache *c)
{
	size_t n = c->nslots * 2;
	struct vigil_proc_entry **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return;	/* longer chains, still correct */
	for (size_t i = 0; i < c->nslots; i++) {
		struct vigil_proc_entry *e = c->slots[i], *next;

		for (; e; e = next) {
			size_t s = (e->proc.pid * 2654435761u) & (n - 1);

			next = e->next;
			e->next = slots[s];
			slots[s] = e;
		}
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
}

static void unlink_pid(struct vigil_proc_cache *c, uint32_t pid)
{
	struct vigil_proc_entry **pp = &c->slots[slot_of(c, pid)];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->proc.pid == pid) {
			struct vigil_proc_entry *e = *pp;

			*pp = e->next;
			entry_free(c, e);
			c->count--;
			return;
		}
	}
}

/* Frees the processes that exited, oldest first, until one more entry of
 * cost bytes fits both bounds, or none is left. */
static void make_room(struct vigil_proc_cache *c, size_t cost)
{
	unsigned i = c->exited_next;

	while (c->nexited && (c->count >= c->max || c->bytes + cost > c->max_bytes)) {
		while (!c->exited[i])
			i = (i + 1) % VIGIL_PROC_EXITED_KEEP;
		unlink_pid(c, c->exited[i]->proc.pid);
	}
}

/* Replaces pid's entry with one holding copies of the four strings; the
 * strings may be another entry's (a fork's parent), which making room
 * may free: they are copied first. */
static struct vigil_proc_entry *put(struct vigil_proc_cache *c, const struct vigil_proc *proc,
				    uint32_t flags, const char *bin, size_t bl, const char *args,
				    size_t al, const char *cwd, size_t cl, const char *cg, size_t gl)
{
	size_t cost = vigil_proc_entry_bytes(bl + al + cl + gl), live, slot;
	struct vigil_proc_entry *e;
	char *s;

	unlink_pid(c, proc->pid);
	/* Would it fit with every exited process gone? Else those stay. */
	live = c->bytes - c->exited_bytes;
	if (c->count - c->nexited >= c->max || live > c->max_bytes || cost > c->max_bytes - live)
		goto miss;
	e = calloc(1, sizeof(*e));
	s = malloc(bl + al + cl + gl + 1);
	if (!e || !s) {
		free(e);
		free(s);
		goto miss;
	}
	e->proc = *proc;
	e->flags = flags;
	e->exited_slot = -1;
	e->serial = ++c->serials;
	e->binary = memcpy(s, bin, bl);
	e->args = memcpy(s + bl, args, al);
	e->cwd = memcpy(s + bl + al, cwd, cl);
	e->cgroup = memcpy(s + bl + al + cl, cg, gl);
	e->binary_len = bl;
	e->args_len = al;
	e->cwd_len = cl;
	e->cgroup_len = gl;
	make_room(c, cost);
	if (c->count >= c->nslots)
		grow(c);
	slot = slot_of(c, proc->pid);
	e->next = c->slots[slot];
	c->slots[slot] = e;
	c->count++;
	c->bytes += cost;
	return e;
miss:
	c->misses++;
	return NULL;
}

/* The exec keeps what its fork had (the entry it replaces, when that is
 * this process's and not an exited one's whose pid came back), else takes
 * its parent's. */
static uint32_t init_tree(struct vigil_proc_cache *c, const struct vigil_exec *ev)
{
	struct vigil_proc_entry *e = vigil_proc_cache_get(c, ev->proc.pid);

	if (ev->creds.nspid == 1)
		return VIGIL_PROC_IN_INIT_TREE;
	if (!e || e->exited_slot >= 0)
		e = vigil_proc_cache_find(c, ev->proc.ppid, ev->proc.parent_exec_ktime);
	return e ? e->flags & VIGIL_PROC_IN_INIT_TREE : 0;
}

struct vigil_proc_entry *vigil_proc_cache_exec(struct vigil_proc_cache *c,
					      const struct vigil_exec *ev)
{
	const char *d = ev->data;
	struct vigil_proc_entry *e;

	e = put(c, &ev->proc, ev->flags | init_tree(c, ev), d, ev->binary_len, d + ev->binary_len,
		ev->args_len, d + ev->binary_len + ev->args_len, ev->cwd_len,
		d + ev->binary_len + ev->args_len + ev->cwd_len, ev->cgroup_len);
	if (e)
		e->creds = ev->creds;
	return e;
}

struct vigil_proc_entry *vigil_proc_cache_fork(struct vigil_proc_cache *c,
					      const struct vigil_fork *ev)
{
	struct vigil_proc_entry *p = vigil_proc_cache_find(c, ev->proc.ppid,
							   ev->proc.parent_exec_ktime), *e;
	struct vigil_exec_creds creds;

	if (!p)
		return NULL;	/* counted in lookups_missed */
	/* A child with its parent's pid: no kernel sends it, a hostile stream
	 * may; put() would free p (the pid's entry) before copying from it. */
	if (ev->proc.pid == p->proc.pid)
		return NULL;
	/* put() may free p to make room (an exited parent): what it does not
	 * copy itself is copied first. */
	creds = p->creds;
	e = put(c, &ev->proc, (p->flags & ~(VIGIL_EXEC_PROCFS | VIGIL_EXEC_CLONE)) | VIGIL_PROC_CLONE,
		p->binary, p->binary_len, p->args, p->args_len, p->cwd, p->cwd_len, p->cgroup,
		p->cgroup_len);
	if (e)
		e->creds = creds;
	return e;
}

void vigil_proc_cache_exited(struct vigil_proc_cache *c, uint32_t pid, uint64_t exec_ktime)
{
	struct vigil_proc_entry *e = vigil_proc_cache_find(c, pid, exec_ktime);
	unsigned slot = c->exited_next;

	if (!e || e->exited_slot >= 0)
		return;
	if (c->exited[slot])	/* the oldest exited process goes for good */
		unlink_pid(c, c->exited[slot]->proc.pid);
	c->exited[slot] = e;
	c->nexited++;
	c->exited_bytes += entry_bytes(e);
	e->exited_slot = slot;
	c->exited_next = (slot + 1) % VIGIL_PROC_EXITED_KEEP;
}
