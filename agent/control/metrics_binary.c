// SPDX-License-Identifier: GPL-2.0
/* The binary label's counts (metrics_binary.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <vigil/events.h>
#include "control/metrics_binary.h"
#include "enforce/rule_maps.h"
#include "event_format.h"
#include "fnv.h"
#include "prom.h"

/* A binary's label value: printable ASCII kept, any other byte as \xHH (a
 * label value must be UTF-8, and one a process chose is hostile), cut at
 * LABEL_MAX. Values are compared as written, so two binaries that write
 * the same (cut alike) share one series, never make two of the same. */
#define LABEL_MAX 256
#define BIN_UNKNOWN 0
#define BIN_OTHER 1
#define BIN_NAMED 2
/* Rules kept by name: those in force, and as many again that left with a
 * reload (their counts are dropped when room is needed). */
#define RULES_KEPT (2 * VIGIL_RULES_MAX)

struct bin {
	char *name;
	uint32_t len, hash;
	uint64_t events[VIGIL_EV_TYPE_MAX + 1];
};

struct rule_counts {
	char name[VIGIL_RULE_NAME_MAX + 1];
	uint64_t *hits;		/* per bin; NULL: a free entry */
};

struct vigil_metrics_binary {
	unsigned max, n;		/* named binaries: the bound, and so far */
	struct bin *bins;		/* unknown, other, then the named: max + 2 */
	uint32_t *index;		/* open addressing: bin + 1, 0 free */
	unsigned index_mask;
	const struct vigil_policy_state *policy;
	struct rule_counts rules[RULES_KEPT];
};

static const char *const reserved[] = { [BIN_UNKNOWN] = "unknown", [BIN_OTHER] = "other" };

int vigil_metrics_binary_new(struct vigil_metrics_binary **out, unsigned max,
			     const struct vigil_policy_state *policy)
{
	struct vigil_metrics_binary *m = calloc(1, sizeof(*m));
	unsigned n = 1;

	while (n < 2 * max)
		n <<= 1;
	if (!m || !(m->bins = calloc(max + BIN_NAMED, sizeof(*m->bins))) ||
	    !(m->index = calloc(n, sizeof(*m->index)))) {
		vigil_metrics_binary_free(m);
		return -ENOMEM;
	}
	m->max = max;
	m->index_mask = n - 1;
	m->policy = policy;
	*out = m;
	return 0;
}

void vigil_metrics_binary_free(struct vigil_metrics_binary *m)
{
	if (!m)
		return;
	for (unsigned i = 0; m->bins && i < m->n; i++)
		free(m->bins[BIN_NAMED + i].name);
	for (unsigned i = 0; i < RULES_KEPT; i++)
		free(m->rules[i].hits);
	free(m->bins);
	free(m->index);
	free(m);
}

static size_t label_of(char out[LABEL_MAX + 1], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			if (len + 1 > LABEL_MAX)
				break;
			out[len++] = c;
			continue;
		}
		if (len + 4 > LABEL_MAX)
			break;
		out[len++] = '\\';
		out[len++] = 'x';
		out[len++] = hex[c >> 4];
		out[len++] = hex[c & 15];
	}
	out[len] = 0;
	return len;
}

/* The bin of the process p names: its own, found or given now, or one of
 * the reserved two. */
static unsigned bin_of(struct vigil_metrics_binary *m, struct vigil_formatter *f,
		       const struct vigil_proc *p)
{
	const struct vigil_proc_entry *e = p ? vigil_proc_cache_find(&f->cache, p->pid, p->exec_ktime)
					     : NULL;
	char label[LABEL_MAX + 1];
	uint32_t h, i;
	size_t len;

	if (!e || !e->binary_len)
		return BIN_UNKNOWN;
	len = label_of(label, e->binary, e->binary_len);
	h = vigil_fnv1a(label, len, VIGIL_FNV_START);
	for (i = h & m->index_mask; m->index[i]; i = (i + 1) & m->index_mask) {
		const struct bin *b = &m->bins[m->index[i] - 1];

		if (b->hash == h && b->len == len && !memcmp(b->name, label, len))
			return m->index[i] - 1;
	}
	if (m->n >= m->max || !strcmp(label, reserved[BIN_UNKNOWN]) ||
	    !strcmp(label, reserved[BIN_OTHER]))
		return BIN_OTHER;
	if (!(m->bins[BIN_NAMED + m->n].name = strdup(label)))
		return BIN_OTHER;
	m->bins[BIN_NAMED + m->n].len = len;
	m->bins[BIN_NAMED + m->n].hash = h;
	m->index[i] = BIN_NAMED + m->n + 1;	/* the table is never more than half full */
	return BIN_NAMED + m->n++;
}

static const struct vigil_rule *rule_in_force(const struct vigil_policy_state *s, uint32_t id)
{
	for (unsigned i = 0; i < s->in_force.n_rules; i++)
		if (s->slot[i] == id)
			return &s->in_force.rules[i];
	return NULL;
}

static bool in_force(const struct vigil_policy_state *s, const char *name)
{
	for (unsigned i = 0; i < s->in_force.n_rules; i++)
		if (!strcmp(s->in_force.rules[i].name, name))
			return true;
	return false;
}

/* The counts of rule name, made on its first hit; room is taken from a
 * rule no longer in force when need be (a walk of the policy per entry,
 * on a rule's first hit only). NULL: none to be had. */
static uint64_t *rule_hits(struct vigil_metrics_binary *m, const char *name)
{
	struct rule_counts *r = NULL;

	for (unsigned i = 0; i < RULES_KEPT; i++)
		if (m->rules[i].hits && !strcmp(m->rules[i].name, name))
			return m->rules[i].hits;
	for (unsigned i = 0; i < RULES_KEPT && !r; i++)
		if (!m->rules[i].hits || !in_force(m->policy, m->rules[i].name))
			r = &m->rules[i];
	if (!r)
		return NULL;
	free(r->hits);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->hits = calloc(m->max + BIN_NAMED, sizeof(*r->hits));
	return r->hits;
}

void vigil_metrics_binary_record(void *ctx, struct vigil_formatter *f, const void *rec)
{
	struct vigil_metrics_binary *m = ctx;
	unsigned type = ((const struct vigil_hdr *)rec)->type & VIGIL_EV_TYPE_MAX;
	const struct vigil_proc *p = vigil_event_proc(rec);
	unsigned bin = p ? bin_of(m, f, p) : BIN_UNKNOWN;

	/* A record that names no process counts without the label: counts[]
	 * less the bins'. */
	if (p)
		m->bins[bin].events[type]++;
	if (type == VIGIL_EV_ENFORCE && m->policy) {
		const struct vigil_enforce *ev = rec;
		const struct vigil_rule *r = rule_in_force(m->policy, ev->rule_id);
		uint64_t *hits = r ? rule_hits(m, r->name) : NULL;

		if (hits) {
			hits[bin]++;
			hits[BIN_UNKNOWN] += ev->suppressed;
		}
	}
}

static const char *bin_name(const struct vigil_metrics_binary *m, unsigned i)
{
	return i < BIN_NAMED ? reserved[i] : m->bins[i].name;
}

void vigil_metrics_binary_events(struct vigil_buf *b, const struct vigil_metrics_binary *m,
				 const uint64_t *counts)
{
	for (unsigned t = 0; t <= VIGIL_EV_TYPE_MAX; t++) {
		const char *type = vigil_event_kind_name(t);
		uint64_t labelled = 0;

		if (!type)
			continue;
		for (unsigned i = 0; i < BIN_NAMED + m->n; i++) {
			if (!m->bins[i].events[t])
				continue;
			labelled += m->bins[i].events[t];
			vigil_prom_sample(b, "vigil_events_total", m->bins[i].events[t], "type", type,
					  "binary", bin_name(m, i), NULL);
		}
		if (counts[t] > labelled || !labelled)
			vigil_prom_sample(b, "vigil_events_total", counts[t] - labelled, "type", type,
					  NULL);
	}
}

void vigil_metrics_binary_policy(struct vigil_buf *b, const struct vigil_metrics_binary *m)
{
	const struct vigil_policy *p = &m->policy->in_force;

	for (unsigned r = 0; r < p->n_rules; r++) {
		const char *action = vigil_policy_action_name(p->rules[r].action);
		const uint64_t *hits = NULL;
		bool any = false;

		for (unsigned i = 0; i < RULES_KEPT && !hits; i++)
			if (m->rules[i].hits && !strcmp(m->rules[i].name, p->rules[r].name))
				hits = m->rules[i].hits;
		for (unsigned i = 0; hits && i < BIN_NAMED + m->n; i++) {
			if (!hits[i])
				continue;
			any = true;
			vigil_prom_sample(b, "vigil_policy_events_total", hits[i], "policy",
					  p->rules[r].name, "action", action, "binary", bin_name(m, i),
					  NULL);
		}
		if (!any)
			vigil_prom_sample(b, "vigil_policy_events_total", 0, "policy", p->rules[r].name,
					  "action", action, "binary", "unknown", NULL);
	}
}
