// SPDX-License-Identifier: GPL-2.0
/*
 * Exec and file rules into maps (vigil/proc_policy.h). Rule i of the policy
 * is slot i; its patterns go into LPM tries, one per string and direction
 * (a postfix is its string reversed), each entry carrying the rules that
 * list it and, folded in, those listing a shorter prefix of it. The tries
 * of a generation are made fresh for each write and put in the outer
 * array; the old generation's are freed when the flip has replaced them
 * and the next write replaces them in turn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/kernel_features.h"
#include "core/loader.h"
#include "core/tamper.h"
#include "log.h"
#include "percpu.h"
#include "enforce/proc_rules.h"
#include "enforce/rule_maps.h"
#include "enforce_proc.skel.h"

#define TRIES (VIGIL_PSTR_NUM * 2)	/* per generation: each string, fwd and rev */

struct pent {
	uint8_t trie;	/* string * 2 + rev */
	uint16_t len;
	char s[VIGIL_PSTR_MAX];
	struct vigil_pstr_set own;	/* the rules naming exactly this */
	struct vigil_pstr_set set;	/* and, folded in, shorter prefixes' */
};

struct vigil_proc_compiled {
	unsigned n;
	struct vigil_prule rules[VIGIL_PRULES_MAX];
	struct vigil_pconf conf;
	uint32_t verbs;		/* every verb some rule is on */
	struct pent *ents;
	unsigned n_ents, cap;
	unsigned per_trie[TRIES];
};

struct vigil_proc_rules {
	char pin_dir[256];
	struct enforce_proc_bpf *skel;
	bool cast;		/* the open hooks' *_cast programs (bpf_rdonly_cast, 6.2+) */
	int state_fd, conf_fd, rules_fd, stats_fd, outs_fd, outer_fd, uring_fd, compat_fd;
	uint32_t written;	/* the generation written, not yet in force */
	uint32_t verbs;		/* the verbs of the rules written */
	struct vigil_tamper_progs *tamper;	/* its open checks: in our hooks while attached */
	struct vigil_prule_stats base[VIGIL_PRULES_MAX];	/* counted in slots left */
};

/* The hook of each verb, cast or not (the other is never loaded). */
static struct bpf_program *verb_prog_of(struct enforce_proc_bpf *s, unsigned verb, bool cast)
{
	switch (verb) {
	case VIGIL_VERB_EXEC: return cast ? s->progs.proc_policy_exec_cast : s->progs.proc_policy_exec;
	case VIGIL_VERB_OPEN: return cast ? s->progs.proc_policy_open_cast : s->progs.proc_policy_open;
	case VIGIL_VERB_OPENAT:
		return cast ? s->progs.proc_policy_openat_cast : s->progs.proc_policy_openat;
	case VIGIL_VERB_OPENAT2:
		return cast ? s->progs.proc_policy_openat2_cast : s->progs.proc_policy_openat2;
	case VIGIL_VERB_CREAT: return cast ? s->progs.proc_policy_creat_cast : s->progs.proc_policy_creat;
	}
	return NULL;
}

static struct bpf_program *verb_prog(const struct vigil_proc_rules *pr, unsigned verb)
{
	return verb_prog_of(pr->skel, verb, pr->cast);
}

static void bit_set(struct vigil_pbits *b, unsigned id)
{
	b->w[id / 64] |= 1ull << (id % 64);
}

/* Which trie and which of its four sets an operator goes to. */
static void op_place(unsigned op, bool *rev, unsigned *slot)
{
	static const uint8_t slots[VIGIL_OP_NUM] = { 0, 1, 2, 3, 2, 3 };

	*rev = op == VIGIL_OP_POSTFIX || op == VIGIL_OP_NOT_POSTFIX;
	*slot = slots[op];
}

static int add_pattern(struct vigil_proc_compiled *c, unsigned str, unsigned op, const char *pat,
		       unsigned id, char *err, size_t errlen)
{
	struct pent e = {}, *at = NULL;
	unsigned slot;
	bool rev;
	size_t len = strlen(pat);

	op_place(op, &rev, &slot);
	e.trie = str * 2 + rev;
	e.len = len;
	for (size_t i = 0; i < len; i++)
		e.s[i] = rev ? pat[len - 1 - i] : pat[i];
	for (unsigned i = 0; i < c->n_ents && !at; i++)
		if (c->ents[i].trie == e.trie && c->ents[i].len == e.len &&
		    !memcmp(c->ents[i].s, e.s, e.len))
			at = &c->ents[i];
	if (!at) {
		if (c->per_trie[e.trie] >= VIGIL_PSTR_ENTRIES) {
			snprintf(err, errlen, "more than %d patterns of one kind", VIGIL_PSTR_ENTRIES);
			return -E2BIG;
		}
		if (c->n_ents == c->cap) {
			unsigned cap = c->cap ? 2 * c->cap : 64;
			struct pent *more = realloc(c->ents, cap * sizeof(*more));

			if (!more)
				return -ENOMEM;
			c->ents = more;
			c->cap = cap;
		}
		at = &c->ents[c->n_ents++];
		*at = e;
		c->per_trie[e.trie]++;
	}
	bit_set(&at->own.op[slot], id);
	return 0;
}

/* Each entry's prefix sets take those of every shorter entry that is a
 * prefix of it: the lookup finds the longest only. */
static void fold_prefixes(struct vigil_proc_compiled *c)
{
	for (unsigned i = 0; i < c->n_ents; i++) {
		struct pent *e = &c->ents[i];

		e->set = e->own;
		e->set.len = e->len;
		for (unsigned j = 0; j < c->n_ents; j++) {
			const struct pent *f = &c->ents[j];

			if (j == i || f->trie != e->trie || f->len >= e->len ||
			    memcmp(f->s, e->s, f->len))
				continue;
			for (int s = 2; s < 4; s++) {
				e->set.op[s].w[0] |= f->own.op[s].w[0];
				e->set.op[s].w[1] |= f->own.op[s].w[1];
			}
		}
	}
}

static int compile_rule(struct vigil_proc_compiled *c, const struct vigil_prule_spec *r,
			unsigned id, char *err, size_t errlen)
{
	struct vigil_prule *b = &c->rules[id];
	int ret;

	snprintf(b->name, sizeof(b->name), "%s", r->name);
	b->action = r->action;
	b->signal = r->signal;
	b->flags = VIGIL_PRULE_ACTIVE | (r->monitor ? VIGIL_PRULE_MONITOR : 0) |
		   (r->has_uid ? VIGIL_PRULE_UID : 0) | (r->has_euid ? VIGIL_PRULE_EUID : 0);
	b->intent = r->intent;
	b->uid_lo = r->uid_lo, b->uid_hi = r->uid_hi;
	b->euid_lo = r->euid_lo, b->euid_hi = r->euid_hi;
	b->ns_mask = r->ns_mask, b->ns_host = r->ns_host;
	if (r->cgroup) {
		struct vigil_cgroup_ref ref;
		char why[256];

		if ((ret = vigil_cgroup_resolve(r->cgroup, &ref, why, sizeof(why)))) {
			snprintf(err, errlen, "%s:%u: rule '%s': %s", r->file, r->line, r->name, why);
			return ret;
		}
		b->flags |= VIGIL_PRULE_CGROUP;
		b->cgroup_id = ref.id;
		b->cgroup_level = ref.level;
	}
	for (unsigned v = 0; v < VIGIL_VERB_MAX; v++)
		if (r->verbs & (1u << v))
			bit_set(&c->conf.verb[v], id);
	c->verbs |= r->verbs;
	for (unsigned s = 0; s < VIGIL_PSTR_NUM; s++)
		for (unsigned op = 0; op < VIGIL_OP_NUM; op++) {
			if (!r->str[s].n[op])
				continue;
			bit_set(&c->conf.need[s][op], id);
			for (unsigned v = 0; v < VIGIL_VERB_MAX; v++)
				if (r->verbs & (1u << v))
					c->conf.strings[v] |= 1u << s;
			for (unsigned i = 0; i < r->str[s].n[op]; i++)
				if ((ret = add_pattern(c, s, op, r->str[s].vals[op][i], id, err, errlen)))
					return ret;
		}
	return 0;
}

int vigil_proc_compile(const struct vigil_policy *p, struct vigil_proc_compiled **out, char *err,
		       size_t errlen)
{
	struct vigil_proc_compiled *c = calloc(1, sizeof(*c));
	int ret = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->n = p->n_prules;
	for (unsigned i = 0; i < p->n_prules && !ret; i++)
		ret = compile_rule(c, &p->prules[i], i, err, errlen);
	if (ret) {
		vigil_proc_compiled_free(c);
		return ret;
	}
	fold_prefixes(c);
	*out = c;
	return 0;
}

void vigil_proc_compiled_free(struct vigil_proc_compiled *c)
{
	if (c)
		free(c->ents);
	free(c);
}

static int read_state(struct vigil_proc_rules *pr, struct vigil_pstate *st)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(pr->state_fd, &zero, st) ? -errno : 0;
}

int vigil_proc_rules_open(struct vigil_proc_rules **out, const char *pin_dir, uint64_t ring_size,
			  struct vigil_tamper_progs *tamper)
{
	struct vigil_proc_rules *pr = calloc(1, sizeof(*pr));
	int err;

	*out = pr;
	if (!pr)
		return -ENOMEM;
	snprintf(pr->pin_dir, sizeof(pr->pin_dir), "%s", pin_dir);
	pr->tamper = tamper;
	if ((err = vigil_skel_open(enforce_proc, &pr->skel, pin_dir, ring_size)))
		return err;
	/* With bpf_rdonly_cast the hooks walk the file's dentries with loads,
	 * not helper calls (docs/policy.md, "What matching costs"). */
	pr->cast = vigil_kernel_has_kfunc("bpf_rdonly_cast");
	for (unsigned v = VIGIL_VERB_EXEC; v <= VIGIL_VERB_CREAT; v++)
		bpf_program__set_autoload(verb_prog_of(pr->skel, v, !pr->cast), false);
	if ((err = vigil_skel_load(pr->skel->skeleton)))
		return err;
	pr->state_fd = bpf_map__fd(pr->skel->maps.vigil_pstate);
	pr->conf_fd = bpf_map__fd(pr->skel->maps.vigil_pconf);
	pr->rules_fd = bpf_map__fd(pr->skel->maps.vigil_prules);
	pr->stats_fd = bpf_map__fd(pr->skel->maps.vigil_prule_stats);
	pr->outs_fd = bpf_map__fd(pr->skel->maps.vigil_pouts);
	pr->outer_fd = bpf_map__fd(pr->skel->maps.vigil_pstr);
	pr->uring_fd = bpf_map__fd(pr->skel->maps.vigil_puring);
	pr->compat_fd = bpf_map__fd(pr->skel->maps.vigil_pcompat);
	return 0;
}

static int make_trie(const struct vigil_proc_compiled *c, unsigned trie)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "vigil_pstr_in", sizeof(struct vigil_pstr_key),
				sizeof(struct vigil_pstr_set), VIGIL_PSTR_ENTRIES, &o);

	if (fd < 0)
		return vlog_err(-errno, "cannot create a pattern trie");
	for (unsigned i = 0; i < c->n_ents; i++) {
		const struct pent *e = &c->ents[i];
		struct vigil_pstr_key k = { .prefixlen = e->len * 8 };

		if (e->trie != trie)
			continue;
		memcpy(k.s, e->s, e->len);
		if (bpf_map_update_elem(fd, &k, &e->set, 0)) {
			int err = vlog_err(-errno, "cannot write a pattern");

			close(fd);
			return err;
		}
	}
	/* Filled: no write through bpf() changes it from here on (a reload
	 * makes fresh tries), so another process's write is refused, EPERM,
	 * and recorded (bpf/tamper.bpf.c). */
	if (bpf_map_freeze(fd)) {
		int err = vlog_err(-errno, "cannot freeze a pattern trie");

		close(fd);
		return err;
	}
	return fd;
}

/* prog attached (to the io_uring tracepoint old_tp names when its own is
 * not in this kernel) and its link pinned as link_<prog>; an attached one
 * stays. */
static int attach_pinned(struct vigil_proc_rules *pr, struct bpf_program *prog, const char *old_tp)
{
	int r = vigil_prog_attach_pinned(prog, pr->pin_dir, "io_uring", old_tp);

	if (r == VIGIL_PINNED_REPLACED)
		vlog_info("policy: hook %s of another build replaced by this build's",
			  bpf_program__name(prog));
	return r < 0 ? r : 0;
}

static bool detach_pinned(struct vigil_proc_rules *pr, struct bpf_program *prog)
{
	return !vigil_prog_unpin(prog, pr->pin_dir);
}

/* The hooks the verbs need attached, links pinned as link_<prog>; with
 * any file verb, the counters of what file rules do not see: io_uring's
 * requests and 32-bit processes. A kernel without io_uring's tracepoints
 * keeps the rules, uncounted. */
static int attach_verbs(struct vigil_proc_rules *pr, uint32_t verbs)
{
	for (unsigned v = 0; v < VIGIL_VERB_MAX; v++) {
		struct bpf_program *prog = verb_prog(pr, v);
		int err;

		if (prog && (verbs & (1u << v)) && (err = attach_pinned(pr, prog, NULL)))
			return err;
	}
	if ((verbs & VIGIL_VERBS_FILE) &&
	    (attach_pinned(pr, pr->skel->progs.proc_uring_create, NULL) ||
	     attach_pinned(pr, pr->skel->progs.proc_uring_submit, "io_uring_submit_sqe")))
		vlog_warn("policy: io_uring's opens will not be counted (no io_uring tracepoints)");
	if ((verbs & VIGIL_VERBS_FILE) && attach_pinned(pr, pr->skel->progs.proc_compat_exec, NULL))
		vlog_warn("policy: 32-bit processes will not be counted");
	return 0;
}

/* The open verbs whose hook can take tamper's open check over: attached
 * by this build. An earlier agent's hook, left pinned, may be of a build
 * whose hook does not check. */
static uint32_t foldable(struct vigil_proc_rules *pr, uint32_t verbs)
{
	uint32_t ok = 0;

	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_CREAT; v++)
		if ((verbs & (1u << v)) && verb_prog(pr, v) &&
		    vigil_pinned_link_runs(verb_prog(pr, v), pr->pin_dir))
			ok |= 1u << v;
	return ok;
}

static void detach_verbs(struct vigil_proc_rules *pr, uint32_t keep)
{
	/* An open hook that checks opens for tampering hands that back
	 * before it goes; one that cannot (tamper's own hook would not
	 * attach) stays. Logged. */
	vigil_tamper_fold_opens(pr->tamper, vigil_tamper_folded(pr->tamper) & keep);
	keep |= vigil_tamper_folded(pr->tamper);
	for (unsigned v = 0; v < VIGIL_VERB_MAX; v++) {
		struct bpf_program *prog = verb_prog(pr, v);

		if (prog && !(keep & (1u << v)) && detach_pinned(pr, prog))
			vlog_info("policy: %s detached: no rule is on it", bpf_program__name(prog));
	}
	if (!(keep & VIGIL_VERBS_FILE)) {
		detach_pinned(pr, pr->skel->progs.proc_uring_create);
		detach_pinned(pr, pr->skel->progs.proc_uring_submit);
		detach_pinned(pr, pr->skel->progs.proc_compat_exec);
	}
}

int vigil_proc_write(struct vigil_proc_rules *pr, const struct vigil_proc_compiled *c)
{
	struct vigil_pstate st;
	int ncpu = libbpf_num_possible_cpus();
	struct vigil_prule_stats *zero_st = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zero_st));
	int err = read_state(pr, &st);
	uint32_t gen;

	if (!zero_st)
		return -ENOMEM;
	gen = !(st.gen & 1);
	for (unsigned t = 0; t < TRIES && !err; t++) {
		uint32_t idx = gen * TRIES + t;
		int fd = make_trie(c, t);

		if (fd < 0) {
			err = fd;
			break;
		}
		if (bpf_map_update_elem(pr->outer_fd, &idx, &fd, 0))
			err = vlog_err(-errno, "cannot put a pattern trie in place");
		close(fd);
	}
	for (uint32_t id = 0; id < VIGIL_PRULES_MAX && !err; id++) {
		uint32_t key = gen * VIGIL_PRULES_MAX + id;
		struct vigil_prule off = {};

		if (bpf_map_update_elem(pr->rules_fd, &key, id < c->n ? &c->rules[id] : &off, 0) ||
		    bpf_map_update_elem(pr->stats_fd, &key, zero_st, 0))
			err = vlog_err(-errno, "cannot write exec and file rule %u", id);
	}
	if (!err && bpf_map_update_elem(pr->conf_fd, &gen, &c->conf, 0))
		err = vlog_err(-errno, "cannot write the exec and file rules' verbs");
	/* This vigild is never signalled: said with its first policy, so a
	 * start that fails before leaves the state as it found it. */
	st.agent_tgid = getpid();
	if (!err && bpf_map_update_elem(pr->state_fd, &(uint32_t){ 0 }, &st, 0))
		err = vlog_err(-errno, "cannot write the exec and file rules' state");
	if (!err)
		err = attach_verbs(pr, c->verbs);
	free(zero_st);
	pr->written = gen;
	pr->verbs = c->verbs;
	return err;
}

static int slot_stats(struct vigil_proc_rules *pr, uint32_t key, struct vigil_prule_stats *sum)
{
	return vigil_percpu_sum(pr->stats_fd, &key, sum, sizeof(*sum));
}

static void stats_add(struct vigil_prule_stats *a, const struct vigil_prule_stats *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t j = 0; j < sizeof(*a) / sizeof(uint64_t); j++)
		x[j] += y[j];
}

static bool strs_same(const struct vigil_pstr_sel *a, const struct vigil_pstr_sel *b)
{
	for (unsigned op = 0; op < VIGIL_OP_NUM; op++) {
		if (a->n[op] != b->n[op])
			return false;
		for (unsigned i = 0; i < a->n[op]; i++)
			if (strcmp(a->vals[op][i], b->vals[op][i]))
				return false;
	}
	return true;
}

/* The same rule: what it matches and does (where it came from aside). */
static bool prule_same(const struct vigil_prule_spec *a, const struct vigil_prule_spec *b)
{
	if (strcmp(a->name, b->name) || a->action != b->action || a->signal != b->signal ||
	    a->monitor != b->monitor || a->verbs != b->verbs || a->intent != b->intent ||
	    a->has_uid != b->has_uid || a->has_euid != b->has_euid || a->uid_lo != b->uid_lo ||
	    a->uid_hi != b->uid_hi || a->euid_lo != b->euid_lo || a->euid_hi != b->euid_hi ||
	    a->ns_mask != b->ns_mask || a->ns_host != b->ns_host ||
	    (!a->cgroup != !b->cgroup) || (a->cgroup && strcmp(a->cgroup, b->cgroup)))
		return false;
	for (unsigned s = 0; s < VIGIL_PSTR_NUM; s++)
		if (!strs_same(&a->str[s], &b->str[s]))
			return false;
	return true;
}

void vigil_proc_flip(struct vigil_proc_rules *pr, const struct vigil_policy *old,
		     const struct vigil_policy *np)
{
	struct vigil_prule_stats base[VIGIL_PRULES_MAX] = {};
	struct vigil_pstate st = {};
	uint32_t zero = 0, from;

	read_state(pr, &st);
	from = st.gen & 1;
	st.gen = pr->written;
	if (bpf_map_update_elem(pr->state_fd, &zero, &st, 0))
		vlog_err(-errno, "cannot put the exec and file rules in force");
	/* Counters of the rules that stay: what their old slots counted. */
	for (unsigned i = 0; i < np->n_prules; i++)
		for (unsigned j = 0; j < old->n_prules; j++) {
			struct vigil_prule_stats was;

			if (!prule_same(&np->prules[i], &old->prules[j]))
				continue;
			if (from != pr->written)
				slot_stats(pr, from * VIGIL_PRULES_MAX + j, &was);
			else
				memset(&was, 0, sizeof(was));
			base[i] = pr->base[j];
			stats_add(&base[i], &was);
			break;
		}
	memcpy(pr->base, base, sizeof(base));
	/* The open hooks in force take tamper's open checks over (one
	 * program an open, not two). Here, not at the write: an apply that
	 * fails after it, at a start, unpins what the start attached, and
	 * the check would go with it. Logged; on error every call stays
	 * checked. */
	vigil_tamper_fold_opens(pr->tamper, foldable(pr, pr->verbs));
	detach_verbs(pr, pr->verbs);
}

int vigil_proc_rule_stats(struct vigil_proc_rules *pr, unsigned pos, struct vigil_prule_stats *sum)
{
	struct vigil_pstate st = {};
	int err = read_state(pr, &st);

	if (pos >= VIGIL_PRULES_MAX)
		return -EINVAL;
	if (!err)
		err = slot_stats(pr, (st.gen & 1) * VIGIL_PRULES_MAX + pos, sum);
	stats_add(sum, &pr->base[pos]);
	return err;
}

int vigil_proc_outcomes(struct vigil_proc_rules *pr, uint64_t *counts)
{
	for (uint32_t o = 0; o < VIGIL_POUT_MAX; o++)
		if (vigil_percpu_sum(pr->outs_fd, &o, &counts[o], sizeof(counts[o])) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

int vigil_proc_uring_each(struct vigil_proc_rules *pr,
			  void (*fn)(void *arg, const struct vigil_uring_key *k,
				     const struct vigil_uring_count *c),
			  void *arg)
{
	struct vigil_uring_key k, next;
	struct vigil_uring_count c;
	void *prev = NULL;

	while (!bpf_map_get_next_key(pr->uring_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(pr->uring_fd, &k, &c))
			fn(arg, &k, &c);
	}
	return errno == ENOENT ? 0 : -errno;
}

int vigil_proc_compat_each(struct vigil_proc_rules *pr,
			   void (*fn)(void *arg, const struct vigil_uring_key *k,
				      const struct vigil_compat_count *c),
			   void *arg)
{
	struct vigil_uring_key k, next;
	struct vigil_compat_count c;
	void *prev = NULL;

	while (!bpf_map_get_next_key(pr->compat_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(pr->compat_fd, &k, &c))
			fn(arg, &k, &c);
	}
	return errno == ENOENT ? 0 : -errno;
}

void vigil_proc_rules_close(struct vigil_proc_rules *pr)
{
	if (!pr)
		return;
	enforce_proc_bpf__destroy(pr->skel);
	free(pr);
}
