// SPDX-License-Identifier: GPL-2.0
/*
 * Rules into maps (docs/enforce-maps.md): vigil_rules by rule id, the LPM
 * tries vigil_pol4/vigil_pol6 from (direction, CIDR) to the set of rules
 * covering it, with every shorter covering prefix's rules folded in (an LPM
 * lookup returns the longest prefix only), and vigil_rule_cgroup for rules
 * scoped to a cgroup.
 *
 * A reload is compiled, and every cgroup and namespace it names resolved, in
 * user space first; only then are maps written, in an order that never lets
 * a packet meet a half-written rule: rule slots whose content changes are
 * switched off, the tries and cgroup scopes written, the new rules switched
 * on, and stale prefixes removed last. Between the first and the third
 * step a changed rule matches nothing (for the time of a few map writes).
 */
#include <errno.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "log.h"
#include "policy_state.h"
#include "sock_destroy.h"
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
	unsigned n_lpm, n4, n6;
};

static int add_prefix(struct compiled *c, uint8_t family, uint8_t dir, uint8_t prefix,
		      const uint8_t *addr, unsigned id)
{
	unsigned alen = family == AF_INET ? 4 : 16;
	struct lpm_entry *e;

	for (unsigned i = 0; i < c->n_lpm; i++) {
		e = &c->lpm[i];
		if (e->family == family && e->dir == dir && e->prefix == prefix &&
		    !memcmp(e->addr, addr, alen)) {
			e->own |= 1ull << id;
			return 0;
		}
	}
	if ((family == AF_INET ? c->n4 : c->n6) >= VIGIL_POL_PREFIXES_MAX)
		return -E2BIG;
	e = realloc(c->lpm, (c->n_lpm + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->lpm = e;
	e = &c->lpm[c->n_lpm++];
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->dir = dir;
	e->prefix = prefix;
	memcpy(e->addr, addr, alen);
	e->own = 1ull << id;
	*(family == AF_INET ? &c->n4 : &c->n6) += 1;
	return 0;
}

static bool covers(const struct lpm_entry *wide, const struct lpm_entry *narrow)
{
	unsigned bits = wide->prefix;

	if (wide->family != narrow->family || wide->dir != narrow->dir || bits > narrow->prefix)
		return false;
	if (memcmp(wide->addr, narrow->addr, bits / 8))
		return false;
	return !(bits % 8) ||
	       !((wide->addr[bits / 8] ^ narrow->addr[bits / 8]) & (0xff00 >> (bits % 8)));
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
	if (ret == -E2BIG)
		snprintf(err, errlen, "%s:%u: rule '%s': more than %d prefixes in one family", r->file,
			 r->line, r->name, VIGIL_POL_PREFIXES_MAX);
	if (ret)
		return ret;
	for (unsigned i = 0; i < r->n_netns && !ret; i++)
		ret = vigil_netns_check(r->netns[i], err, errlen);
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

static int compile(const struct vigil_policy *p, struct compiled *c, char *err, size_t errlen)
{
	int ret;

	for (unsigned i = 0; i < p->n_rules; i++)
		if ((ret = compile_rule(c, &p->rules[i], i, err, errlen)))
			return ret;
	for (unsigned i = 0; i < c->n_lpm; i++) {
		c->lpm[i].rules = c->lpm[i].own;
		for (unsigned j = 0; j < c->n_lpm; j++)
			if (j != i && covers(&c->lpm[j], &c->lpm[i]))
				c->lpm[i].rules |= c->lpm[j].own;
	}
	return 0;
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
	struct vigil_pol_key6 key, next, want;
	size_t size = family == AF_INET ? sizeof(struct vigil_pol_key4) : sizeof(key);
	void *prev = NULL;
	int err = 0;

	/* Deleting while walking would restart the walk: collect first. */
	struct vigil_pol_key6 *stale = NULL;
	unsigned n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool keep = false;

		for (unsigned i = 0; i < c->n_lpm && !keep; i++)
			keep = c->lpm[i].family == family && lpm_key(&c->lpm[i], &want) == size &&
			       !memcmp(&want, &next, size);
		if (!keep) {
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

static int zero_stats(struct vigil_policy_state *s, unsigned id)
{
	int ncpu = libbpf_num_possible_cpus();
	struct vigil_rule_stats *z = calloc(ncpu > 0 ? ncpu : 1, sizeof(*z));
	int err;

	if (!z)
		return -ENOMEM;
	err = bpf_map_update_elem(s->stats_fd, &id, z, 0) ? -errno : 0;
	free(z);
	return err;
}

/* Returns how many rule slots changed, or -errno. */
static int write_maps(struct vigil_policy_state *s, const struct vigil_policy *np,
		      const struct compiled *c)
{
	struct vigil_pol_rule off;
	struct vigil_pol_key6 key;
	int err, changed = 0;

	/* 1: switch off the slots that change; their counters restart. */
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++) {
		struct vigil_pol_rule old = {};
		bool same_name = id < np->n_rules && id < s->in_force.n_rules &&
				 !strcmp(np->rules[id].name, s->in_force.rules[id].name);

		bpf_map_lookup_elem(s->rules_fd, &id, &old);
		if (!memcmp(&old, &c->rules[id], sizeof(old)) && (same_name || !(old.flags & VIGIL_RULE_ACTIVE)))
			continue;
		changed++;
		off = old;
		off.flags &= ~VIGIL_RULE_ACTIVE;
		if (bpf_map_update_elem(s->rules_fd, &id, &off, 0))
			return vlog_err(-errno, "cannot update policy rule %u", id);
		if ((err = zero_stats(s, id)))
			return vlog_err(err, "cannot reset counters of rule %u", id);
	}
	/* 2: cgroup scopes and prefixes. */
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if (bpf_map_update_elem(s->cgroup_fd, &id, &c->cgroups[id], 0))
			return vlog_err(-errno, "cannot update the cgroup of rule %u", id);
	for (unsigned i = 0; i < c->n_lpm; i++) {
		int fd = c->lpm[i].family == AF_INET ? s->pol4_fd : s->pol6_fd;
		struct vigil_pol_set set = { .rules = c->lpm[i].rules };

		lpm_key(&c->lpm[i], &key);
		if (bpf_map_update_elem(fd, &key, &set, 0))
			return vlog_err(-errno, "cannot write a policy prefix");
	}
	/* 3: the new rules on. */
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++)
		if (bpf_map_update_elem(s->rules_fd, &id, &c->rules[id], 0))
			return vlog_err(-errno, "cannot update policy rule %u", id);
	/* 4: prefixes no rule names any more. */
	if ((err = remove_stale(s->pol4_fd, AF_INET, c)) || (err = remove_stale(s->pol6_fd, AF_INET6, c)))
		return err;
	return changed;
}

/* Is rule r of the new policy in force already, unchanged? */
static bool in_force(const struct vigil_policy_state *s, const struct compiled *c, unsigned id,
		     const struct vigil_rule *r)
{
	struct vigil_pol_rule old = {};

	if (id >= s->in_force.n_rules || strcmp(s->in_force.rules[id].name, r->name))
		return false;
	bpf_map_lookup_elem(s->rules_fd, &id, &old);
	return !memcmp(&old, &c->rules[id], sizeof(old));
}

/* Reads files into np and compiles them into c, resolving every cgroup and
 * namespace they name; nothing in the kernel changes. */
static int prepare(char *const *files, unsigned n, struct vigil_policy *np, struct compiled *c,
		   char *err, size_t errlen)
{
	int ret = 0;

	if (n > VIGIL_POLICY_FILES_MAX) {
		snprintf(err, errlen, "at most %d policy files", VIGIL_POLICY_FILES_MAX);
		return -E2BIG;
	}
	for (unsigned i = 0; i < n && !ret; i++)
		ret = vigil_policy_add_file(np, files[i], err, errlen);
	if (!ret)
		ret = compile(np, c, err, errlen);
	return ret;
}

int vigil_policy_check(char *const *files, unsigned n, char *err, size_t errlen)
{
	struct vigil_policy np = {};
	struct compiled c = {};
	int ret = prepare(files, n, &np, &c, err, errlen);

	vigil_policy_free(&np);
	free(c.lpm);
	return ret;
}

int vigil_policy_apply(struct vigil_policy_state *s, char *const *files, unsigned n, char *err,
		       size_t errlen)
{
	struct vigil_policy np = {};
	struct compiled c = {};
	bool landing[VIGIL_RULES_MAX] = {};
	char *names[VIGIL_POLICY_FILES_MAX] = {};
	int changed = 0, ret = prepare(files, n, &np, &c, err, errlen);

	for (unsigned i = 0; i < n && !ret; i++)
		if (!(names[i] = strdup(files[i])))
			ret = -ENOMEM, snprintf(err, errlen, "out of memory");
	/* Everything is checked: from here on the kernel side changes. */
	for (unsigned i = 0; i < np.n_rules && !ret; i++)
		landing[i] = np.rules[i].action == VIGIL_ACT_RESET && !in_force(s, &c, i, &np.rules[i]);
	if (!ret && (ret = vigil_cgroup_attach(s, c.refs, c.n_refs)))
		snprintf(err, errlen, "cannot attach the cgroup hooks (see vigild's log)");
	if (!ret && (changed = write_maps(s, &np, &c)) < 0) {
		ret = changed;
		snprintf(err, errlen, "cannot write the policy maps (see vigild's log)");
	}
	if (ret) {
		vigil_policy_free(&np);
		for (unsigned i = 0; i < n; i++)
			free(names[i]);
		free(c.lpm);
		return ret;
	}
	vigil_cgroup_detach_others(s, c.refs, c.n_refs);
	vigil_policy_free(&s->in_force);
	s->in_force = np;
	for (unsigned i = 0; i < s->n_files; i++)
		free(s->files[i]);
	memcpy(s->files, names, sizeof(names));
	s->n_files = n;
	free(c.lpm);
	err[0] = 0;
	if (n || changed)
		vlog_info("policy: %u rules from %u files in force", np.n_rules, n);
	/* Live sockets that a new reset rule covers go now. */
	for (unsigned i = 0; i < s->in_force.n_rules; i++)
		if (landing[i])
			vigil_sock_destroy_rule(s, &s->in_force.rules[i], i);
	return 0;
}

int vigil_policy_reload(struct vigil_policy_state *s, char *err, size_t errlen)
{
	char *files[VIGIL_POLICY_FILES_MAX];
	unsigned n = s->n_files;
	int ret;

	/* apply() replaces s->files: work on copies of the names. */
	for (unsigned i = 0; i < n; i++) {
		files[i] = strdup(s->files[i]);
		if (!files[i]) {
			n = i;
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = vigil_policy_apply(s, files, n, err, errlen);
out:
	for (unsigned i = 0; i < n; i++)
		free(files[i]);
	return ret;
}

int vigil_policy_rule_stats(struct vigil_policy_state *s, unsigned id, struct vigil_rule_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct vigil_rule_stats *v;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (ncpu <= 0)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(s->stats_fd, &id, v)) {
		err = -errno;
	} else {
		for (int i = 0; i < ncpu; i++) {
			sum->hits += v[i].hits;
			sum->replies += v[i].replies;
			sum->replies_suppressed += v[i].replies_suppressed;
			sum->events += v[i].events;
			sum->events_suppressed += v[i].events_suppressed;
		}
	}
	free(v);
	return err;
}

int vigil_policy_init(struct vigil_policy_state *s, const char *pin_dir, uint64_t ring_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", pin_dir);
	s->cg = enforce_cgroup_bpf__open_opts(&oo);
	if (!s->cg)
		return vlog_err(-errno, "cannot open BPF object enforce_cgroup");
	if ((err = vigil_obj_prepare(s->cg->obj, ring_size)))
		return err;
	if ((err = enforce_cgroup_bpf__load(s->cg)))
		return vlog_err(err, "cannot load BPF object enforce_cgroup (run with -v for the verifier log)");
	s->rules_fd = bpf_map__fd(s->cg->maps.vigil_rules);
	s->pol4_fd = bpf_map__fd(s->cg->maps.vigil_pol4);
	s->pol6_fd = bpf_map__fd(s->cg->maps.vigil_pol6);
	s->stats_fd = bpf_map__fd(s->cg->maps.vigil_rule_stats);
	s->cgroup_fd = bpf_map__fd(s->cg->maps.vigil_rule_cgroup);
	return vigil_sock_destroy_init(s, ring_size);
}

void vigil_policy_close(struct vigil_policy_state *s)
{
	vigil_sock_destroy_close(s);
	enforce_cgroup_bpf__destroy(s->cg);
	s->cg = NULL;
	vigil_policy_free(&s->in_force);
	for (unsigned i = 0; i < s->n_files; i++)
		free(s->files[i]);
	s->n_files = 0;
}
