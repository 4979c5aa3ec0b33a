// SPDX-License-Identifier: GPL-2.0
/* Export filters into their maps, and their counts (filter_maps.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "buf.h"
#include "log.h"
#include "map_drop.h"
#include "percpu.h"
#include "core/loader.h"
#include "core/iter_drain.h"
#include "core/netns.h"
#include "enforce/filter_maps.h"
#include "enforce/rule_maps.h"
#include "filter_scan.skel.h"

#define NAME_MAX_ VIGIL_RULE_NAME_MAX

struct bin_entry {
	char s[VIGIL_FILTER_BIN_MAX + 1];
	uint32_t exact, prefix;	/* this string's own bits, before the ORs */
	bool is_prefix, is_exact;
};

struct key_entry {
	uint32_t what;	/* enum vigil_filter_what */
	uint64_t value;
	uint32_t bits;
};

struct vigil_filter_compiled {
	struct vigil_filter_set set;
	char names[VIGIL_FILTERS_MAX][NAME_MAX_];
	struct bin_entry *bins;
	unsigned nbins;
	struct key_entry *keys;	/* uids, namespaces and cgroups, with the filters naming each */
	unsigned nkeys, nuids;
};

struct vigil_filter_maps {
	struct filter_scan_bpf *skel;
	int conf_fd, keys_fd, bin_fd, hits_fd;
	unsigned n;		/* filters in force, by our last write */
	bool allow;		/* one of them is an allow filter */
	char names[VIGIL_FILTER_SLOTS][NAME_MAX_];
	uint64_t base[VIGIL_FILTER_SLOTS];	/* counted in the other generation, earlier */
	uint64_t gone;		/* counted by filters no longer in force */
};

static int add_bin(struct vigil_filter_compiled *c, const char *s, unsigned id, bool prefix)
{
	struct bin_entry *b = NULL;

	for (unsigned i = 0; i < c->nbins && !b; i++)
		if (!strcmp(c->bins[i].s, s))
			b = &c->bins[i];
	if (!b) {
		if (c->nbins >= VIGIL_FILTER_BIN_ENTRIES / 2)
			return -E2BIG;
		b = realloc(c->bins, (c->nbins + 1) * sizeof(*b));
		if (!b)
			return -ENOMEM;
		c->bins = b;
		b = &c->bins[c->nbins++];
		memset(b, 0, sizeof(*b));
		snprintf(b->s, sizeof(b->s), "%s", s);
	}
	if (prefix) {
		b->prefix |= 1u << id;
		b->is_prefix = true;
	} else {
		b->exact |= 1u << id;
		b->is_exact = true;
	}
	return 0;
}

static int add_key(struct vigil_filter_compiled *c, uint32_t what, uint64_t value, unsigned id)
{
	struct key_entry *k;

	for (unsigned i = 0; i < c->nkeys; i++)
		if (c->keys[i].what == what && c->keys[i].value == value) {
			c->keys[i].bits |= 1u << id;
			return 0;
		}
	if (what == VIGIL_FILTER_BY_UID && c->nuids++ >= VIGIL_FILTER_UIDS_MAX)
		return -E2BIG;
	if (!(k = realloc(c->keys, (c->nkeys + 1) * sizeof(*k))))
		return -ENOMEM;
	c->keys = k;
	c->keys[c->nkeys++] = (struct key_entry){ what, value, 1u << id };
	return 0;
}

/* s's uids, cgroup and namespace as keys of filter id. */
static int resolve(struct vigil_filter_compiled *c, const struct vigil_filter_spec *s,
		   unsigned id, char *why, size_t len)
{
	int ret;

	if (s->has_uid) {
		if ((uint64_t)s->uid_hi - s->uid_lo >= VIGIL_FILTER_UIDS_MAX) {
			snprintf(why, len, "a uid range of at most %d uids", VIGIL_FILTER_UIDS_MAX);
			return -E2BIG;
		}
		for (uint64_t u = s->uid_lo; u <= s->uid_hi; u++)
			if ((ret = add_key(c, VIGIL_FILTER_BY_UID, u, id))) {
				snprintf(why, len, "at most %d uids in all filters",
					 VIGIL_FILTER_UIDS_MAX);
				return ret;
			}
		c->set.uid |= 1u << id;
	}
	if (s->cgroup) {
		struct vigil_cgroup_ref ref;

		if ((ret = vigil_cgroup_resolve(s->cgroup, &ref, why, len)) ||
		    (ret = add_key(c, VIGIL_FILTER_BY_CGROUP, ref.id, id)))
			return ret;
		c->set.cgroup |= 1u << id;
	}
	if (s->netns) {
		char path[300];
		struct stat st;

		if ((ret = vigil_netns_path(s->netns, path, sizeof(path)))) {
			snprintf(why, len, "bad network namespace '%s'", s->netns);
			return ret;
		}
		if (stat(path, &st)) {
			ret = -errno;
			snprintf(why, len, "network namespace %.200s: %s", path, strerror(errno));
			return ret;
		}
		if ((ret = add_key(c, VIGIL_FILTER_BY_NETNS, st.st_ino, id)))
			return ret;
		c->set.netns |= 1u << id;
	}
	return 0;
}

int vigil_filter_compile(const struct vigil_policy *p, struct vigil_filter_compiled **out,
			 char *err, size_t errlen)
{
	struct vigil_filter_compiled *c = calloc(1, sizeof(*c));
	char why[512];
	int ret = 0;

	if (!c)
		return -ENOMEM;
	for (unsigned i = 0; i < p->n_filters && !ret; i++) {
		const struct vigil_filter_spec *s = &p->filters[i];

		for (unsigned k = 0; k < VIGIL_FK_NUM; k++)
			if (s->kinds & (1u << k))
				c->set.by_kind[k] |= 1u << i;
		if (s->allow)
			c->set.allow |= 1u << i;
		if ((ret = resolve(c, s, i, why, sizeof(why)))) {
			snprintf(err, errlen, "%s:%u: filter '%s': %s", s->file, s->line, s->name, why);
			break;
		}
		for (unsigned j = 0; j < s->n_binary && !ret; j++)
			ret = add_bin(c, s->binary[j], i, false);
		for (unsigned j = 0; j < s->n_binary_prefix && !ret; j++)
			ret = add_bin(c, s->binary_prefix[j], i, true);
		if (ret) {
			snprintf(err, errlen, "%s:%u: filter '%s': too many binaries (at most %d "
				 "in all filters)", s->file, s->line, s->name,
				 VIGIL_FILTER_BIN_ENTRIES / 2);
			break;
		}
		if (s->n_binary || s->n_binary_prefix)
			c->set.binary |= 1u << i;
		c->set.kinds |= s->kinds;
		if (s->allow)
			c->set.allow_kinds |= s->kinds;
		snprintf(c->names[i], NAME_MAX_, "%s", s->name);
		c->set.n = i + 1;
	}
	if (ret) {
		vigil_filter_compiled_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

void vigil_filter_compiled_free(struct vigil_filter_compiled *c)
{
	if (!c)
		return;
	free(c->bins);
	free(c->keys);
	free(c);
}

static void key_of(struct vigil_filter_bin_key *k, uint32_t gen, const char *s)
{
	size_t len = strlen(s);

	memset(k, 0, sizeof(*k));
	k->gen = gen;
	k->prefixlen = 8 + 8 * len;
	memcpy(k->s, s, len);
}

static bool bin_of_gen(const void *key, const void *gen)
{
	return ((const struct vigil_filter_bin_key *)key)->gen == *(const uint32_t *)gen;
}

static bool key_of_gen(const void *key, const void *gen)
{
	return ((const struct vigil_filter_key *)key)->gen == *(const uint32_t *)gen;
}

/* Removes every trie entry and selector key of generation gen. */
static int drop_gen(struct vigil_filter_maps *m, uint32_t gen)
{
	int err = vigil_map_drop_if(m->bin_fd, sizeof(struct vigil_filter_bin_key), bin_of_gen, &gen);

	return err ?: vigil_map_drop_if(m->keys_fd, sizeof(struct vigil_filter_key), key_of_gen, &gen);
}

/* The hits at slot, summed over the CPUs (0 when it cannot be read). */
static uint64_t hits_at(int fd, uint32_t slot)
{
	uint64_t sum;

	vigil_percpu_sum(fd, &slot, &sum, sizeof(sum));	/* zeroed on error */
	return sum;
}

/* Zeroes the hits at slot on every CPU. */
static void hits_zero(int fd, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return;
	bpf_map_update_elem(fd, &slot, v, BPF_ANY);
	free(v);
}

static int write_gen(struct vigil_filter_maps *m, const struct vigil_filter_compiled *c,
		     uint32_t gen)
{
	struct vigil_filter_bin_key k;
	int err;

	/* left by an agent that died mid-write: not to be mixed with this set */
	if ((err = drop_gen(m, gen)))
		return vlog_err(err, "cannot clear the filters' generation %u", gen);
	for (unsigned i = 0; c && i < c->nkeys; i++) {
		struct vigil_filter_key k = { gen, c->keys[i].what, c->keys[i].value };

		if (bpf_map_update_elem(m->keys_fd, &k, &c->keys[i].bits, BPF_ANY))
			return vlog_err(-errno, "cannot write a filter's selector");
	}
	for (unsigned i = 0; c && i < c->nbins; i++) {
		const struct bin_entry *b = &c->bins[i];
		struct vigil_filter_bin v = { .exact = b->exact, .len = strlen(b->s) };

		/* A lookup returns the longest entry only: each entry carries
		 * the prefix bits of every entry that is a prefix of it. */
		for (unsigned j = 0; j < c->nbins; j++)
			if (c->bins[j].is_prefix &&
			    !strncmp(b->s, c->bins[j].s, strlen(c->bins[j].s)))
				v.prefix |= c->bins[j].prefix;
		key_of(&k, gen, b->s);
		if (bpf_map_update_elem(m->bin_fd, &k, &v, BPF_ANY))
			return vlog_err(-errno, "cannot write filter binary %s", b->s);
	}
	return 0;
}

int vigil_filter_write(struct vigil_filter_maps *m, const struct vigil_filter_compiled *c)
{
	struct vigil_filter_conf conf = {};
	uint64_t total[VIGIL_FILTER_SLOTS] = {};
	char old_names[VIGIL_FILTER_SLOTS][NAME_MAX_];
	uint32_t zero = 0, gen, old;
	unsigned old_n = m->n;
	int err;

	if (bpf_map_lookup_elem(m->conf_fd, &zero, &conf))
		return vlog_err(-errno, "cannot read the filter settings");
	old = conf.gen & 1;
	gen = !old;
	if ((err = write_gen(m, c, gen)))
		return err;
	/* The running processes' bits for the new set, before it is in
	 * force; execs from here on decide theirs at exec. */
	if (c && c->set.binary) {
		struct vigil_filter_conf pre = conf;

		/* Execs meanwhile must fill the new generation's bits too. */
		memset(&pre.set[gen], 0, sizeof(pre.set[gen]));
		pre.set[gen].binary = c->set.binary;
		if (bpf_map_update_elem(m->conf_fd, &zero, &pre, BPF_ANY))
			return vlog_err(-errno, "cannot write the filter settings");
		m->skel->bss->scan_gen = gen;
		if ((err = vigil_iter_drain(m->skel->progs.filter_scan)))
			return vlog_err(err, "cannot run the filter scan");
	}
	conf.gen = gen;
	memset(&conf.set[gen], 0, sizeof(conf.set[gen]));
	if (c)
		conf.set[gen] = c->set;
	if (bpf_map_update_elem(m->conf_fd, &zero, &conf, BPF_ANY))
		return vlog_err(-errno, "cannot switch the filters");
	/* The old generation is out of force: what it counted is carried to
	 * the new filter of the same name, or to the gone filters' sum. */
	for (uint32_t i = 0; i < VIGIL_FILTER_SLOTS; i++) {
		uint32_t slot = old * VIGIL_FILTER_SLOTS + i;

		total[i] = m->base[i] + hits_at(m->hits_fd, slot);
		hits_zero(m->hits_fd, slot);
		hits_zero(m->hits_fd, gen * VIGIL_FILTER_SLOTS + i);
	}
	memcpy(old_names, m->names, sizeof(old_names));
	memset(m->base, 0, sizeof(m->base));
	memset(m->names, 0, sizeof(m->names));
	m->n = c ? c->set.n : 0;
	m->allow = c && c->set.allow_kinds;
	for (unsigned i = 0; i < m->n; i++)
		snprintf(m->names[i], NAME_MAX_, "%s", c->names[i]);
	snprintf(m->names[VIGIL_FILTER_NOT_ALLOWED], NAME_MAX_, "not_allowed");
	for (unsigned i = 0; i < VIGIL_FILTER_SLOTS; i++) {
		const char *name = i == VIGIL_FILTER_NOT_ALLOWED ? "not_allowed" :
				   i < old_n ? old_names[i] : NULL;
		unsigned j = 0;

		if (!total[i])
			continue;
		while (name && j < VIGIL_FILTER_SLOTS &&
		       !((j < m->n || j == VIGIL_FILTER_NOT_ALLOWED) && !strcmp(m->names[j], name)))
			j++;
		if (name && j < VIGIL_FILTER_SLOTS)
			m->base[j] += total[i];
		else
			m->gone += total[i];
	}
	/* The old generation is out of force: what stays of it only waits
	 * for the next write, which clears it first. */
	if ((err = drop_gen(m, old)))
		vlog_warn("cannot clear the filters' old generation %u: %s", old, strerror(-err));
	return 0;
}

void vigil_filter_counts(struct vigil_filter_maps *m,
			 void (*each)(const char *name, uint64_t n, void *arg), void *arg)
{
	uint32_t zero = 0, gen;
	struct vigil_filter_conf conf = {};

	if (!m || bpf_map_lookup_elem(m->conf_fd, &zero, &conf))
		return;
	gen = conf.gen & 1;
	for (uint32_t i = 0; i < VIGIL_FILTER_SLOTS; i++) {
		if (i >= m->n && !(i == VIGIL_FILTER_NOT_ALLOWED && m->allow))
			continue;
		each(m->names[i], m->base[i] + hits_at(m->hits_fd, gen * VIGIL_FILTER_SLOTS + i),
		     arg);
	}
}

static void add(const char *name, uint64_t n, void *arg)
{
	(void)name;
	*(uint64_t *)arg += n;
}

uint64_t vigil_filter_total(struct vigil_filter_maps *m)
{
	uint64_t sum = m ? m->gone : 0;

	vigil_filter_counts(m, add, &sum);
	return sum;
}

static void describe_one(const char *name, uint64_t n, void *arg)
{
	vbuf_printf(arg, " %s=%llu", name, (unsigned long long)n);
}

void vigil_filter_describe(struct vigil_filter_maps *m, struct vigil_buf *out)
{
	size_t at = out->len;

	vbuf_printf(out, "filtered:");
	vigil_filter_counts(m, describe_one, out);
	if (m && m->gone)
		vbuf_printf(out, " (filters since removed)=%llu", (unsigned long long)m->gone);
	if (out->len == at + strlen("filtered:"))
		vbuf_printf(out, " (no filters)");
	vbuf_printf(out, "\n");
}

int vigil_filter_open(struct vigil_filter_maps **out, const char *pin_dir, uint64_t ring_size)
{
	struct vigil_filter_maps *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	*out = m;
	if ((err = vigil_skel_open(filter_scan, &m->skel, pin_dir, ring_size)) ||
	    (err = vigil_skel_load(m->skel->skeleton)))
		return err;
	m->conf_fd = bpf_map__fd(m->skel->maps.vigil_filter_conf);
	m->keys_fd = bpf_map__fd(m->skel->maps.vigil_filter_keys);
	m->bin_fd = bpf_map__fd(m->skel->maps.vigil_filter_bin);
	m->hits_fd = bpf_map__fd(m->skel->maps.vigil_filter_hits);
	/* Counts are this agent's: an earlier agent's set stays in force,
	 * uncounted by name, until this one writes its own. */
	for (uint32_t i = 0; i < 2 * VIGIL_FILTER_SLOTS; i++)
		hits_zero(m->hits_fd, i);
	return 0;
}

void vigil_filter_close(struct vigil_filter_maps *m)
{
	if (!m)
		return;
	filter_scan_bpf__destroy(m->skel);
	free(m);
}
