// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Exec and file rules (docs/policy.md, "Process and file rules"): a rule
 * with 'on:' names what it is on (exec; open, openat, openat2, creat), the
 * selectors it matches with, and one action. A verb is a word here and a
 * number in vigil/proc_policy.h: the verbs to come (unlink, rename, ...)
 * are new words, and a rate limit a new key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_yaml.h"

static const struct word verbs[] = {
	{ "exec", VIGIL_VERB_EXEC }, { "open", VIGIL_VERB_OPEN }, { "openat", VIGIL_VERB_OPENAT },
	{ "openat2", VIGIL_VERB_OPENAT2 }, { "creat", VIGIL_VERB_CREAT }, {}
};

const char *vigil_verb_name(unsigned v)
{
	for (const struct word *w = verbs; w->name; w++)
		if (w->value == v)
			return w->name;
	return "?";
}

static const struct word intents[] = {
	{ "read", VIGIL_INTENT_READ }, { "write", VIGIL_INTENT_WRITE },
	{ "create", VIGIL_INTENT_CREATE }, { "truncate", VIGIL_INTENT_TRUNCATE }, {}
};

/* The operators of each string selector, by enum vigil_pstr_op: binaries
 * take Tetragon's matchBinaries words, paths its matchArgs words. */
static const struct word bin_ops[] = {
	{ "in", VIGIL_OP_EQ }, { "not_in", VIGIL_OP_NOT_EQ }, { "prefix", VIGIL_OP_PREFIX },
	{ "not_prefix", VIGIL_OP_NOT_PREFIX }, { "postfix", VIGIL_OP_POSTFIX },
	{ "not_postfix", VIGIL_OP_NOT_POSTFIX }, {}
};
static const struct word path_ops[] = {
	{ "equal", VIGIL_OP_EQ }, { "not_equal", VIGIL_OP_NOT_EQ }, { "prefix", VIGIL_OP_PREFIX },
	{ "not_prefix", VIGIL_OP_NOT_PREFIX }, { "postfix", VIGIL_OP_POSTFIX },
	{ "not_postfix", VIGIL_OP_NOT_POSTFIX }, {}
};

/* A container id matches when it starts with one listed: the whole id or
 * its first digits, as `docker ps` shows 12. */
static const struct word cid_ops[] = {
	{ "in", VIGIL_OP_PREFIX }, { "not_in", VIGIL_OP_NOT_PREFIX }, {}
};

struct str_item_ctx {
	unsigned op;
	const char *key;
};
static struct str_item_ctx item_ctx;	/* parse_list's callback takes no context */

/* A pattern: at most an LPM key's bytes; a whole path or a prefix is
 * absolute and written as the kernel writes paths ('.', '..' and '//'
 * never appear in a path the hooks see, so a pattern with them would
 * match nothing). A postfix is any tail. */
static int pattern_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	const char *s = scalar(n);
	size_t len = strlen(s);
	bool tail = item_ctx.op == VIGIL_OP_POSTFIX || item_ctx.op == VIGIL_OP_NOT_POSTFIX;

	if (!len)
		return fail(c, n, "'%s': an empty pattern", item_ctx.key);
	if (len > VIGIL_PSTR_MAX)
		return fail(c, n, "'%s': a pattern of %zu bytes; at most %d (an LPM key)",
			    item_ctx.key, len, VIGIL_PSTR_MAX);
	if (has_control(s))
		return fail(c, n, "'%s': a control character in the pattern", item_ctx.key);
	if (!tail && s[0] != '/')
		return fail(c, n, "'%s': a relative path; the hooks see absolute paths "
			    "(as the process sees them up to its root)", item_ctx.key);
	if (!tail && (strstr(s, "//") || strstr(s, "/./") || strstr(s, "/../") ||
		      (len >= 2 && !strcmp(s + len - 2, "/.")) ||
		      (len >= 3 && !strcmp(s + len - 3, "/.."))))
		return fail(c, n, "'%s': '//', '.' and '..' never appear in a path the hooks "
			    "see: write the path as it resolves", item_ctx.key);
	((char **)arr)[i] = strdup(s);
	return ((char **)arr)[i] ? 0 : -ENOMEM;
}

/* A container id or its first digits, lowercase hex as runtimes name
 * cgroups; Kubernetes' containerID form (containerd://ID) is taken too. */
static int container_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	const char *s = scalar(n), *sep = strstr(s, "://");
	size_t len;

	if (sep)
		s = sep + 3;
	len = strlen(s);
	if (len < VIGIL_CID_MIN || len > VIGIL_CID_LEN || strspn(s, "0123456789abcdef") != len)
		return fail(c, n, "'container': not a container id: %d to %d lowercase hex digits "
			    "(the whole id, or its first digits as docker ps shows them)",
			    VIGIL_CID_MIN, VIGIL_CID_LEN);
	((char **)arr)[i] = strdup(s);
	return ((char **)arr)[i] ? 0 : -ENOMEM;
}

static int parse_strings(struct pctx *c, yaml_node_t *n, const char *key, const struct word *ops,
			 struct vigil_pstr_sel *sel)
{
	bool cid = ops == cid_ops;

	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "'%s' is a mapping of operators to patterns (%s: [...]), not %s",
			    key, ops[0].name, node_kind(n));
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, pr->value);
		unsigned op;
		int err = want_word(c, k, "operator", ops, &op);

		if (err)
			return err;
		if (sel->n[op])
			return fail(c, k, "'%s' given twice in '%s'", scalar(k), key);
		item_ctx = (struct str_item_ctx){ .op = op, .key = key };
		err = parse_list(c, v, key, sizeof(char *), cid ? container_item : pattern_item,
				 (void **)&sel->vals[op], &sel->n[op]);
		if (err)
			return err;
	}
	if (!n->data.mapping.pairs.top || n->data.mapping.pairs.top == n->data.mapping.pairs.start)
		return fail(c, n, "'%s' names no operator", key);
	return 0;
}

static unsigned u32_of(const char *s, const char **end, bool *ok)
{
	unsigned long v;
	char *e;

	*ok = *s >= '0' && *s <= '9';
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || v > 0xfffffffeul)
		*ok = false;
	*end = e;
	return v;
}

/* "1000" or "1000-1999". */
int parse_id_range(struct pctx *c, yaml_node_t *n, const char *key, uint32_t *lo, uint32_t *hi)
{
	const char *end;
	bool ok;
	int err = want_scalar(c, n, key);

	if (err)
		return err;
	*lo = *hi = u32_of(scalar(n), &end, &ok);
	if (ok && *end == '-')
		*hi = u32_of(end + 1, &end, &ok);
	if (!ok || *end || *lo > *hi)
		return fail(c, n, "bad %s: expected a number or a range like 1000-1999", key);
	return 0;
}

static int parse_namespaces(struct pctx *c, yaml_node_t *n, struct vigil_prule_spec *r)
{
	static const struct word kinds[] = {
		{ "pid", VIGIL_PNS_PID }, { "mnt", VIGIL_PNS_MNT }, { "net", VIGIL_PNS_NET }, {}
	};
	static const struct word which[] = { { "host", 1 }, { "not_host", 0 }, {} };

	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "'namespaces' is a mapping (pid: host, net: not_host), not %s",
			    node_kind(n));
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, pr->value);
		unsigned ns, host;
		int err;

		if ((err = want_word(c, k, "namespace", kinds, &ns)) ||
		    (err = want_word(c, v, "namespace value", which, &host)))
			return err;
		if (r->ns_mask & ns)
			return fail(c, k, "'%s' given twice in 'namespaces'", scalar(k));
		r->ns_mask |= ns;
		if (host)
			r->ns_host |= ns;
	}
	return 0;
}

static int verb_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	return want_word(c, n, "verb", verbs, &((unsigned *)arr)[i]);
}

static int intent_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	return want_word(c, n, "intent", intents, &((unsigned *)arr)[i]);
}

/* A key's list of words, ORed into *bits. */
static int parse_bits(struct pctx *c, yaml_node_t *n, const char *key, item_fn each, bool shift,
		      uint32_t *bits)
{
	unsigned *v = NULL, count = 0;
	int err = parse_list(c, n, key, sizeof(unsigned), each, (void **)&v, &count);

	for (unsigned i = 0; i < count && !err; i++)
		*bits |= shift ? 1u << v[i] : v[i];
	free(v);
	return err;
}

enum {
	P_NAME, P_ON, P_ACTION, P_SIGNAL, P_BINARY, P_PARENT, P_PATH, P_INTENT, P_UID, P_EUID,
	P_CGROUP, P_CONTAINER, P_NS, P_MAX
};
static const char *const pkeys[P_MAX] = {
	"name", "on", "action", "signal", "binary", "parent_binary", "path", "intent", "uid",
	"euid", "cgroup", "container", "namespaces",
};

/* The keys' nodes, each once, or an error at the unknown or repeated one. */
static int collect_keys(struct pctx *c, yaml_node_t *n, yaml_node_t **key, yaml_node_t **val)
{
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pr->key);
		int i = 0;

		if (k->type != YAML_SCALAR_NODE)
			return fail(c, k, "a rule's keys are words, not %s", node_kind(k));
		while (i < P_MAX && strcmp(scalar(k), pkeys[i]))
			i++;
		if (i == P_MAX)
			return fail(c, k, "unknown key in an exec or file rule (known: name, on, "
				    "action, signal, binary, parent_binary, path, intent, uid, euid, "
				    "cgroup, container, namespaces)");
		if (key[i])
			return fail(c, k, "'%s' given twice in one rule (first at line %zu)",
				    pkeys[i], key[i]->start_mark.line + 1);
		key[i] = k;
		val[i] = yaml_document_get_node(&c->doc, pr->value);
	}
	return 0;
}

int parse_proc_rule(struct pctx *c, yaml_node_t *n, struct vigil_prule_spec *r)
{
	yaml_node_t *key[P_MAX] = {}, *val[P_MAX] = {};
	unsigned kind, v;
	char list[96];
	int err;

	r->line = n->start_mark.line + 1;
	r->monitor = c->monitor;
	if ((err = collect_keys(c, n, key, val)))
		return err;
	if ((err = parse_bits(c, val[P_ON], "on", verb_item, true, &r->verbs)))
		return err;
	if ((r->verbs & (1u << VIGIL_VERB_EXEC)) && r->verbs != 1u << VIGIL_VERB_EXEC)
		return fail(c, val[P_ON], "'on' mixes exec with file verbs: write two rules");
	kind = r->verbs & VIGIL_VERBS_FILE ? VIGIL_KIND_FILE : VIGIL_KIND_EXEC;
	if (key[P_NAME] && (err = check_rule_name(c, val[P_NAME], r->name)))
		return err;
	if (!key[P_ACTION])
		return fail(c, n, "rule has no 'action' (%s)",
			    action_names(list, sizeof(list), kind, " or "));
	if ((err = want_action(c, val[P_ACTION], kind, &v)))
		return err;
	r->action = v;
	if (r->action == VIGIL_ACT_SIGKILL)
		r->signal = 9;
	if (key[P_SIGNAL] && r->action != VIGIL_ACT_SIGNAL)
		return fail(c, key[P_SIGNAL], "'signal' goes with 'action: signal'");
	if (r->action == VIGIL_ACT_SIGNAL) {
		const char *end;
		bool ok;

		if (!key[P_SIGNAL])
			return fail(c, val[P_ACTION], "action signal needs 'signal: N' (1-64)");
		if ((err = want_scalar(c, val[P_SIGNAL], "signal")))
			return err;
		v = u32_of(scalar(val[P_SIGNAL]), &end, &ok);
		if (!ok || *end || v < 1 || v > 64)
			return fail(c, val[P_SIGNAL], "bad signal: expected a number 1-64");
		r->signal = v;
	}
	if (key[P_BINARY] &&
	    (err = parse_strings(c, val[P_BINARY], "binary", bin_ops, &r->str[VIGIL_PSTR_BINARY])))
		return err;
	if (key[P_PARENT] && (err = parse_strings(c, val[P_PARENT], "parent_binary", bin_ops,
						  &r->str[VIGIL_PSTR_PARENT])))
		return err;
	if (kind == VIGIL_KIND_EXEC && key[P_PATH])
		return fail(c, key[P_PATH], "'path' is for file rules; an exec rule names the "
			    "binary ('binary')");
	if (kind == VIGIL_KIND_EXEC && key[P_INTENT])
		return fail(c, key[P_INTENT], "'intent' is for file rules");
	if (key[P_PATH] &&
	    (err = parse_strings(c, val[P_PATH], "path", path_ops, &r->str[VIGIL_PSTR_PATH])))
		return err;
	if (key[P_INTENT] && (err = parse_bits(c, val[P_INTENT], "intent", intent_item, false,
					       &r->intent)))
		return err;
	if (key[P_UID] && (err = parse_id_range(c, val[P_UID], "uid", &r->uid_lo, &r->uid_hi)))
		return err;
	if (key[P_EUID] && (err = parse_id_range(c, val[P_EUID], "euid", &r->euid_lo, &r->euid_hi)))
		return err;
	r->has_uid = key[P_UID];
	r->has_euid = key[P_EUID];
	if (key[P_CGROUP] && (err = parse_cgroup(c, val[P_CGROUP], &r->cgroup)))
		return err;
	if (key[P_CONTAINER] && (err = parse_strings(c, val[P_CONTAINER], "container", cid_ops,
						     &r->str[VIGIL_PSTR_CONTAINER])))
		return err;
	if (key[P_NS] && (err = parse_namespaces(c, val[P_NS], r)))
		return err;
	if (!r->name[0])
		default_rule_name(r->name, c->file, r->line);
	return 0;
}

void proc_rule_free(struct vigil_prule_spec *r)
{
	for (int s = 0; s < VIGIL_PSTR_NUM; s++)
		for (int op = 0; op < VIGIL_OP_NUM; op++) {
			for (unsigned i = 0; i < r->str[s].n[op]; i++)
				free(r->str[s].vals[op][i]);
			free(r->str[s].vals[op]);
		}
	free(r->cgroup);
	memset(r, 0, sizeof(*r));
}
