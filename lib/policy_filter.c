// SPDX-License-Identifier: GPL-2.0
/*
 * A policy's `filters:` list (docs/policy.md, "Filters"): export filters,
 * checked whole like the rules and swapped with them
 * (agent/core/filter_maps.c). Only reads and checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_yaml.h"

/* The kinds a filter may drop. Records of the agent's own health and of
 * policy decisions are not here: they are never filtered. */
static const struct word kinds[] = {
	{ "exec", VIGIL_FK_EXEC }, { "exit", VIGIL_FK_EXIT }, { "fork", VIGIL_FK_FORK },
	{ "connect", VIGIL_FK_CONNECT }, { "accept", VIGIL_FK_ACCEPT },
	{ "listen", VIGIL_FK_LISTEN }, { "close", VIGIL_FK_CLOSE }, { "reset", VIGIL_FK_RESET },
	{}
};

static const char *const never[] = {
	"tamper", "heartbeat", "blind", "loss", "throttle", "enforce", "policy_hit",
	"report_proc", "report_remote", "report_end", NULL
};

const char *vigil_filter_kind_name(unsigned kind)
{
	for (const struct word *w = kinds; w->name; w++)
		if (w->value == kind)
			return w->name;
	return "?";
}

static int kind_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	if (n->type == YAML_SCALAR_NODE)
		for (const char *const *k = never; *k; k++)
			if (!strcmp(scalar(n), *k))
				return fail(c, n, "'%s' records are never filtered", *k);
	return want_word(c, n, "kind", kinds, &((unsigned *)arr)[i]);
}

/* A path as an exec event names it: absolute, no control characters. */
static int path_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	const char *s;
	int err = want_scalar(c, n, "binary");

	if (err)
		return err;
	s = scalar(n);
	if (s[0] != '/' || strlen(s) > VIGIL_FILTER_BIN_MAX || has_control(s))
		return fail(c, n, "bad binary: an absolute path of at most %d bytes, without "
			    "control characters", VIGIL_FILTER_BIN_MAX);
	return (((char **)arr)[i] = strdup(s)) ? 0 : -ENOMEM;
}

static int parse_netns(struct pctx *c, yaml_node_t *n, char **out)
{
	const char *s;
	int err = want_scalar(c, n, "netns");

	if (err)
		return err;
	s = scalar(n);
	if (!*s || strlen(s) > 200 || (s[0] != '/' && strchr(s, '/')) || !strcmp(s, ".") ||
	    !strcmp(s, "..") || has_control(s))
		return fail(c, n, "bad network namespace: expected a name under /run/netns or an "
			    "absolute path, without control characters");
	return (*out = strdup(s)) ? 0 : -ENOMEM;
}

enum { F_NAME, F_ACTION, F_KINDS, F_BINARY, F_PREFIX, F_UID, F_CGROUP, F_NETNS, F_MAX };
static const char *const fkeys[F_MAX] = {
	"name", "action", "kinds", "binary", "binary_prefix", "uid", "cgroup", "netns",
};

static int parse_filter(struct pctx *c, yaml_node_t *n, struct vigil_filter_spec *f)
{
	static const struct word actions[] = { { "deny", 0 }, { "allow", 1 }, {} };
	yaml_node_t *key[F_MAX] = {}, *val[F_MAX] = {};
	unsigned *kv = NULL, nk = 0, allow;
	int err;

	f->line = n->start_mark.line + 1;
	default_rule_name(f->name, c->file, f->line);
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "a filter is a mapping (name, action, kinds, binary, "
			    "binary_prefix, uid, cgroup, netns), not %s", node_kind(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		int i = 0;

		while (k->type == YAML_SCALAR_NODE && i < F_MAX && strcmp(scalar(k), fkeys[i]))
			i++;
		if (k->type != YAML_SCALAR_NODE || i == F_MAX)
			return fail(c, k, "unknown key in a filter (known: name, action, kinds, "
				    "binary, binary_prefix, uid, cgroup, netns)");
		if (key[i])
			return fail(c, k, "'%s' given twice in one filter", fkeys[i]);
		key[i] = k;
		val[i] = yaml_document_get_node(&c->doc, p->value);
	}
	if (!key[F_ACTION])
		return fail(c, n, "a filter needs 'action: deny' or 'action: allow'");
	if ((err = want_word(c, val[F_ACTION], "action", actions, &allow)))
		return err;
	f->allow = allow;
	if (key[F_NAME]) {
		if ((err = check_rule_name(c, val[F_NAME], f->name)))
			return err;
		if (!strcmp(f->name, "not_allowed"))
			return fail(c, val[F_NAME], "'not_allowed' names what allow filters drop: "
				    "choose another name");
	}
	if (key[F_KINDS]) {
		err = parse_list(c, val[F_KINDS], "kinds", sizeof(unsigned), kind_item, (void **)&kv,
				 &nk);
		for (unsigned i = 0; i < nk && !err; i++)
			f->kinds |= 1u << kv[i];
		free(kv);
		if (err)
			return err;
	} else {
		f->kinds = (1u << VIGIL_FK_NUM) - 1;
	}
	if (key[F_BINARY] && (err = parse_list(c, val[F_BINARY], "binary", sizeof(char *),
					       path_item, (void **)&f->binary, &f->n_binary)))
		return err;
	if (key[F_PREFIX] &&
	    (err = parse_list(c, val[F_PREFIX], "binary_prefix", sizeof(char *), path_item,
			      (void **)&f->binary_prefix, &f->n_binary_prefix)))
		return err;
	if (key[F_UID] &&
	    (err = parse_id_range(c, val[F_UID], "uid", &f->uid_lo, &f->uid_hi)))
		return err;
	/* Each uid is a map key (agent/enforce/filter_maps.c): a range past
	 * what all filters may name is refused here, where it is written. */
	if (key[F_UID] && (uint64_t)f->uid_hi - f->uid_lo >= VIGIL_FILTER_UIDS_MAX)
		return fail(c, val[F_UID], "bad uid: a range of at most %d uids",
			    VIGIL_FILTER_UIDS_MAX);
	f->has_uid = key[F_UID];
	if (key[F_CGROUP] && (err = parse_cgroup(c, val[F_CGROUP], &f->cgroup)))
		return err;
	if (key[F_NETNS] && (err = parse_netns(c, val[F_NETNS], &f->netns)))
		return err;
	return 0;
}

static bool name_taken(const struct vigil_filter_spec *a, unsigned n, const char *name,
		       const struct vigil_filter_spec *self)
{
	for (unsigned i = 0; i < n; i++)
		if (&a[i] != self && !strcmp(a[i].name, name))
			return true;
	return false;
}

int parse_filters(struct pctx *c, yaml_node_t *n, struct vigil_filter_spec **arr, unsigned *count,
		  unsigned room, const struct vigil_filter_spec *taken, unsigned ntaken)
{
	unsigned total;
	struct vigil_filter_spec *a;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "'filters' is a list of filters, not %s", node_kind(n));
	total = n->data.sequence.items.top - n->data.sequence.items.start;
	if (total > room)
		return fail(c, n, "too many filters: at most %d in force at once", VIGIL_FILTERS_MAX);
	if (!(a = calloc(total + 1, sizeof(*a))))
		return -ENOMEM;
	*arr = a;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *fn = yaml_document_get_node(&c->doc, *it);
		struct vigil_filter_spec *f = &a[(*count)++];
		int err = parse_filter(c, fn, f);

		if (err)
			return err;
		if (name_taken(a, *count, f->name, f) || name_taken(taken, ntaken, f->name, NULL))
			return fail(c, fn, "this filter's name '%s' is used by another filter",
				    f->name);
	}
	return 0;
}

void filter_spec_free(struct vigil_filter_spec *f)
{
	for (unsigned i = 0; i < f->n_binary; i++)
		free(f->binary[i]);
	for (unsigned i = 0; i < f->n_binary_prefix; i++)
		free(f->binary_prefix[i]);
	free(f->binary);
	free(f->binary_prefix);
	free(f->cgroup);
	free(f->netns);
	memset(f, 0, sizeof(*f));
}
