// SPDX-License-Identifier: GPL-2.0
/*
 * Rules into maps (docs/enforce-maps.md): vigil_rules by rule id, the LPM
 * tries vigil_pol4/vigil_pol6 from (direction, CIDR) to the set of rules
 * covering it, with every shorter covering prefix's rules folded in (an LPM
 * lookup returns the longest prefix only), and vigil_rule_cgroup for rules
 * scoped to a cgroup.
 *
 * A reload is compiled, and every cgroup and namespace it names resolved, in
 * user space first; only then do maps change. Rule ids are slots: while the
 * rules in force and the new ones fit in the 64 slots together, the new rules
 * go into free slots (in policy order, so the lowest id still wins), then
 * each prefix is switched to the new slots' bits by one map update, stale
 * prefixes removed, and the old slots switched off. Every packet is decided
 * wholly by the old policy or wholly by the new one. When they do not fit,
 * the slots are rewritten in place, in an order that never lets a packet
 * meet a half-written rule (changed slots off, tries written, slots on): for
 * those few map writes a changed rule matches nothing. A reload that changes
 * nothing writes nothing, and a rule that stays keeps its hit counters.
 */
#include <errno.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/loader.h"
#include "core/redact_maps.h"
#include "core/tamper_maps.h"
#include "enforce/filter_maps.h"
#include "log.h"
#include "percpu.h"
#include "core/netns.h"
#include "enforce/rule_maps.h"
#include "enforce/flow_reset.h"
#include "enforce/enforce_sockdestroy.h"
#include "enforce/enforce_carried.h"
#include "enforce/proc_rules.h"
#include "enforce_cgroup.skel.h"

struct lpm_entry {
	uint8_t family, dir, prefix;
	uint8_t addr[16];
	uint64_t own;	/* rules naming exactly this prefix */
	uint64_t rules;	/* own, and those of every shorter prefix covering it */
};

struct compiled {
	struct vigil_pol_rule rules[VIGIL_RULES_MAX];
	struct vigil_pol_cgroup cgroups[VIGIL_RULES_MAX];
	struct vigil_cgroup_ref refs[VIGIL_RULES_MAX];	/* distinct cgroups named */
	unsigned n_refs;
	struct lpm_entry *lpm;
	unsigned n_lpm, cap_lpm, n4, n6;	/* sorted by entry_cmp once compiled */
};

/* Appends one (family, direction, prefix) for rule id; duplicates are
 * merged, and the count checked, once all rules are in (index_prefixes). */
static int add_prefix(struct compiled *c, uint8_t family, uint8_t dir, uint8_t prefix,
		      const uint8_t *addr, unsigned id)
{
	struct lpm_entry *e;

	if (c->n_lpm == c->cap_lpm) {
		unsigned cap = c->cap_lpm ? 2 * c->cap_lpm : 64;

		e = realloc(c->lpm, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->lpm = e;
		c->cap_lpm = cap;
	}
	e = &c->lpm[c->n_lpm++];
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->dir = dir;
	e->prefix = prefix;
	memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
	e->own = 1ull << id;
	return 0;
}

/* Sort order of the compiled prefixes: family, direction, length, address
 * (the bytes past an IPv4 address are zero). */
static int entry_cmp(const void *a, const void *b)
{
	const struct lpm_entry *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

static const struct lpm_entry *find_entry(const struct compiled *c, const struct lpm_entry *probe)
{
	return c->n_lpm ? bsearch(probe, c->lpm, c->n_lpm, sizeof(*c->lpm), entry_cmp) : NULL;
}

/* The compiled entry of a trie key (of the family's trie), or NULL. */
static const struct lpm_entry *find_key(const struct compiled *c, uint8_t family,
					const struct vigil_pol_key6 *k)
{
	struct lpm_entry probe = { .family = family, .dir = k->dir, .prefix = k->prefixlen - 32 };

	if (k->prefixlen < 32 || k->prefixlen - 32 > (family == AF_INET ? 32u : 128u))
		return NULL;
	memcpy(probe.addr, k->addr, family == AF_INET ? 4 : 16);
	return find_entry(c, &probe);
}

/* Sorts and merges the prefixes, checks their number, and gives each the
 * rules of every shorter prefix covering it (an LPM lookup returns the
 * longest only). A covering prefix is looked up (bsearch) at each shorter
 * length present, not found by a scan: a reload's cost must stay small on
 * the agent's loop, and a scan was quadratic in 4096 prefixes. */
static int index_prefixes(struct compiled *c, char *err, size_t errlen)
{
	uint64_t present[2][4][3] = {};	/* lengths present, by family and direction */
	unsigned n = 0;

	if (c->n_lpm)
		qsort(c->lpm, c->n_lpm, sizeof(*c->lpm), entry_cmp);
	for (unsigned i = 0; i < c->n_lpm; i++) {
		struct lpm_entry *e = &c->lpm[i];

		if (n && !entry_cmp(&c->lpm[n - 1], e)) {
			c->lpm[n - 1].own |= e->own;
			continue;
		}
		c->lpm[n++] = *e;
		*(e->family == AF_INET ? &c->n4 : &c->n6) += 1;
	}
	c->n_lpm = n;
	if (c->n4 > VIGIL_POL_PREFIXES_MAX || c->n6 > VIGIL_POL_PREFIXES_MAX) {
		snprintf(err, errlen, "more than %d address prefixes in one family (each direction "
			 "counts)", VIGIL_POL_PREFIXES_MAX);
		return -E2BIG;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct lpm_entry *e = &c->lpm[i];

		present[e->family == AF_INET6][e->dir & 3][e->prefix / 64] |= 1ull << (e->prefix % 64);
	}
	for (unsigned i = 0; i < n; i++) {
		struct lpm_entry *e = &c->lpm[i], probe = *e;
		const uint64_t *have = present[e->family == AF_INET6][e->dir & 3];

		e->rules = e->own;
		for (unsigned len = 0; len < e->prefix; len++) {
			const struct lpm_entry *wide;

			if (!(have[len / 64] & (1ull << (len % 64))))
				continue;
			probe.prefix = len;
			memset(probe.addr, 0, sizeof(probe.addr));
			memcpy(probe.addr, e->addr, len / 8);
			if (len % 8)
				probe.addr[len / 8] = e->addr[len / 8] & (0xff00 >> (len % 8));
			if ((wide = find_entry(c, &probe)))
				e->rules |= wide->own;
		}
	}
	return 0;
}

static int compile_rule(struct compiled *c, const struct vigil_rule *r, unsigned id, char *err,
			size_t errlen)
{
	static const uint8_t zero[16];
	int ret = 0;

	c->rules[id] = (struct vigil_pol_rule){
		.action = r->action,
		.proto = r->protocol,
		.flags = VIGIL_RULE_ACTIVE,
		.port_lo = r->port_lo,
		.port_hi = r->port_hi,
	};
	for (unsigned d = VIGIL_DIR_INGRESS; d <= VIGIL_DIR_EGRESS && !ret; d <<= 1) {
		if (!(r->direction & d))
			continue;
		if (!r->n_cidrs) {
			ret = add_prefix(c, AF_INET, d, 0, zero, id);
			if (!ret)
				ret = add_prefix(c, AF_INET6, d, 0, zero, id);
		}
		for (unsigned i = 0; i < r->n_cidrs && !ret; i++)
			ret = add_prefix(c, r->cidrs[i].family, d, r->cidrs[i].prefix,
					 r->cidrs[i].addr, id);
	}
	if (ret)
		return ret;
	for (unsigned i = 0; i < r->n_netns && !ret; i++)
		ret = vigil_netns_check(r->netns[i], err, errlen);
	if (!ret)
		ret = vigil_policy_tc_check(r, err, errlen);
	if (!ret && !r->cgroup)
		return 0;

	struct vigil_cgroup_ref ref;
	unsigned j;

	if (!ret)
		ret = vigil_cgroup_resolve(r->cgroup, &ref, err, errlen);
	if (ret) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s:%u: rule '%s': %s", r->file, r->line, r->name, why);
		return ret;
	}
	c->cgroups[id] = (struct vigil_pol_cgroup){ .id = ref.id, .level = ref.level };
	for (j = 0; j < c->n_refs && c->refs[j].id != ref.id; j++)
		;
	if (j == c->n_refs)
		c->refs[c->n_refs++] = ref;
	return 0;
}

/* Compiles p into c (zeroed) with rule i in slot slot[i]. */
static int compile(const struct vigil_policy *p, const uint8_t *slot, struct compiled *c, char *err,
		   size_t errlen)
{
	int ret;

	for (unsigned i = 0; i < p->n_rules; i++)
		if ((ret = compile_rule(c, &p->rules[i], slot[i], err, errlen)))
			return ret;
	return index_prefixes(c, err, errlen);
}

/* The trie key of an entry; returns its size. */
static size_t lpm_key(const struct lpm_entry *e, void *key)
{
	if (e->family == AF_INET) {
		struct vigil_pol_key4 *k = key;

		*k = (struct vigil_pol_key4){ .prefixlen = 32 + e->prefix, .dir = e->dir };
		memcpy(k->addr, e->addr, 4);
		return sizeof(*k);
	}
	struct vigil_pol_key6 *k = key;

	*k = (struct vigil_pol_key6){ .prefixlen = 32 + e->prefix, .dir = e->dir };
	memcpy(k->addr, e->addr, 16);
	return sizeof(*k);
}

/* Deletes every key of the trie fd that the compiled policy does not hold. */
static int remove_stale(int fd, uint8_t family, const struct compiled *c)
{
	struct vigil_pol_key6 key, next;
	size_t size = family == AF_INET ? sizeof(struct vigil_pol_key4) : sizeof(key);
	void *prev = NULL;
	int err = 0;

	/* Deleting while walking would restart the walk: collect first. */
	struct vigil_pol_key6 *stale = NULL;
	unsigned n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!find_key(c, family, &next)) {
			void *more = realloc(stale, (n + 1) * sizeof(*stale));

			if (!more) {
				err = -ENOMEM;
				break;
			}
			stale = more;
			memcpy(&stale[n++], &next, size);
		}
		memcpy(&key, &next, size);
		prev = &key;
	}
	for (unsigned i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, &stale[i]) && errno != ENOENT)
			err = vlog_err(-errno, "cannot remove a stale policy prefix");
	free(stale);
	return err;
}

/* Zeroes what a slot counts (stats, and the rate limiter's state) before a
 * rule takes it. */
static int zero_slot(struct vigil_policy_state *s, unsigned id)
{
	struct bpf_map *maps[] = { s->cg->maps.vigil_rule_stats, s->cg->maps.vigil_rule_rl };
	int ncpu = libbpf_num_possible_cpus();
	int err = 0;

	for (unsigned i = 0; i < sizeof(maps) / sizeof(maps[0]) && !err; i++) {
		size_t size = bpf_map__value_size(maps[i]) *
			      (bpf_map__type(maps[i]) == BPF_MAP_TYPE_PERCPU_ARRAY ? ncpu : 1);
		void *z = calloc(1, size);

		if (!z)
			return -ENOMEM;
		if (bpf_map_update_elem(bpf_map__fd(maps[i]), &id, z, 0))
			err = vlog_err(-errno, "cannot reset the counters of rule %u", id);
		free(z);
	}
	return err;
}

static int slot_stats(struct vigil_policy_state *s, unsigned id, struct vigil_rule_stats *sum)
{
	return vigil_percpu_sum(s->stats_fd, &id, sum, sizeof(*sum));
}

static void stats_add(struct vigil_rule_stats *a, const struct vigil_rule_stats *b)
{
	a->hits += b->hits;
	a->replies += b->replies;
	a->replies_suppressed += b->replies_suppressed;
	a->events += b->events;
	a->events_suppressed += b->events_suppressed;
}

int vigil_policy_rule_stats(struct vigil_policy_state *s, unsigned pos, struct vigil_rule_stats *sum)
{
	int err = slot_stats(s, s->slot[pos], sum);

	stats_add(sum, &s->base[pos]);
	return err;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same rule: what it matches and does (the file it came from aside). */
static bool rule_same(const struct vigil_rule *a, const struct vigil_rule *b)
{
	if (strcmp(a->name, b->name) || a->action != b->action || a->direction != b->direction ||
	    a->protocol != b->protocol || a->port_lo != b->port_lo || a->port_hi != b->port_hi ||
	    a->n_cidrs != b->n_cidrs || a->n_netns != b->n_netns || !same_str(a->cgroup, b->cgroup) ||
	    (a->n_cidrs && memcmp(a->cidrs, b->cidrs, a->n_cidrs * sizeof(*a->cidrs))))
		return false;
	for (unsigned i = 0; i < a->n_netns; i++)
		if (strcmp(a->netns[i], b->netns[i]))
			return false;
	return true;
}

/* The slots whose rules are switched on in the maps. */
static uint64_t active_slots(struct vigil_policy_state *s)
{
	uint64_t used = 0;

	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++) {
		struct vigil_pol_rule r = {};

		if (!bpf_map_lookup_elem(s->rules_fd, &id, &r) && (r.flags & VIGIL_RULE_ACTIVE))
			used |= 1ull << id;
	}
	return used;
}

/* Does slot id hold c's rule and cgroup scope for it already? */
static bool slot_holds(struct vigil_policy_state *s, unsigned id, const struct compiled *c)
{
	struct vigil_pol_rule r = {};
	struct vigil_pol_cgroup cg = {};

	bpf_map_lookup_elem(s->rules_fd, &id, &r);
	bpf_map_lookup_elem(s->cgroup_fd, &id, &cg);
	return !memcmp(&r, &c->rules[id], sizeof(r)) && !memcmp(&cg, &c->cgroups[id], sizeof(cg));
}

/* Do the maps hold exactly c already? */
static bool same_as_maps(struct vigil_policy_state *s, const struct compiled *c)
{
	struct vigil_pol_key6 key, next;
	int fds[2] = { s->pol4_fd, s->pol6_fd };
	unsigned found = 0;

	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++) {
		struct vigil_pol_rule r = {};

		/* A slot off stays off, whatever it held before. */
		bpf_map_lookup_elem(s->rules_fd, &id, &r);
		if (!(r.flags & VIGIL_RULE_ACTIVE) && !(c->rules[id].flags & VIGIL_RULE_ACTIVE))
			continue;
		if (!slot_holds(s, id, c))
			return false;
	}
	/* Every key in the tries is compiled, with the same set; as many. */
	for (int f = 0; f < 2; f++) {
		uint8_t family = f ? AF_INET6 : AF_INET;
		void *prev = NULL;

		while (!bpf_map_get_next_key(fds[f], prev, &next)) {
			struct vigil_pol_set set = {};
			const struct lpm_entry *e = find_key(c, family, &next);

			if (!e || bpf_map_lookup_elem(fds[f], &next, &set) || set.rules != e->rules)
				return false;
			found++;
			key = next;
			prev = &key;
		}
	}
	return found == c->n_lpm;
}

static int write_prefixes(struct vigil_policy_state *s, const struct compiled *c)
{
	struct vigil_pol_key6 key;

	for (unsigned i = 0; i < c->n_lpm; i++) {
		int fd = c->lpm[i].family == AF_INET ? s->pol4_fd : s->pol6_fd;
		struct vigil_pol_set set = { .rules = c->lpm[i].rules };

		lpm_key(&c->lpm[i], &key);
		if (bpf_map_update_elem(fd, &key, &set, 0))
			return vlog_err(-errno, "cannot write a policy prefix");
	}
	if (remove_stale(s->pol4_fd, AF_INET, c) || remove_stale(s->pol6_fd, AF_INET6, c))
		return -EIO;
	return 0;
}

static int write_slot(struct vigil_policy_state *s, unsigned id, const struct compiled *c)
{
	if (bpf_map_update_elem(s->cgroup_fd, &id, &c->cgroups[id], 0) ||
	    bpf_map_update_elem(s->rules_fd, &id, &c->rules[id], 0))
		return vlog_err(-errno, "cannot write policy rule %u", id);
	return 0;
}

static int switch_off(struct vigil_policy_state *s, unsigned id)
{
	struct vigil_pol_rule r = {};

	bpf_map_lookup_elem(s->rules_fd, &id, &r);
	r.flags &= ~VIGIL_RULE_ACTIVE;
	if (bpf_map_update_elem(s->rules_fd, &id, &r, 0))
		return vlog_err(-errno, "cannot switch off policy rule %u", id);
	return 0;
}

/* The new rules into free slots, then the prefixes, then the old slots off:
 * no prefix ever holds bits of both, so a lookup meets one policy whole. */
static int write_swap(struct vigil_policy_state *s, const struct compiled *c, uint64_t old,
		      uint64_t new)
{
	int err;

	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if ((new & (1ull << id)) && ((err = zero_slot(s, id)) || (err = write_slot(s, id, c))))
			return err;
	if ((err = write_prefixes(s, c)))
		return err;
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if ((old & (1ull << id)) && (err = switch_off(s, id)))
			return err;
	return 0;
}

/* Too many rules for two policies side by side: rewrite the slots in place.
 * keep[id]: the slot's rule stays (its counters too). */
static int write_in_place(struct vigil_policy_state *s, const struct compiled *c, const bool *keep)
{
	int err;

	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if (!keep[id] && ((err = switch_off(s, id)) || (err = zero_slot(s, id))))
			return err;
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if ((err = write_slot(s, id, c)))
			return err;
	return write_prefixes(s, c);
}

/* What the old slot of each rule that stays but moves has counted. */
static void moved_stats(struct vigil_policy_state *s, const struct vigil_policy *np,
			const int *old_of, const uint8_t *slot, struct vigil_rule_stats *moved)
{
	for (unsigned i = 0; i < np->n_rules; i++)
		if (old_of[i] >= 0 && s->slot[old_of[i]] != slot[i])
			slot_stats(s, s->slot[old_of[i]], &moved[i]);
}

/* Reads files into np and compiles them into c (network rules) and pc
 * (exec and file rules), resolving every cgroup and namespace they name;
 * nothing in the kernel changes. */
static int prepare(char *const *files, unsigned n, struct vigil_policy *np, struct compiled *c,
		   struct vigil_proc_compiled **pc, struct vigil_filter_compiled **fc, char *err,
		   size_t errlen)
{
	uint8_t ident[VIGIL_RULES_MAX];
	int ret = 0;

	if (n > VIGIL_POLICY_FILES_MAX) {
		snprintf(err, errlen, "at most %d policy files", VIGIL_POLICY_FILES_MAX);
		return -E2BIG;
	}
	for (unsigned i = 0; i < VIGIL_RULES_MAX; i++)
		ident[i] = i;
	for (unsigned i = 0; i < n && !ret; i++)
		ret = vigil_policy_add_file(np, files[i], err, errlen);
	if (!ret)
		ret = compile(np, ident, c, err, errlen);
	if (!ret)
		ret = vigil_proc_compile(np, pc, err, errlen);
	if (!ret)
		ret = vigil_filter_compile(np, fc, err, errlen);
	return ret;
}

int vigil_policy_check(char *const *files, unsigned n, char *err, size_t errlen)
{
	struct vigil_policy np = {};
	struct compiled c = {};
	struct vigil_proc_compiled *pc = NULL;
	struct vigil_filter_compiled *fc = NULL;
	int ret = prepare(files, n, &np, &c, &pc, &fc, err, errlen);

	vigil_policy_free(&np);
	vigil_proc_compiled_free(pc);
	vigil_filter_compiled_free(fc);
	free(c.lpm);
	return ret;
}

enum placement { UNCHANGED, SWAP, IN_PLACE };

/* Where np's rules go (slot[i] for rule i): where the maps hold them already
 * (UNCHANGED: a reload or restart that changes nothing), into slots the
 * policy in force leaves free (SWAP, compiled into placed), or over the old
 * ones (IN_PLACE: slot i for rule i) when both do not fit side by side. */
static int place(struct vigil_policy_state *s, const struct vigil_policy *np,
		 struct compiled *placed, uint8_t *slot,
		 enum placement *how, uint64_t *used, uint64_t *fresh, char *err, size_t errlen)
{
	struct compiled cur = {};
	uint8_t at[VIGIL_RULES_MAX];
	unsigned k = 0;
	bool same;

	*used = active_slots(s);
	for (unsigned id = 0; id < VIGIL_RULES_MAX && k < np->n_rules; id++)
		if (*used & (1ull << id))
			at[k++] = id;
	same = (unsigned)__builtin_popcountll(*used) == np->n_rules &&
	       !compile(np, at, &cur, err, errlen) && same_as_maps(s, &cur);
	free(cur.lpm);
	if (same) {
		memcpy(slot, at, np->n_rules);
		*how = UNCHANGED;
		return 0;
	}
	if ((unsigned)__builtin_popcountll(~*used) < np->n_rules) {
		*how = IN_PLACE;
		return 0;
	}
	*how = SWAP;
	for (unsigned i = 0, id = 0; i < np->n_rules; i++, id++) {
		while (*used & (1ull << id))
			id++;
		slot[i] = id;
		*fresh |= 1ull << id;
	}
	return compile(np, slot, placed, err, errlen);
}

int vigil_policy_apply(struct vigil_policy_state *s, char *const *files, unsigned n, char *err,
		       size_t errlen)
{
	enum placement how = UNCHANGED;
	struct vigil_rule_stats base[VIGIL_RULES_MAX] = {}, moved[VIGIL_RULES_MAX] = {};
	struct vigil_policy np = {};
	struct compiled c = {}, placed = {}, *final = &c;
	char *names[VIGIL_POLICY_FILES_MAX] = {};
	int old_of[VIGIL_RULES_MAX];	/* the same rule's position in force, or -1 */
	uint8_t slot[VIGIL_RULES_MAX];
	bool keep[VIGIL_RULES_MAX] = {};
	struct vigil_policy_tc_mark tc_mark;
	struct vigil_proc_compiled *pc = NULL;
	struct vigil_filter_compiled *fc = NULL;
	uint64_t used = 0, fresh = 0;
	int ret = prepare(files, n, &np, &c, &pc, &fc, err, errlen);

	for (unsigned i = 0; i < n && !ret; i++)
		if (!(names[i] = strdup(files[i])))
			ret = -ENOMEM, snprintf(err, errlen, "out of memory");
	for (unsigned i = 0; i < VIGIL_RULES_MAX; i++)
		slot[i] = i;
	for (unsigned i = 0; i < np.n_rules; i++) {
		old_of[i] = -1;
		for (unsigned j = 0; j < s->in_force.n_rules && old_of[i] < 0; j++)
			if (rule_same(&np.rules[i], &s->in_force.rules[j]))
				old_of[i] = j;
	}
	if (!ret)
		ret = place(s, &np, &placed, slot, &how, &used, &fresh, err, errlen);
	if (how == SWAP)
		final = &placed;
	for (unsigned i = 0; i < np.n_rules && how == IN_PLACE; i++)
		keep[i] = old_of[i] >= 0 && s->slot[old_of[i]] == i && slot_holds(s, i, &c);
	/* A rule that stays and moves takes along what its old slot counted:
	 * read before an in-place rewrite zeroes it, after a swap switched it
	 * off. */
	if (!ret && how == IN_PLACE)
		moved_stats(s, &np, old_of, slot, moved);
	/* Everything is checked: from here on the kernel side changes. */
	if (!ret && (ret = vigil_cgroup_attach(s, final->refs, final->n_refs)))
		snprintf(err, errlen, "cannot attach the cgroup hooks (see vigild's log)");
	vigil_policy_tc_mark(s, &tc_mark);
	if (!ret && (ret = vigil_policy_tc_attach(s, &np)))
		snprintf(err, errlen, "cannot attach to the interfaces named (see vigild's log)");
	/* The exec and file rules go into the generation not in force, after
	 * every attach that can fail and before the network maps; the flip
	 * below, once those are in, puts them in force. */
	if (!ret && (ret = vigil_proc_write(s->proc, pc)))
		snprintf(err, errlen, "cannot write the exec and file rules (see vigild's log)");
	if (!ret && how == SWAP && (ret = write_swap(s, final, used, fresh)))
		snprintf(err, errlen, "cannot write the policy maps (see vigild's log)");
	if (!ret && how == IN_PLACE && (ret = write_in_place(s, final, keep)))
		snprintf(err, errlen, "cannot write the policy maps (see vigild's log)");
	/* The secret words last: their own flip puts them in force. */
	if (!ret && (ret = vigil_redact_write(s->redact_conf_fd, s->redact_keys_fd,
					      np.redact ? &np.redact->set : &vigil_redact_defaults)))
		snprintf(err, errlen, "cannot write the secret words (see vigild's log)");
	/* The export filters with them: their own flip. */
	if (!ret && (ret = vigil_filter_write(s->filters, fc)))
		snprintf(err, errlen, "cannot write the export filters (see vigild's log)");
	vigil_filter_compiled_free(fc);
	if (ret) {
		vigil_policy_tc_rollback(s, &tc_mark);
		vigil_policy_free(&np);
		for (unsigned i = 0; i < n; i++)
			free(names[i]);
		free(c.lpm);
		free(placed.lpm);
		vigil_proc_compiled_free(pc);
		return ret;
	}
	vigil_proc_flip(s->proc, &s->in_force, &np);
	vigil_proc_compiled_free(pc);
	if (how == SWAP)
		moved_stats(s, &np, old_of, slot, moved);
	for (unsigned i = 0; i < np.n_rules; i++) {
		if (old_of[i] < 0)
			continue;
		base[i] = s->base[old_of[i]];
		stats_add(&base[i], &moved[i]);
	}
	vigil_cgroup_detach_others(s, final->refs, final->n_refs);
	vigil_policy_tc_detach_others(s, &np);
	vigil_policy_free(&s->in_force);
	s->in_force = np;
	memcpy(s->slot, slot, sizeof(slot));
	memcpy(s->base, base, sizeof(base));
	for (unsigned i = 0; i < s->n_files; i++)
		free(s->files[i]);
	memcpy(s->files, names, sizeof(names));
	s->n_files = n;
	free(c.lpm);
	free(placed.lpm);
	err[0] = 0;
	if (n || how != UNCHANGED)
		vlog_info("policy: %u network and %u exec and file rules from %u files in force%s",
			  np.n_rules, np.n_prules, n,
			  how == SWAP ? "" : how == IN_PLACE ? " (slots rewritten in place)" : " (unchanged)");
	if (np.n_filters)
		vlog_info("policy: %u export filters in force", np.n_filters);
	/* Live sockets that a new reset rule covers go now; flows through
	 * this host that it covers are reset by the idle-flow watchers. */
	for (unsigned i = 0; i < s->in_force.n_rules; i++)
		if (s->in_force.rules[i].action == VIGIL_ACT_RESET && old_of[i] < 0) {
			vigil_flow_reset_kick();
			vigil_sock_destroy_rule(s, &s->in_force.rules[i], s->slot[i]);
		}
	/* Sockets carried into a denied cgroup escape its hooks: end them,
	 * now and then again (vigil_deny_carried_tick). */
	s->carried_rescan = false;
	for (unsigned i = 0; i < s->in_force.n_rules && !s->carried_rescan; i++)
		s->carried_rescan = s->in_force.rules[i].action == VIGIL_ACT_DENY;
	vigil_deny_carried_landed(s);
	/* The fresh pattern tries are vigil's maps now (logged when it fails:
	 * then writes to them are refused, as frozen, but not recorded). */
	vigil_tamper_maps_sync(s->pin_dir);
	return 0;
}

int vigil_policy_unload(struct vigil_policy_state *s, char *const *drop, unsigned ndrop, char *err,
			size_t errlen)
{
	char *files[VIGIL_POLICY_FILES_MAX];
	unsigned n = 0;
	int ret = 0;

	for (unsigned d = 0; d < ndrop; d++) {
		unsigned i = 0;

		while (i < s->n_files && strcmp(s->files[i], drop[d]))
			i++;
		if (i == s->n_files) {
			snprintf(err, errlen, "%s is not in force", drop[d]);
			return -ENOENT;
		}
	}
	/* apply() replaces s->files: work on copies of the names kept. */
	for (unsigned i = 0; i < s->n_files && !ret; i++) {
		bool dropped = false;

		for (unsigned d = 0; d < ndrop && !dropped; d++)
			dropped = !strcmp(s->files[i], drop[d]);
		if (dropped)
			continue;
		if (!(files[n] = strdup(s->files[i])))
			ret = -ENOMEM;
		else
			n++;
	}
	if (!ret)
		ret = vigil_policy_apply(s, files, n, err, errlen);
	for (unsigned i = 0; i < n; i++)
		free(files[i]);
	return ret;
}

int vigil_policy_reload(struct vigil_policy_state *s, char *err, size_t errlen)
{
	return vigil_policy_unload(s, NULL, 0, err, errlen);
}

/* Pinned by the core's process object, which loads first. */
static int open_redact_maps(struct vigil_policy_state *s)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/vigil_redact_conf", s->pin_dir);
	if ((s->redact_conf_fd = bpf_obj_get(path)) < 0)
		return vlog_err(-errno, "cannot open %s", path);
	snprintf(path, sizeof(path), "%s/vigil_redact_keys", s->pin_dir);
	if ((s->redact_keys_fd = bpf_obj_get(path)) < 0)
		return vlog_err(-errno, "cannot open %s", path);
	return 0;
}

int vigil_policy_init(struct vigil_policy_state *s, const char *pin_dir, uint64_t ring_size,
		      struct vigil_tamper_progs *tamper)
{
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", pin_dir);
	s->ring_size = ring_size;
	if ((err = vigil_skel_open(enforce_cgroup, &s->cg, pin_dir, ring_size)) ||
	    (err = vigil_skel_load(s->cg->skeleton)))
		return err;
	s->rules_fd = bpf_map__fd(s->cg->maps.vigil_rules);
	s->pol4_fd = bpf_map__fd(s->cg->maps.vigil_pol4);
	s->pol6_fd = bpf_map__fd(s->cg->maps.vigil_pol6);
	s->stats_fd = bpf_map__fd(s->cg->maps.vigil_rule_stats);
	s->cgroup_fd = bpf_map__fd(s->cg->maps.vigil_rule_cgroup);
	if ((err = open_redact_maps(s)) ||
	    (err = vigil_filter_open(&s->filters, pin_dir, ring_size)) ||
	    (err = vigil_sock_destroy_init(s, ring_size)) ||
	    (err = vigil_proc_rules_open(&s->proc, pin_dir, ring_size, tamper)))
		return err;
	return vigil_deny_carried_init(s, ring_size);
}

void vigil_policy_close(struct vigil_policy_state *s)
{
	vigil_policy_tc_close(s);
	vigil_sock_destroy_close(s);
	vigil_deny_carried_close(s);
	vigil_proc_rules_close(s->proc);
	s->proc = NULL;
	vigil_filter_close(s->filters);
	s->filters = NULL;
	enforce_cgroup_bpf__destroy(s->cg);
	s->cg = NULL;
	if (s->redact_conf_fd > 0)
		close(s->redact_conf_fd);
	if (s->redact_keys_fd > 0)
		close(s->redact_keys_fd);
	s->redact_conf_fd = s->redact_keys_fd = -1;
	vigil_policy_free(&s->in_force);
	for (unsigned i = 0; i < s->n_files; i++)
		free(s->files[i]);
	s->n_files = 0;
}
