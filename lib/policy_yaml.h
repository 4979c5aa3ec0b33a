/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the policy readers share, inside lib/ only: the document being read,
 * errors at a node's file:line:column, and the readers of values every rule
 * kind uses. lib/policy_parse.c reads files and network rules with them,
 * lib/policy_proc.c exec and file rules.
 */
#ifndef VIGIL_POLICY_YAML_H
#define VIGIL_POLICY_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>
#include "policy_parse.h"

#define LIST_MAX 256	/* values in one rule's list */

struct pctx {
	const char *file;
	yaml_document_t doc;
	char *err;
	size_t errlen;
	bool monitor;	/* the file's 'mode: monitor' */
};

int fail_at(struct pctx *c, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define fail(c, node, ...) fail_at(c, &(node)->start_mark, __VA_ARGS__)

const char *node_kind(const yaml_node_t *n);
const char *scalar(const yaml_node_t *n);
int want_scalar(struct pctx *c, yaml_node_t *n, const char *key);

/* A name from a table (ending with {}); the error lists what is accepted. */
struct word {
	const char *name;
	unsigned value;
};
int want_word(struct pctx *c, yaml_node_t *n, const char *key, const struct word *w,
	      unsigned *out);
/* An action of the catalogue that rules of kind (enum vigil_action_kinds)
 * take; another kind's action is refused by name. */
int want_action(struct pctx *c, yaml_node_t *n, unsigned kind, unsigned *out);
/* "post, nopost, signal or sigkill": the actions of kind. */
const char *action_names(char *out, size_t len, unsigned kind, const char *last);

/* A key that takes one value or a list: calls each(value) for every item. */
typedef int (*item_fn)(struct pctx *c, yaml_node_t *n, void *arr, unsigned i);
int parse_list(struct pctx *c, yaml_node_t *n, const char *key, size_t item_size,
	       item_fn each, void **arr, unsigned *count);
bool has_control(const char *s);
int parse_cgroup(struct pctx *c, yaml_node_t *n, char **out);
int check_rule_name(struct pctx *c, yaml_node_t *n, char *name);
/* The name of a rule or filter that gives none: "<file's name>:<line>",
 * the file's name cut so that the line always fits. */
void default_rule_name(char name[VIGIL_RULE_NAME_MAX], const char *file, unsigned line);

/* lib/policy_proc.c: "1000" or "1000-1999" into [lo, hi]. */
int parse_id_range(struct pctx *c, yaml_node_t *n, const char *key, uint32_t *lo, uint32_t *hi);
/* lib/policy_proc.c: a rule with 'on:' (an exec or file rule) into r. */
int parse_proc_rule(struct pctx *c, yaml_node_t *n, struct vigil_prule_spec *r);
void proc_rule_free(struct vigil_prule_spec *r);

/* lib/policy_redact.c: the `redact:` section into *out. */
int parse_redact(struct pctx *c, yaml_node_t *n, struct vigil_redact_policy **out);

/* lib/policy_filter.c: the `filters:` list, appended to *arr (*n of them,
 * at most room more); the names must differ from those in taken[ntaken]. */
int parse_filters(struct pctx *c, yaml_node_t *n, struct vigil_filter_spec **arr, unsigned *count,
		  unsigned room, const struct vigil_filter_spec *taken, unsigned ntaken);
void filter_spec_free(struct vigil_filter_spec *f);

#endif
