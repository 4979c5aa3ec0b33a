// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Policy files, read with libyaml's document API so every node keeps the
 * line and column it came from: an error names the exact place. A file is
 * read into a scratch policy and merged only when all of it is good, so a
 * refused file changes nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#include "policy_yaml.h"

/* Bounds on what one file may cost to read: the agent reads policies on
 * its event loop, so a file must not be able to hold it up. Parsing is
 * linear in the file's size once nesting is bounded (libyaml's scanner
 * is quadratic in depth), so these two bound the time a load can take. */
#define POLICY_FILE_MAX (1 << 20)
#define POLICY_DEPTH_MAX 32
/* Values (scalars, lists, mappings) in one file: 64 rules of 9 keys with
 * three lists of 256 are about 51000; the tree libyaml builds is bounded
 * by this, not by the file's size (1 MiB of "[]," made 100 MB of it). */
#define POLICY_NODES_MAX 65536
int fail_at(struct pctx *c, const yaml_mark_t *m, const char *fmt, ...)
{
	int n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->file, m->line + 1, m->column + 1);
	va_list ap;

	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE: return "a scalar";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_MAPPING_NODE: return "a mapping";
	default: return "nothing";
	}
}

const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

int want_scalar(struct pctx *c, yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE)
		return fail(c, n, "'%s' takes a single value, not %s", key, node_kind(n));
	if (strlen(scalar(n)) != n->data.scalar.length)
		return fail(c, n, "'%s' holds a NUL byte", key);
	return 0;
}

int want_word(struct pctx *c, yaml_node_t *n, const char *key, const struct word *w,
		     unsigned *out)
{
	char choices[128] = "";
	int err = want_scalar(c, n, key);

	if (err)
		return err;
	for (const struct word *i = w; i->name; i++) {
		if (!strcmp(scalar(n), i->name)) {
			*out = i->value;
			return 0;
		}
		snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices), "%s%s",
			 i == w ? "" : ", ", i->name);
	}
	for (const struct word *i = w; i->name; i++)
		if (!strcasecmp(scalar(n), i->name))
			return fail(c, n, "unknown %s '%s': words are lower case, '%s' (one of: %s)",
				    key, scalar(n), i->name, choices);
	return fail(c, n, "unknown %s (one of: %s)", key, choices);
}

/* The actions and what each asks of a rule, from their catalogue
 * (vigil/policy_actions.h). */
static const struct word actions[] = {
#define ACTION_WORD(id, value, name, cgroup, kinds) { #name, id },
	VIGIL_POLICY_ACTIONS(ACTION_WORD)
#undef ACTION_WORD
	{}
};

static enum vigil_action_cgroup action_cgroup(unsigned a)
{
	switch (a) {
#define ACTION_CGROUP(id, value, name, cgroup, kinds) case id: return cgroup;
	VIGIL_POLICY_ACTIONS(ACTION_CGROUP)
#undef ACTION_CGROUP
	}
	return VIGIL_ACT_CGROUP_NO;
}

static unsigned action_kinds(unsigned a)
{
	switch (a) {
#define ACTION_KINDS(id, value, name, cgroup, kinds) case id: return kinds;
	VIGIL_POLICY_ACTIONS(ACTION_KINDS)
#undef ACTION_KINDS
	}
	return 0;
}

/* "allow, drop or deny": the actions for a rule of kind whose cgroup use
 * is a bit of cgroups (1 << enum vigil_action_cgroup), the last joined by
 * last. */
static const char *action_list(char *out, size_t len, unsigned kind, unsigned cgroups,
			       const char *last)
{
	const struct word *w, *prev = NULL;
	size_t n = 0;

	out[0] = 0;
	for (w = actions; w->name; w++) {
		if (!(cgroups & 1u << action_cgroup(w->value)) || !(action_kinds(w->value) & kind))
			continue;
		if (prev)
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", prev->name);
		prev = w;
	}
	if (prev)
		snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? last : "", prev->name);
	return out;
}

const char *action_names(char *out, size_t len, unsigned kind, const char *last)
{
	return action_list(out, len, kind, ~0u, last);
}

int want_action(struct pctx *c, yaml_node_t *n, unsigned kind, unsigned *out)
{
	struct word mine[sizeof(actions) / sizeof(actions[0])] = {};
	unsigned k = 0;
	char list[128];

	/* Another kind's action is named as such; any other word is told
	 * this kind's actions (the first lookup's message is overwritten). */
	if (!want_word(c, n, "action", actions, out) && !(action_kinds(*out) & kind))
		return fail(c, n, "action %s is not for %s (%s)", scalar(n),
			    kind == VIGIL_KIND_NET ? "network rules" :
			    kind == VIGIL_KIND_EXEC ? "exec rules" : "file rules",
			    action_names(list, sizeof(list), kind, " or "));
	for (const struct word *w = actions; w->name; w++)
		if (action_kinds(w->value) & kind)
			mine[k++] = *w;
	return want_word(c, n, "action", mine, out);
}

static const struct word directions[] = {
	{ "ingress", VIGIL_DIR_INGRESS }, { "egress", VIGIL_DIR_EGRESS },
	{ "any", VIGIL_DIR_ANY }, {}
};
static const struct word protocols[] = {
	{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "udplite", IPPROTO_UDPLITE },
	{ "sctp", IPPROTO_SCTP }, { "dccp", IPPROTO_DCCP }, { "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 }, { "any", 0 }, {}
};

/* The protocols whose packets carry ports (at L4 offsets 0 and 2): the only
 * ones TC, XDP and the egress backstop read a port from (bpf/lib/pkt.bpf.h,
 * vigil_l4_port_hlen). */
static bool has_ports(unsigned proto)
{
	return !proto || proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
	       proto == IPPROTO_SCTP || proto == IPPROTO_DCCP;
}

static const char *word_name(const struct word *w, unsigned v)
{
	for (; w->name; w++)
		if (w->value == v)
			return w->name;
	return "?";
}

const char *vigil_policy_action_name(unsigned a) { return word_name(actions, a); }
const char *vigil_policy_dir_name(unsigned d) { return word_name(directions, d); }
const char *vigil_policy_proto_name(unsigned p) { return word_name(protocols, p); }

static int parse_u16(const char *s, const char **end, unsigned *out)
{
	unsigned long v;
	char *e;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &e, 10);
	if (errno || v > 65535)
		return -ERANGE;
	*out = v;
	*end = e;
	return 0;
}

/* One edit apart (a letter more, less or changed): a typo. */
static bool one_edit(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la < lb)
		return one_edit(b, a);
	if (la - lb > 1)
		return false;
	while (*b && *a == *b)
		a++, b++;
	return la == lb ? !strcmp(a + 1, b + 1) : !strcmp(a + 1, b);
}

/* " (did you mean 'port'?)" for a word one edit from a known one, or "". */
static const char *did_you_mean(const char *word, const char *const *known, unsigned n,
				char *out, size_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (known[i] && one_edit(word, known[i])) {
			snprintf(out, len, " (did you mean '%s'?)", known[i]);
			return out;
		}
	return "";
}

/* "22" or "8000-8100" */
static int parse_port(struct pctx *c, yaml_node_t *n, struct vigil_rule *r)
{
	const char *s, *end;
	unsigned lo, hi;
	int err = want_scalar(c, n, "port");

	if (err)
		return err;
	s = scalar(n);
	if (strchr(s, ' ') && strchr(s, '-'))
		return fail(c, n, "bad port range '%s': write it without spaces, like 8000-8100", s);
	if (parse_u16(s, &end, &lo))
		return fail(c, n, "bad port: expected a number 1-65535 or a range like 8000-8100");
	hi = lo;
	if (*end == '-' && parse_u16(end + 1, &end, &hi))
		return fail(c, n, "bad port range: the upper end is not a number 1-65535");
	if (*end)
		return fail(c, n, "bad port: expected a number 1-65535 or a range like 8000-8100");
	if (!lo)
		return fail(c, n, "bad port: port 0 matches nothing (leave 'port' out for any port)");
	if (lo > hi)
		return fail(c, n, "bad port range: the lower end is above the upper");
	r->port_lo = lo;
	r->port_hi = hi;
	return 0;
}

void vigil_cidr_format(const struct vigil_cidr *cidr, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(cidr->family, cidr->addr, a, sizeof(a));
	snprintf(out, len, "%s/%u", a, cidr->prefix);
}

static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

static int parse_cidr(struct pctx *c, yaml_node_t *n, struct vigil_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	const char *s = scalar(n), *end;
	unsigned prefix, max;
	int err = want_scalar(c, n, "cidr");

	if (err)
		return err;
	if (strlen(s) >= sizeof(buf))
		return fail(c, n, "bad CIDR: too long for an address and prefix length");
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->addr) == 1)
		out->family = AF_INET, max = 32;
	else if (inet_pton(AF_INET6, buf, out->addr) == 1)
		out->family = AF_INET6, max = 128;
	else
		return fail(c, n, "bad CIDR: expected an IPv4 or IPv6 address, optionally /prefix");
	prefix = max;
	if (slash && (parse_u16(slash + 1, &end, &prefix) || *end || prefix > max))
		return fail(c, n, "bad CIDR: the prefix length must be 0-%u", max);
	out->prefix = prefix;
	for (unsigned bit = prefix; bit < max; bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return fail(c, n, "bad CIDR: host bits set past /%u (a typo could widen the rule)",
				    prefix);
	/* The hooks see an IPv4-mapped peer (::ffff:a.b.c.d) as the IPv4
	 * address it maps: an IPv6 entry for it would never match. Such a
	 * block is kept as the IPv4 block it is. (A wider IPv6 block, ::/0
	 * say, matches native IPv6 only: docs/policy.md.) */
	if (out->family == AF_INET6 && prefix >= 96 && !memcmp(out->addr, v4mapped, 12)) {
		memmove(out->addr, out->addr + 12, 4);
		memset(out->addr + 4, 0, 12);
		out->family = AF_INET;
		out->prefix = prefix - 96;
	}
	return 0;
}

int parse_list(struct pctx *c, yaml_node_t *n, const char *key, size_t item_size,
		      item_fn each, void **arr, unsigned *count)
{
	yaml_node_item_t *it;
	unsigned total = 1, i = 0;
	int err;

	if (n->type == YAML_MAPPING_NODE)
		return fail(c, n, "'%s' takes a value or a list, not a mapping", key);
	if (n->type == YAML_SEQUENCE_NODE) {
		total = n->data.sequence.items.top - n->data.sequence.items.start;
		if (!total)
			return fail(c, n, "'%s' is an empty list (leave it out to match any)", key);
		if (total > LIST_MAX)
			return fail(c, n, "'%s' lists %u items; at most %d", key, total, LIST_MAX);
	}
	*arr = calloc(total, item_size);
	if (!*arr)
		return -ENOMEM;
	*count = total;
	if (n->type == YAML_SCALAR_NODE)
		return each(c, n, *arr, 0);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++, i++) {
		yaml_node_t *item = yaml_document_get_node(&c->doc, *it);

		if ((err = want_scalar(c, item, key)) || (err = each(c, item, *arr, i)))
			return err;
	}
	return 0;
}

/* Names that end up in replies, logs and paths: no control bytes. */
bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return true;
	return false;
}

static int cidr_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	return parse_cidr(c, n, (struct vigil_cidr *)arr + i);
}

static int ifname_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	const char *s = scalar(n);

	if (!*s || strlen(s) >= IFNAMSIZ || strchr(s, '/') || strchr(s, ' ') || has_control(s))
		return fail(c, n, "bad interface name: 1-%d bytes, no '/', space or control character",
			    IFNAMSIZ - 1);
	return (((char **)arr)[i] = strdup(s)) ? 0 : -ENOMEM;
}

static int netns_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	const char *s = scalar(n);

	/* A name under /run/netns (as `ip netns` makes), or an absolute path
	 * such as /proc/PID/ns/net; checked against the system on compile. */
	if (!*s || strlen(s) > 200 || (s[0] != '/' && strchr(s, '/')) || !strcmp(s, ".") ||
	    !strcmp(s, "..") || has_control(s))
		return fail(c, n, "bad network namespace: expected a name under /run/netns or an "
			    "absolute path, without control characters");
	return (((char **)arr)[i] = strdup(s)) ? 0 : -ENOMEM;
}

/* A cgroup path, absolute or below the mount. The hooks match a cgroup by
 * its id at the level it sits, so the path must name one directory one way:
 * '.', '..' and empty components ("a//b") are refused, where they are, and
 * one trailing '/' is dropped. */
int parse_cgroup(struct pctx *c, yaml_node_t *n, char **out)
{
	const char *s;
	size_t len;
	int err = want_scalar(c, n, "cgroup");

	if (err)
		return err;
	s = scalar(n);
	len = strlen(s);
	if (!len || len > 400)
		return fail(c, n, "bad cgroup: expected a path of 1-400 bytes");
	if (len > 1 && s[len - 1] == '/')
		len--;
	for (size_t i = 0; i < len; i++) {
		yaml_mark_t at = n->start_mark;
		size_t clen = strcspn(s + i, "/");

		at.column += i + (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? 0 : 1);
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return fail_at(c, &at, "bad cgroup: a control character in the path");
		if (i && s[i] == '/' && s[i - 1] == '/')
			return fail_at(c, &at, "bad cgroup: an empty path component ('//')");
		if ((i && s[i - 1] != '/') || s[i] != '.')
			continue;
		if (clen > len - i)
			clen = len - i;
		if (clen == 1 || (clen == 2 && s[i + 1] == '.'))
			return fail_at(c, &at, "bad cgroup: '.' and '..' path components are refused "
				       "(name the cgroup by its own path)");
	}
	*out = strndup(s, len);
	return *out ? 0 : -ENOMEM;
}

int check_rule_name(struct pctx *c, yaml_node_t *n, char *name)
{
	const char *s = scalar(n);
	int err = want_scalar(c, n, "name");

	if (err)
		return err;
	if (!*s || strlen(s) >= VIGIL_RULE_NAME_MAX)
		return fail(c, n, "rule name must be 1-%d bytes", VIGIL_RULE_NAME_MAX - 1);
	for (const char *p = s; *p; p++)
		if (*p <= ' ' || *p > '~')
			return fail(c, n, "rule name: printable characters only, no spaces");
	strcpy(name, s);
	return 0;
}

void default_rule_name(char name[VIGIL_RULE_NAME_MAX], const char *file, unsigned line)
{
	const char *slash = strrchr(file, '/');

	snprintf(name, VIGIL_RULE_NAME_MAX, "%.50s:%u", slash ? slash + 1 : file, line);
}

static int parse_rule(struct pctx *c, yaml_node_t *n, struct vigil_rule *r)
{
	enum { K_NAME, K_ACTION, K_DIR, K_PROTO, K_CIDR, K_PORT, K_IF, K_NETNS, K_CGROUP, K_MAX };
	static const char *const keys[K_MAX] = {
		"name", "action", "direction", "protocol", "cidr", "port", "interfaces", "netns",
		"cgroup",
	};
	yaml_node_t *seen[K_MAX] = {};
	yaml_node_pair_t *pair;
	char list[96], hint[64];
	unsigned v;
	int err = 0;

	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "a rule is a mapping (action:, cidr:, ...), not %s", node_kind(n));
	r->line = n->start_mark.line + 1;
	r->direction = VIGIL_DIR_ANY;
	r->port_hi = 65535;
	for (pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pair->key);
		yaml_node_t *val = yaml_document_get_node(&c->doc, pair->value);
		int key = 0;

		if (k->type != YAML_SCALAR_NODE)
			return fail(c, k, "a rule's keys are words, not %s", node_kind(k));
		while (key < K_MAX && strcmp(scalar(k), keys[key]))
			key++;
		if (key == K_MAX)
			return fail(c, k, "unknown key '%s' in a rule%s (known: name, action, direction, "
				    "protocol, cidr, port, interfaces, netns, cgroup)", scalar(k),
				    did_you_mean(scalar(k), keys, K_MAX, hint, sizeof(hint)));
		if (seen[key])
			return fail(c, k, "'%s' given twice in one rule (first at line %zu)",
				    keys[key], seen[key]->start_mark.line + 1);
		seen[key] = k;
		switch (key) {
		case K_NAME: err = check_rule_name(c, val, r->name); break;
		case K_ACTION:
			if (!(err = want_action(c, val, VIGIL_KIND_NET, &v)))
				r->action = v;
			break;
		case K_DIR:
			if (!(err = want_word(c, val, "direction", directions, &v)))
				r->direction = v;
			break;
		case K_PROTO:
			if (!(err = want_word(c, val, "protocol", protocols, &v)))
				r->protocol = v;
			break;
		case K_CIDR:
			err = parse_list(c, val, "cidr", sizeof(struct vigil_cidr), cidr_item,
					 (void **)&r->cidrs, &r->n_cidrs);
			break;
		case K_PORT: err = parse_port(c, val, r); break;
		case K_IF:
			err = parse_list(c, val, "interfaces", sizeof(char *), ifname_item,
					 (void **)&r->interfaces, &r->n_interfaces);
			break;
		case K_NETNS:
			err = parse_list(c, val, "netns", sizeof(char *), netns_item,
					 (void **)&r->netns, &r->n_netns);
			break;
		case K_CGROUP: err = parse_cgroup(c, val, &r->cgroup); break;
		}
		if (err)
			return err;
	}
	/* What the keys mean together. */
	if (!seen[K_ACTION])
		return fail(c, n, "rule has no 'action' (%s)",
			    action_names(list, sizeof(list), VIGIL_KIND_NET, " or "));
	if (seen[K_PORT] && !has_ports(r->protocol))
		return fail(c, seen[K_PORT], "'port' with protocol %s: only tcp, udp, udplite, sctp "
			    "and dccp have ports", vigil_policy_proto_name(r->protocol));
	if (action_cgroup(r->action) == VIGIL_ACT_CGROUP_MUST) {
		if (!seen[K_DIR])
			r->direction = VIGIL_DIR_EGRESS;
		if (r->direction != VIGIL_DIR_EGRESS)
			return fail(c, seen[K_DIR], "action %s refuses local connects: direction must be egress",
				    vigil_policy_action_name(r->action));
		if (!r->cgroup)
			return fail(c, n, "action %s needs 'cgroup' (the cgroup whose processes are refused)",
				    vigil_policy_action_name(r->action));
	}
	if (r->n_interfaces && !r->n_netns)
		return fail(c, seen[K_IF], "'interfaces' needs 'netns': the namespace they are in "
			    "(/proc/1/ns/net for the host's own)");
	if (r->cgroup && !seen[K_DIR])
		r->direction = VIGIL_DIR_EGRESS;	/* a cgroup scope is about local senders */
	if (r->cgroup && action_cgroup(r->action) == VIGIL_ACT_CGROUP_NO)
		return fail(c, seen[K_CGROUP], "'cgroup' applies to %s only",
			    action_list(list, sizeof(list), VIGIL_KIND_NET,
					1u << VIGIL_ACT_CGROUP_MAY | 1u << VIGIL_ACT_CGROUP_MUST, " and "));
	if (r->cgroup && r->direction != VIGIL_DIR_EGRESS)
		return fail(c, seen[K_CGROUP],
			    "'cgroup' refuses local connects and sends: the rule's direction must be egress");
	if (!r->name[0])
		default_rule_name(r->name, c->file, r->line);
	return 0;
}

static void rule_free(struct vigil_rule *r)
{
	for (unsigned i = 0; i < r->n_interfaces; i++)
		free(r->interfaces[i]);
	for (unsigned i = 0; i < r->n_netns; i++)
		free(r->netns[i]);
	free(r->interfaces);
	free(r->netns);
	free(r->cidrs);
	free(r->cgroup);
	memset(r, 0, sizeof(*r));
}

/* What one file adds, before it is merged: freed whole if refused. */
struct scratch {
	struct vigil_rule *rules;
	unsigned n, room;
	struct vigil_prule_spec *prules;
	unsigned np, proom;
	struct vigil_redact_policy *redact;
	struct vigil_filter_spec *filters;
	unsigned nf;
};

/* Is name taken, by a rule in force or one read before it here? Names are
 * one space for every kind: `vigil policy list` and events name rules. */
/* The file of the earlier rule named name (*line: its line), or NULL; a
 * rule of the file being read has no file yet: this_file. */
static const char *name_used(const struct vigil_policy *p, const struct scratch *s,
			     const char *name, const void *self, const char *this_file,
			     unsigned *line)
{
#define FIRST(r) do { *line = (r).line; return (r).file ? (r).file : this_file; } while (0)
	for (unsigned i = 0; i < p->n_rules; i++)
		if (!strcmp(p->rules[i].name, name))
			FIRST(p->rules[i]);
	for (unsigned i = 0; i < p->n_prules; i++)
		if (!strcmp(p->prules[i].name, name))
			FIRST(p->prules[i]);
	for (unsigned i = 0; i < s->n; i++)
		if (&s->rules[i] != self && !strcmp(s->rules[i].name, name))
			FIRST(s->rules[i]);
	for (unsigned i = 0; i < s->np; i++)
		if (&s->prules[i] != self && !strcmp(s->prules[i].name, name))
			FIRST(s->prules[i]);
#undef FIRST
	return NULL;
}

/* Does rule node n have an 'on' key (an exec or file rule)? */
static bool is_proc_rule(struct pctx *c, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE)
		return false;
	for (yaml_node_pair_t *pair = n->data.mapping.pairs.start; pair < n->data.mapping.pairs.top;
	     pair++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pair->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "on"))
			return true;
	}
	return false;
}

static int parse_mode(struct pctx *c, yaml_node_t *v)
{
	static const struct word modes[] = { { "enforce", 0 }, { "monitor", 1 }, {} };
	unsigned m;
	int err = want_word(c, v, "mode", modes, &m);

	c->monitor = m;
	return err;
}

/* Reads the document's rules into s. */
static int parse_doc(struct pctx *c, const struct vigil_policy *p, struct scratch *s)
{
	yaml_node_t *root = yaml_document_get_root_node(&c->doc), *list = NULL, *version = NULL;
	yaml_node_t *mode = NULL;
	yaml_node_pair_t *pair;
	yaml_node_item_t *it;
	yaml_mark_t start = {};

	if (!root)
		return fail_at(c, &start, "empty policy: expected a mapping with 'rules:'");
	if (root->type != YAML_MAPPING_NODE)
		return fail(c, root, "a policy is a mapping with 'rules:', not %s", node_kind(root));
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, pair->value);
		int err;

		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "rules")) {
			if (list)
				return fail(c, k, "'rules' given twice");
			list = v;
		} else if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "version")) {
			if (v->type != YAML_SCALAR_NODE || strcmp(scalar(v), "1"))
				return fail(c, v, "unsupported policy version (this vigil reads version 1)");
			if (version)
				return fail(c, k, "'version' given twice");
			version = k;
		} else if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "redact")) {
			if (s->redact || p->redact)
				return fail(c, k, "'redact' given twice (one file of a policy has it)");
			if ((err = parse_redact(c, v, &s->redact)))
				return err;
		} else if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "filters")) {
			if (s->filters)
				return fail(c, k, "'filters' given twice");
			if ((err = parse_filters(c, v, &s->filters, &s->nf,
						 VIGIL_FILTERS_MAX - p->n_filters, p->filters,
						 p->n_filters)))
				return err;
		} else if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "mode")) {
			if (mode)
				return fail(c, k, "'mode' given twice");
			mode = k;
			if ((err = parse_mode(c, v)))
				return err;
		} else {
			return fail(c, k, "unknown key at the top (known: version, mode, redact, "
				    "filters, rules)");
		}
	}
	if (!list && s->filters)
		return 0;	/* a file of filters only */
	if (!list)
		return fail(c, root, "no 'rules:' list");
	if (list->type != YAML_SEQUENCE_NODE)
		return fail(c, list, "'rules' is a list of rules, not %s", node_kind(list));
	for (it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
		yaml_node_t *rn = yaml_document_get_node(&c->doc, *it);
		const char *name, *first;
		unsigned first_line;
		const void *self;
		int err;

		if (is_proc_rule(c, rn)) {
			if (s->np >= s->proom)
				return fail(c, rn, "too many exec and file rules: at most %d in force "
					    "at once", VIGIL_PRULES_MAX);
			err = parse_proc_rule(c, rn, &s->prules[s->np]);
			self = &s->prules[s->np];
			name = s->prules[s->np++].name;	/* freed by the caller either way */
		} else {
			if (s->n >= s->room)
				return fail(c, rn, "too many rules: at most %d in force at once",
					    VIGIL_RULES_MAX);
			err = parse_rule(c, rn, &s->rules[s->n]);
			self = &s->rules[s->n];
			name = s->rules[s->n++].name;
		}
		if (err)
			return err;
		if ((first = name_used(p, s, name, self, c->file, &first_line)))
			return fail(c, rn, "this rule's name '%s' is used by an earlier rule, at %s:%u",
				    name, first, first_line);
	}
	if (mode && c->monitor && !s->np)
		return fail(c, mode, "'mode: monitor' is for exec and file rules, and this file "
			    "has none");
	return 0;
}

static int yaml_error(struct pctx *c, yaml_parser_t *parser)
{
	if (parser->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	const unsigned char *at = parser->input.string.start + parser->problem_mark.index;

	/* libyaml says "found character that cannot start any token". */
	if (at < parser->input.string.end && *at == '\t')
		return fail_at(c, &parser->problem_mark, "bad YAML: a tab; YAML indents with spaces");
	if (parser->context)
		return fail_at(c, &parser->problem_mark, "bad YAML: %s %s (begun at line %zu, column %zu)",
			       parser->problem, parser->context, parser->context_mark.line + 1,
			       parser->context_mark.column + 1);
	return fail_at(c, &parser->problem_mark, "bad YAML: %s", parser->problem ?: "unreadable");
}

/* A first pass over the events, before any tree is built: refuses nesting
 * deeper than POLICY_DEPTH_MAX as soon as it is met (libyaml's cost grows
 * with the square of the depth), more than POLICY_NODES_MAX values, a
 * second document, and the YAML features
 * a policy has no use for, each of which could make a rule mean something
 * other than it reads as: anchors and aliases, and explicit tags. */
static int check_events(struct pctx *c, const unsigned char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	unsigned depth = 0, docs = 0, nodes = 0;
	int err = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, text, len);
	while (!err) {
		const char *anchor = NULL, *tag = NULL;
		int implicit = 1;

		if (!yaml_parser_parse(&parser, &ev)) {
			err = yaml_error(c, &parser);
			break;
		}
		if ((ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		     ev.type == YAML_MAPPING_START_EVENT) && ++nodes > POLICY_NODES_MAX) {
			err = fail_at(c, &ev.start_mark, "more than %d values in one file",
				      POLICY_NODES_MAX);
			break;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				err = fail_at(c, &ev.start_mark,
					      "a second YAML document: put every rule under one 'rules:'");
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > POLICY_DEPTH_MAX)
				err = fail_at(c, &ev.start_mark, "nested deeper than %d levels",
					      POLICY_DEPTH_MAX);
			if (ev.type == YAML_SEQUENCE_START_EVENT)
				anchor = (char *)ev.data.sequence_start.anchor,
				tag = (char *)ev.data.sequence_start.tag,
				implicit = ev.data.sequence_start.implicit;
			else
				anchor = (char *)ev.data.mapping_start.anchor,
				tag = (char *)ev.data.mapping_start.tag,
				implicit = ev.data.mapping_start.implicit;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SCALAR_EVENT:
			anchor = (char *)ev.data.scalar.anchor;
			tag = (char *)ev.data.scalar.tag;
			implicit = ev.data.scalar.plain_implicit || ev.data.scalar.quoted_implicit;
			break;
		case YAML_ALIAS_EVENT:
			anchor = (char *)ev.data.alias.anchor;
			break;
		default:
			break;
		}
		if (!err && anchor)
			err = fail_at(c, &ev.start_mark, "YAML anchors and aliases are refused: "
				      "write each rule out");
		else if (!err && tag && !implicit)
			err = fail_at(c, &ev.start_mark, "YAML tags (such as !!str) are refused: "
				      "every value is read as text");
		if (ev.type == YAML_STREAM_END_EVENT)
			break;
		yaml_event_delete(&ev);
	}
	yaml_event_delete(&ev);
	yaml_parser_delete(&parser);
	return err;
}

static int load_yaml(struct pctx *c, const unsigned char *text, size_t len)
{
	yaml_parser_t parser;
	int err;

	if ((err = check_events(c, text, len)))
		return err;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, text, len);
	if (!yaml_parser_load(&parser, &c->doc))
		err = yaml_error(c, &parser);
	yaml_parser_delete(&parser);
	return err;
}

/* Reads a policy file whole. What may be read is narrow, since the agent
 * reads what a control request names and must not hang on it, nor take
 * rules from a file someone other than root could have written: a regular
 * file (a FIFO or device would block or never end), not a symbolic link,
 * owned by root and not writable by group or others, at most
 * POLICY_FILE_MAX bytes. The reasons name the file, never its content. */
static int read_policy_file(const char *path, unsigned char **text, size_t *len, char *err,
			    size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	int ret = 0;

	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			snprintf(err, errlen, "%s: a symbolic link: refused (name the file itself)", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file: refused", path);
	} else if (st.st_uid != 0) {
		ret = -EPERM;
		snprintf(err, errlen, "%s: owned by uid %u, not root: refused (a policy only root "
			 "can change)", path, (unsigned)st.st_uid);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = -EPERM;
		snprintf(err, errlen, "%s: writable by %s (mode %04o): refused (chmod go-w)", path,
			 st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
	} else if (st.st_size > POLICY_FILE_MAX) {
		ret = -EFBIG;
		snprintf(err, errlen, "%s: %lld bytes; a policy file is at most %d", path,
			 (long long)st.st_size, POLICY_FILE_MAX);
	} else if (!(buf = malloc(POLICY_FILE_MAX + 1))) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
	}
	/* One byte more than the limit: a file that grew since fstat is caught. */
	while (!ret && got <= POLICY_FILE_MAX) {
		ssize_t n = read(fd, buf + got, POLICY_FILE_MAX + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		}
		if (n <= 0)
			break;
		got += n;
	}
	if (!ret && got > POLICY_FILE_MAX) {
		ret = -EFBIG;
		snprintf(err, errlen, "%s: more than %d bytes; a policy file is at most that", path,
			 POLICY_FILE_MAX);
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	*text = buf;
	*len = got;
	return 0;
}

int vigil_policy_add_file(struct vigil_policy *p, const char *path, char *err, size_t errlen)
{
	unsigned char *text = NULL;
	size_t len = 0;
	int ret = read_policy_file(path, &text, &len, err, errlen);

	if (!ret)
		ret = vigil_policy_add_text(p, path, text, len, err, errlen);
	free(text);
	return ret;
}

int vigil_policy_add_text(struct vigil_policy *p, const char *path, const unsigned char *text,
			  size_t len, char *err, size_t errlen)
{
	struct pctx c = { .file = path, .err = err, .errlen = errlen };
	struct scratch s = {
		.room = VIGIL_RULES_MAX - p->n_rules, .proom = VIGIL_PRULES_MAX - p->n_prules,
	};
	struct vigil_rule *merged;
	struct vigil_prule_spec *pmerged;
	struct vigil_filter_spec *fmerged;
	char **files, *name = NULL;
	int ret;

	snprintf(err, errlen, "%s: out of memory", path);
	s.rules = calloc(s.room ? s.room : 1, sizeof(*s.rules));
	s.prules = calloc(s.proom ? s.proom : 1, sizeof(*s.prules));
	ret = -ENOMEM;
	if (!s.rules || !s.prules)
		goto out;
	ret = load_yaml(&c, text, len);
	if (ret)
		goto out;
	ret = parse_doc(&c, p, &s);
	yaml_document_delete(&c.doc);
	if (ret)
		goto out;

	ret = -ENOMEM;
	name = strdup(path);
	files = name ? realloc(p->files, (p->n_files + 1) * sizeof(*files)) : NULL;
	if (!files)
		goto out;
	p->files = files;
	merged = realloc(p->rules, (p->n_rules + s.n + 1) * sizeof(*merged));
	if (!merged)
		goto out;	/* p->files grew but n_files did not: still consistent */
	p->rules = merged;
	pmerged = realloc(p->prules, (p->n_prules + s.np + 1) * sizeof(*pmerged));
	if (!pmerged)
		goto out;
	p->prules = pmerged;
	fmerged = realloc(p->filters, (p->n_filters + s.nf + 1) * sizeof(*fmerged));
	if (!fmerged)
		goto out;
	p->filters = fmerged;
	for (unsigned i = 0; i < s.nf; i++) {
		s.filters[i].file = name;
		p->filters[p->n_filters++] = s.filters[i];
	}
	s.nf = 0;
	for (unsigned i = 0; i < s.n; i++) {
		s.rules[i].file = name;
		p->rules[p->n_rules++] = s.rules[i];
	}
	for (unsigned i = 0; i < s.np; i++) {
		s.prules[i].file = name;
		p->prules[p->n_prules++] = s.prules[i];
	}
	p->files[p->n_files++] = name;
	name = NULL;
	if (s.redact)
		p->redact = s.redact;
	s.redact = NULL;
	s.n = s.np = 0;
	ret = 0;
	err[0] = 0;
out:
	for (unsigned i = 0; i < s.n; i++)
		rule_free(&s.rules[i]);
	for (unsigned i = 0; i < s.np; i++)
		proc_rule_free(&s.prules[i]);
	free(s.rules);
	free(s.prules);
	vigil_redact_policy_free(s.redact);
	for (unsigned i = 0; i < s.nf; i++)
		filter_spec_free(&s.filters[i]);
	free(s.filters);
	free(name);
	return ret;
}

static bool cidr_has(const struct vigil_cidr *c, int family, const uint8_t *addr)
{
	unsigned bits = c->prefix;

	if (c->family != family || memcmp(c->addr, addr, bits / 8))
		return false;
	return !(bits % 8) || !((c->addr[bits / 8] ^ addr[bits / 8]) & (0xff00 >> (bits % 8)));
}

/* Replies come in to vigild's ephemeral port: could [lo, hi] hold it? */
static bool overlaps_local_ports(unsigned lo, unsigned hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	unsigned first = 32768, last = 60999;	/* the kernel's default */

	if (f) {
		if (fscanf(f, "%u %u", &first, &last) != 2)
			first = 32768, last = 60999;
		fclose(f);
	}
	return lo <= last && hi >= first;
}

bool vigil_rule_covers_peer(const struct vigil_rule *r, const struct sockaddr_storage *peer,
			    int socktype)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)peer;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)peer;
	int family = peer->ss_family;
	const uint8_t *addr;
	unsigned port;

	if (r->action == VIGIL_ACT_ALLOW)
		return false;
	if (r->protocol && r->protocol != (socktype == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP))
		return false;
	if (family == AF_INET) {
		addr = (const uint8_t *)&s4->sin_addr;
		port = ntohs(s4->sin_port);
	} else if (family == AF_INET6) {
		addr = s6->sin6_addr.s6_addr;
		port = ntohs(s6->sin6_port);
		if (!memcmp(addr, v4mapped, 12))	/* the hooks see it as IPv4 */
			family = AF_INET, addr += 12;
	} else {
		return false;
	}
	if (r->n_cidrs) {
		unsigned i = 0;

		while (i < r->n_cidrs && !cidr_has(&r->cidrs[i], family, addr))
			i++;
		if (i == r->n_cidrs)
			return false;
	}
	if (r->direction & VIGIL_DIR_EGRESS && port >= r->port_lo && port <= r->port_hi)
		return true;
	return r->direction & VIGIL_DIR_INGRESS && overlaps_local_ports(r->port_lo, r->port_hi);
}

void vigil_policy_free(struct vigil_policy *p)
{
	for (unsigned i = 0; i < p->n_rules; i++)
		rule_free(&p->rules[i]);
	for (unsigned i = 0; i < p->n_prules; i++)
		proc_rule_free(&p->prules[i]);
	free(p->prules);
	for (unsigned i = 0; i < p->n_files; i++)
		free(p->files[i]);
	free(p->rules);
	free(p->files);
	vigil_redact_policy_free(p->redact);
	for (unsigned i = 0; i < p->n_filters; i++)
		filter_spec_free(&p->filters[i]);
	free(p->filters);
	memset(p, 0, sizeof(*p));
}
