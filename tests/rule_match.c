// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of rule matching (bpf/lib/rule_match.bpf.h, rule_walk.bpf.h)
 * through BPF_PROG_TEST_RUN: tables of policies, written as policy files
 * and read by lib/policy_parse.c, and of cases, each a peer, port,
 * protocol, direction and sender cgroup with the rule every matcher must
 * pick. One TAP line per case, so a matching bug shows as the rows it
 * breaks. Driven by rule_match.t; run as root, with the path of
 * build/tests/rule_match.bpf.o.
 *
 * The maps are filled here, not by the agent's compiler: that is
 * agent/enforce/rule_maps.c, static functions woven with resolving real
 * cgroups and namespaces and with the agent's skeleton, which no test
 * links. So this file writes the structs of include/vigil/enforce_maps.h
 * itself, by the rule docs/enforce-maps.md gives (rule id = position in
 * the policy, as on a first load; each prefix carries the bits of every
 * prefix covering it), found by a plain scan rather than the agent's
 * sorted lookups: a second, simple reading of that rule.
 *
 * Cgroups are made up: the walks under test judge a scoped rule by the
 * sender's ancestor ids, which come in with the case, so a path stands for
 * a cgroup by an id hashed from it, at the level of its depth. No cgroup,
 * interface or namespace is touched; no map is pinned (the maps are pinned
 * by name in production, and an agent's pins must never be reused here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/enforce_maps.h>
#include "policy_parse.h"
#include "bpf/rule_match_case.h"

#define IN VIGIL_DIR_INGRESS
#define OUT VIGIL_DIR_EGRESS
#define ICMP 1

/* One case: what is sent, and the rule name each matcher must pick ("-":
 * none). */
struct row {
	const char *name;
	uint8_t dir;		/* 0: egress */
	uint8_t proto;		/* 0: TCP */
	const char *peer;
	uint16_t port;
	const char *cgroup;	/* the sender's, below the mount; NULL: the root */
	const char *packet;	/* vigil_policy_match (TC, XDP) */
	const char *socket;	/* vigil_walk_ancestors (cgroup_skb, carried); NULL: as packet */
	const char *deny;	/* vigil_deny_by; NULL: not checked */
	const char *unparsed;	/* vigil_policy_match_unparsed; NULL: not checked */
	bool proto_unknown;	/* ... with the protocol unknown too */
};

struct table {
	const char *name;
	const char *yaml;
	const struct row *rows;	/* ended by one without a name */
};

static int n_test, n_fail;
static int prog_fd, rules_fd, cgroup_fd, pol_fd[2];

static void ok(bool cond, const char *what)
{
	n_test++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_test, what);
	if (!cond)
		n_fail++;
}

/* The made-up cgroup ids of path and of each ancestor, by level (the root,
 * level 0, is 1 as in the kernel): ids[0..depth]. Returns the depth, at
 * most max - 1. */
static unsigned cgroup_ids(const char *path, uint64_t *ids, unsigned max)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */
	unsigned depth = 0;

	ids[0] = 1;
	while (path && *path && depth + 1 < max) {
		if (*path == '/') {
			path++;
			continue;
		}
		h = (h ^ '/') * 0x100000001b3ull;
		while (*path && *path != '/')
			h = (h ^ (uint8_t)*path++) * 0x100000001b3ull;
		ids[++depth] = h | 1ull << 63;	/* never 0 or 1 */
	}
	return depth;
}

struct prefix {
	uint8_t family, dir, len;
	uint8_t addr[16];
	uint64_t own;	/* the rules naming this prefix */
};

/* Does prefix q cover address a (of q's family)? */
static bool covers(const struct prefix *q, const uint8_t *a)
{
	unsigned whole = q->len / 8, rest = q->len % 8;

	if (memcmp(q->addr, a, whole))
		return false;
	return !rest || !((q->addr[whole] ^ a[whole]) & (0xff00 >> rest));
}

static int clear_tries(void)
{
	for (int f = 0; f < 2; f++) {
		struct vigil_pol_key6 key;

		/* Always the first key: each one found is deleted. */
		while (!bpf_map_get_next_key(pol_fd[f], NULL, &key))
			if (bpf_map_delete_elem(pol_fd[f], &key))
				return -errno;
	}
	return 0;
}

static int add_prefix(struct prefix *px, unsigned *n, uint8_t family, uint8_t dir, uint8_t len,
		      const uint8_t *addr, unsigned id)
{
	if (*n == 2 * VIGIL_POL_PREFIXES_MAX)
		return -E2BIG;
	px[*n] = (struct prefix){ .family = family, .dir = dir, .len = len, .own = 1ull << id };
	memcpy(px[*n].addr, addr, family == AF_INET ? 4 : 16);
	(*n)++;
	return 0;
}

/* Writes policy p into the maps, as the only policy in force. */
static int write_policy(const struct vigil_policy *p)
{
	static struct prefix px[2 * VIGIL_POL_PREFIXES_MAX];
	static const uint8_t zero[16];
	unsigned n = 0;
	int err = clear_tries();

	for (unsigned id = 0; id < VIGIL_RULES_MAX && !err; id++) {
		const struct vigil_rule *r = id < p->n_rules ? &p->rules[id] : NULL;
		struct vigil_pol_rule rule = {};
		struct vigil_pol_cgroup cg = {};

		if (r) {
			rule = (struct vigil_pol_rule){ .action = r->action, .proto = r->protocol,
							.flags = VIGIL_RULE_ACTIVE,
							.port_lo = r->port_lo, .port_hi = r->port_hi };
			if (r->cgroup) {
				uint64_t ids[256];

				cg.level = cgroup_ids(r->cgroup, ids, 256);
				cg.id = ids[cg.level];
			}
			for (uint8_t d = IN; d <= OUT && !err; d <<= 1) {
				if (!(r->direction & d))
					continue;
				/* No addresses: the /0 of each family. */
				if (!r->n_cidrs && !(err = add_prefix(px, &n, AF_INET, d, 0, zero, id)))
					err = add_prefix(px, &n, AF_INET6, d, 0, zero, id);
				for (unsigned i = 0; i < r->n_cidrs && !err; i++)
					err = add_prefix(px, &n, r->cidrs[i].family, d, r->cidrs[i].prefix,
							 r->cidrs[i].addr, id);
			}
		}
		if (!err && (bpf_map_update_elem(rules_fd, &id, &rule, 0) ||
			     bpf_map_update_elem(cgroup_fd, &id, &cg, 0)))
			err = -errno;
	}
	for (unsigned i = 0; i < n && !err; i++) {
		struct vigil_pol_key6 key = { .prefixlen = 32 + px[i].len, .dir = px[i].dir };
		struct vigil_pol_set set = {};

		for (unsigned j = 0; j < n; j++)
			if (px[j].family == px[i].family && px[j].dir == px[i].dir &&
			    px[j].len <= px[i].len && covers(&px[j], px[i].addr))
				set.rules |= px[j].own;
		memcpy(key.addr, px[i].addr, 16);	/* a key4's address is the first 4 */
		if (bpf_map_update_elem(pol_fd[px[i].family == AF_INET6], &key, &set, 0))
			err = -errno;
	}
	return err;
}

/* Runs the matchers on case c. */
static int run(const struct row *c, struct rule_match_out *out)
{
	struct {
		struct rule_match_in in;
		struct rule_match_out out;
	} frame = {}, back = {};
	struct rule_match_in *in = &frame.in;
	uint64_t ids[256];
	unsigned depth = cgroup_ids(c->cgroup, ids, 256);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &frame, .data_size_in = sizeof(frame),
		    .data_out = &back, .data_size_out = sizeof(back));

	in->family = inet_pton(AF_INET, c->peer, in->peer) == 1 ? AF_INET : AF_INET6;
	if (in->family == AF_INET6 && inet_pton(AF_INET6, c->peer, in->peer) != 1)
		return -EINVAL;
	in->proto = c->proto ? c->proto : IPPROTO_TCP;
	in->dir = c->dir ? c->dir : OUT;
	in->proto_known = !c->proto_unknown;
	in->dport = c->port;
	for (unsigned l = 0; l <= depth && l < VIGIL_CG_LEVELS; l++)
		in->ancestors[l] = ids[l];
	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	if (o.retval || o.data_size_out != sizeof(back) || !back.out.done)
		return -EIO;
	*out = back.out;
	return 0;
}

/* The name of the rule a result (1 + id, 0 none) stands for. */
static const char *rule_name(const struct vigil_policy *p, uint32_t got)
{
	if (!got)
		return "-";
	return got <= p->n_rules ? p->rules[got - 1].name : "(a slot past the policy)";
}

static bool want(const char *expect, const struct vigil_policy *p, uint32_t got)
{
	return !expect || !strcmp(expect, rule_name(p, got));
}

static void check(const struct table *t, const struct vigil_policy *p, const char *refused,
		  const struct row *c)
{
	const char *sock = c->socket ? c->socket : c->packet;
	struct rule_match_out got = {};
	char what[256];
	int err = refused ? 0 : run(c, &got);
	bool scoped_right, good;

	snprintf(what, sizeof(what), "%s: %s", t->name, c->name);
	if (refused || err) {
		ok(false, what);
		printf("#   %s\n", refused ? refused : strerror(-err));
		return;
	}
	/* A socket walk's rule is marked scoped exactly when it names a cgroup. */
	scoped_right = got.socket_scoped == (got.socket && got.socket <= p->n_rules &&
					     p->rules[got.socket - 1].cgroup);
	good = want(c->packet, p, got.packet) && want(sock, p, got.socket) && scoped_right &&
	       want(c->deny, p, got.deny) && want(c->unparsed, p, got.unparsed);
	ok(good, what);
	if (good)
		return;
	printf("#   got:  packet %s, socket %s%s, deny %s, unparsed %s\n", rule_name(p, got.packet),
	       rule_name(p, got.socket), got.socket_scoped ? " (scoped)" : "",
	       rule_name(p, got.deny), rule_name(p, got.unparsed));
	printf("#   want: packet %s, socket %s, deny %s, unparsed %s\n", c->packet, sock,
	       c->deny ? c->deny : "(any)", c->unparsed ? c->unparsed : "(any)");
}

static void run_table(const struct table *t)
{
	struct vigil_policy p = {};
	char err[512], why[600];
	const char *refused = NULL;
	int ret = vigil_policy_add_text(&p, t->name, (const unsigned char *)t->yaml, strlen(t->yaml),
					err, sizeof(err));

	if (ret) {
		snprintf(why, sizeof(why), "the policy is refused: %s", err);
		refused = why;
	} else if ((ret = write_policy(&p))) {
		snprintf(why, sizeof(why), "cannot write the policy maps: %s", strerror(-ret));
		refused = why;
	}
	for (const struct row *c = t->rows; c->name; c++)
		check(t, &p, refused, c);
	vigil_policy_free(&p);
}

/* The cases. Peers are in documentation and private ranges; nothing is
 * sent anywhere. */

static const struct row none_rows[] = {
	{ "IPv4 egress", .peer = "10.0.0.1", .port = 80, .packet = "-", .deny = "-", .unparsed = "-" },
	{ "IPv6 udp ingress", .dir = IN, .proto = IPPROTO_UDP, .peer = "fd00::1", .port = 53,
	  .packet = "-", .deny = "-", .unparsed = "-" },
	{ "from a cgroup", .peer = "10.0.0.1", .port = 80, .cgroup = "/apps/shop", .packet = "-",
	  .deny = "-" },
	{},
};

static const struct row v4_rows[] = {
	{ "/32: the address", .peer = "192.0.2.77", .packet = "host" },
	{ "/32: the address before", .peer = "192.0.2.76", .packet = "-" },
	{ "/32: the address after", .peer = "192.0.2.78", .packet = "-" },
	{ "/23: its first address", .peer = "10.1.2.0", .packet = "slash23" },
	{ "/23: its last address, in its second /24", .peer = "10.1.3.255", .packet = "slash23" },
	{ "/23: the address before it", .peer = "10.1.1.255", .packet = "-" },
	{ "/23: the address after it", .peer = "10.1.4.0", .packet = "-" },
	{ "/31: its first address", .peer = "10.9.9.8", .packet = "slash31" },
	{ "/31: its second address", .peer = "10.9.9.9", .packet = "slash31" },
	{ "/31: the address before it", .peer = "10.9.9.7", .packet = "-" },
	{ "/31: the address after it", .peer = "10.9.9.10", .packet = "-" },
	{ "/1: its first address", .proto = IPPROTO_UDP, .peer = "128.0.0.0", .packet = "slash1" },
	{ "/1: its last address", .proto = IPPROTO_UDP, .peer = "255.255.255.255",
	  .packet = "slash1" },
	{ "/1: the address before it, under /0 only", .proto = IPPROTO_UDP,
	  .peer = "127.255.255.255", .packet = "slash0-udp" },
	{ "/0: any IPv4 address", .proto = IPPROTO_UDP, .peer = "1.2.3.4", .packet = "slash0-udp" },
	{ "/0: tcp, a udp rule", .peer = "1.2.3.4", .packet = "-" },
	{ "under /1 and /0: the first rule", .proto = IPPROTO_UDP, .peer = "200.1.1.1",
	  .packet = "slash1" },
	{ "an IPv4 /0 is not IPv6", .proto = IPPROTO_UDP, .peer = "fd00::1", .packet = "-" },
	{ "direction any: ingress too", .dir = IN, .peer = "10.1.3.1", .packet = "slash23" },
	{},
};

static const struct row v6_rows[] = {
	{ "/128: the address", .peer = "2001:db8::1", .packet = "v6-host" },
	{ "/128: the address after", .peer = "2001:db8::2", .packet = "-" },
	{ "/128: the address before", .peer = "2001:db8::", .packet = "-" },
	{ "/61: its first address", .peer = "2001:db8:0:8::", .packet = "v6-61" },
	{ "/61: its last address", .peer = "2001:db8:0:f:ffff:ffff:ffff:ffff", .packet = "v6-61" },
	{ "/61: the address before it", .peer = "2001:db8:0:7:ffff:ffff:ffff:ffff", .packet = "-" },
	{ "/61: the address after it", .peer = "2001:db8:0:10::", .packet = "-" },
	{ "/127: its first address", .peer = "fd00::a", .packet = "v6-127" },
	{ "/127: its second address", .peer = "fd00::b", .packet = "v6-127" },
	{ "/127: the address before it", .peer = "fd00::9", .packet = "-" },
	{ "/127: the address after it", .peer = "fd00::c", .packet = "-" },
	{ "/48: inside", .peer = "2001:db8:1:ffff::1", .packet = "v6-48" },
	{ "/48: the next /48", .peer = "2001:db8:2::", .packet = "-" },
	{ "IPv4-mapped /120 is the IPv4 /24", .peer = "10.99.0.5", .packet = "mapped" },
	{ "IPv4-mapped /120: the address after it", .peer = "10.99.1.0", .packet = "-" },
	{ "::/0: any IPv6 address", .proto = IPPROTO_UDP, .peer = "fe80::1", .packet = "v6-all-udp" },
	{ "::/0 is not IPv4", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .packet = "-" },
	{ "under /128 and ::/0: the first rule", .proto = IPPROTO_UDP, .peer = "2001:db8::1",
	  .packet = "v6-host" },
	{},
};

static const struct row order_rows[] = {
	{ "an earlier /8 wins over a later /24 inside it", .peer = "10.5.5.5", .port = 22,
	  .packet = "wide-first" },
	{ "the /8 rule's port does not fit: the /24 decides", .peer = "10.5.5.5", .port = 23,
	  .packet = "narrow-later" },
	{ "in the /8 only, its port not fitting: none", .peer = "10.6.0.1", .port = 23, .packet = "-" },
	{ "an earlier /24 wins over a later /12 around it", .peer = "172.16.5.1",
	  .packet = "narrow-first" },
	{ "outside the /24, inside the /12", .peer = "172.16.6.1", .packet = "wide-later" },
	{ "/12: its last address", .peer = "172.31.255.255", .packet = "wide-later" },
	{ "/12: the address after it", .peer = "172.32.0.0", .packet = "-" },
	{ "one prefix, two rules: the first that fits (udp)", .proto = IPPROTO_UDP,
	  .peer = "192.168.7.1", .packet = "same-prefix-a" },
	{ "one prefix, two rules: the first that fits (tcp)", .peer = "192.168.7.1",
	  .packet = "same-prefix-b" },
	{},
};

static const struct row port_rows[] = {
	{ "tcp 999: below the range", .peer = "10.0.0.1", .port = 999, .packet = "-" },
	{ "tcp 1000: the range's low end", .peer = "10.0.0.1", .port = 1000, .packet = "tcp-range" },
	{ "tcp 1500: inside", .peer = "10.0.0.1", .port = 1500, .packet = "tcp-range" },
	{ "tcp 2000: the range's high end", .peer = "10.0.0.1", .port = 2000, .packet = "tcp-range" },
	{ "tcp 2001: above the range", .peer = "10.0.0.1", .port = 2001, .packet = "-" },
	{ "udp 1500: a tcp rule", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .port = 1500,
	  .packet = "-" },
	{ "udp 65535: the highest port", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .port = 65535,
	  .packet = "udp-top" },
	{ "udp 65534", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .port = 65534, .packet = "-" },
	{ "tcp 65535: a udp rule", .peer = "10.0.0.1", .port = 65535, .packet = "-" },
	{ "udp 53", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .port = 53, .packet = "udp-dns" },
	{ "tcp 53: a udp rule", .peer = "10.0.0.1", .port = 53, .packet = "-" },
	{ "tcp 7: protocol any", .peer = "10.0.0.1", .port = 7, .packet = "any-proto-echo" },
	{ "udp 7: protocol any", .proto = IPPROTO_UDP, .peer = "10.0.0.1", .port = 7,
	  .packet = "any-proto-echo" },
	{ "tcp 1: the lowest port", .peer = "10.0.0.1", .port = 1, .packet = "low-port" },
	{ "tcp 0: below port 1", .peer = "10.0.0.1", .port = 0, .packet = "-" },
	{ "tcp 2: above port 1", .peer = "10.0.0.1", .port = 2, .packet = "-" },
	{ "ICMP under a rule of any protocol and port", .proto = ICMP, .peer = "10.200.1.1",
	  .packet = "everything" },
	{ "ICMP elsewhere", .proto = ICMP, .peer = "10.0.0.1", .packet = "-" },
	{ "IPv6 tcp 1000: a rule without addresses", .peer = "fd00::1", .port = 1000,
	  .packet = "tcp-range" },
	{ "ingress tcp 1500", .dir = IN, .peer = "10.0.0.1", .port = 1500, .packet = "tcp-range" },
	{},
};

static const struct row dir_rows[] = {
	{ "ingress: the ingress rule", .dir = IN, .peer = "10.7.1.1", .port = 80, .packet = "in-only" },
	{ "egress: the egress rule", .dir = OUT, .peer = "10.7.1.1", .port = 80, .packet = "out-only" },
	{ "egress, its port not fitting: the ingress rule is not tried", .dir = OUT,
	  .peer = "10.7.1.1", .port = 81, .packet = "-" },
	{ "direction any: ingress", .dir = IN, .peer = "fd00:8::1", .packet = "both" },
	{ "direction any: egress", .dir = OUT, .peer = "fd00:8::1", .packet = "both" },
	{},
};

#define D15 "/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15"
#define E16 "/e1/e2/e3/e4/e5/e6/e7/e8/e9/e10/e11/e12/e13/e14/e15/e16"

static const struct row cgroup_rows[] = {
	{ "a rule on a parent cgroup covers a child", .peer = "10.20.1.1", .port = 5432,
	  .cgroup = "/apps/shop/web/pod1", .packet = "deny-db", .deny = "deny-db" },
	{ "the rule's own cgroup", .peer = "10.20.1.1", .port = 5432, .cgroup = "/apps/shop",
	  .packet = "deny-db", .deny = "deny-db" },
	{ "a sibling cgroup: skipped, the unscoped rule after decides", .peer = "10.20.1.1",
	  .port = 5432, .cgroup = "/apps/other", .packet = "deny-db", .socket = "drop-db",
	  .deny = "-" },
	{ "the rule cgroup's parent is not in it", .peer = "10.20.1.1", .port = 5432,
	  .cgroup = "/apps", .packet = "deny-db", .socket = "drop-db", .deny = "-" },
	{ "the root cgroup", .peer = "10.20.1.1", .port = 5432, .packet = "deny-db",
	  .socket = "drop-db", .deny = "-" },
	{ "in the cgroup, the scoped rule's port not fitting", .peer = "10.20.1.1", .port = 5433,
	  .cgroup = "/apps/shop", .packet = "deny-batch", .socket = "drop-db", .deny = "deny-db" },
	{ "a child's rule does not cover its parent", .peer = "10.30.0.1", .cgroup = "/apps/shop",
	  .packet = "reject-web", .socket = "-", .deny = "deny-db" },
	{ "a child's rule covers the child's children", .peer = "10.30.0.1",
	  .cgroup = "/apps/shop/web/x", .packet = "reject-web", .deny = "deny-db" },
	{ "an allow before a deny: udp 53 from a denied cgroup", .proto = IPPROTO_UDP,
	  .peer = "10.20.1.1", .port = 53, .cgroup = "/batch/job", .packet = "allow-dns",
	  .deny = "deny-batch" },
	{ "a deny without addresses: any IPv4 address", .peer = "192.0.2.1", .port = 443,
	  .cgroup = "/batch/job", .packet = "deny-batch", .deny = "deny-batch" },
	{ "a deny without addresses: any IPv6 address", .peer = "2001:db8::5", .port = 443,
	  .cgroup = "/batch", .packet = "deny-batch", .deny = "deny-batch" },
	{ "a deny without addresses, from another cgroup", .peer = "192.0.2.1", .port = 443,
	  .cgroup = "/apps/other", .packet = "deny-batch", .socket = "-", .deny = "-" },
	{ "a rule at level 15 (the deepest told apart), from it", .peer = "10.60.0.1",
	  .cgroup = D15, .packet = "deny-batch", .socket = "deny-level15", .deny = "deny-level15" },
	{ "a rule at level 15, from level 17 below it", .peer = "10.60.0.1", .cgroup = D15 "/x/y",
	  .packet = "deny-batch", .socket = "deny-level15", .deny = "deny-level15" },
	{ "a rule at level 16 never matches here, from it", .peer = "10.60.0.1", .cgroup = E16,
	  .packet = "deny-batch", .socket = "-", .deny = "-" },
	{},
};

static const struct row unparsed_rows[] = {
	{ "an allow of every tcp port, tcp known: passes", .peer = "10.40.0.10",
	  .packet = "allow-admin", .unparsed = "-" },
	{ "an allow of tcp, protocol unknown: the drop after decides", .peer = "10.40.0.10",
	  .proto_unknown = true, .packet = "allow-admin", .unparsed = "drop-net" },
	{ "udp: the tcp allow cannot match, the drop decides", .proto = IPPROTO_UDP,
	  .peer = "10.40.0.10", .packet = "drop-net", .unparsed = "drop-net" },
	{ "an allow of one port only: the reject after decides", .peer = "10.50.0.1", .port = 443,
	  .packet = "allow-web", .unparsed = "reject-net" },
	{ "udp, known: tcp rules cannot match it", .proto = IPPROTO_UDP, .peer = "10.50.0.1",
	  .packet = "-", .unparsed = "-" },
	{ "protocol unknown: a tcp reject could match, drops", .proto = IPPROTO_UDP,
	  .proto_unknown = true, .peer = "10.50.0.1", .packet = "-", .unparsed = "reject-net" },
	{ "an allow of every udp port, udp known: passes", .proto = IPPROTO_UDP, .peer = "10.70.0.1",
	  .packet = "allow-udp", .unparsed = "-" },
	{ "no rule covers the address: passes", .peer = "10.80.0.1", .proto_unknown = true,
	  .packet = "-", .unparsed = "-" },
	{},
};

static const struct row max_rows[] = {
	{ "the first rule", .peer = "10.100.0.1", .packet = "r0" },
	{ "the 63rd rule", .peer = "10.100.62.255", .packet = "r62" },
	{ "no rule for 10.100.63.0/24", .peer = "10.100.63.1", .packet = "-" },
	{ "an earlier rule before the 64th", .proto = IPPROTO_UDP, .peer = "10.100.5.1", .port = 9,
	  .packet = "r5" },
	{ "the 64th rule (id 63), IPv4", .proto = IPPROTO_UDP, .peer = "10.101.0.1", .port = 9,
	  .packet = "r63" },
	{ "the 64th rule (id 63), IPv6", .proto = IPPROTO_UDP, .peer = "fd00::1", .port = 9,
	  .packet = "r63" },
	{ "the 64th rule's port not fitting", .proto = IPPROTO_UDP, .peer = "10.101.0.1", .port = 10,
	  .packet = "-" },
	{},
};

/* 64 rules (VIGIL_RULES_MAX): r0-r62 drop 10.100.N.0/24, r63 rejects udp
 * to port 9 anywhere. */
static char max_yaml[8192];

static void make_max_yaml(char *out, size_t len, unsigned n)
{
	size_t at = snprintf(out, len, "rules:\n");

	for (unsigned i = 0; i + 1 < n && at < len; i++)
		at += snprintf(out + at, len - at,
			       "  - {name: r%u, action: drop, cidr: 10.100.%u.0/24}\n", i, i);
	if (at < len)
		snprintf(out + at, len - at,
			 "  - {name: r%u, action: reject, protocol: udp, port: 9}\n", n - 1);
}

static const struct table tables[] = {
	{ "no rules", "rules: []\n", none_rows },
	{ "IPv4 prefixes",
	  "rules:\n"
	  "  - {name: host, action: drop, cidr: 192.0.2.77}\n"
	  "  - {name: slash23, action: drop, cidr: 10.1.2.0/23}\n"
	  "  - {name: slash31, action: reject, cidr: 10.9.9.8/31}\n"
	  "  - {name: slash1, action: drop, protocol: udp, cidr: 128.0.0.0/1}\n"
	  "  - {name: slash0-udp, action: drop, protocol: udp, cidr: 0.0.0.0/0}\n",
	  v4_rows },
	{ "IPv6 prefixes",
	  "rules:\n"
	  "  - {name: v6-host, action: drop, cidr: \"2001:db8::1\"}\n"
	  "  - {name: v6-61, action: drop, cidr: \"2001:db8:0:8::/61\"}\n"
	  "  - {name: v6-127, action: reject, cidr: \"fd00::a/127\"}\n"
	  "  - {name: v6-48, action: drop, cidr: \"2001:db8:1::/48\"}\n"
	  "  - {name: mapped, action: drop, cidr: \"::ffff:10.99.0.0/120\"}\n"
	  "  - {name: v6-all-udp, action: drop, protocol: udp, cidr: \"::/0\"}\n",
	  v6_rows },
	{ "rule order, not prefix length",
	  "rules:\n"
	  "  - {name: wide-first, action: drop, cidr: 10.0.0.0/8, port: 22}\n"
	  "  - {name: narrow-later, action: allow, cidr: 10.5.5.0/24}\n"
	  "  - {name: narrow-first, action: allow, cidr: 172.16.5.0/24}\n"
	  "  - {name: wide-later, action: reject, cidr: 172.16.0.0/12}\n"
	  "  - {name: same-prefix-a, action: allow, protocol: udp, cidr: 192.168.7.0/24}\n"
	  "  - {name: same-prefix-b, action: drop, cidr: 192.168.7.0/24}\n",
	  order_rows },
	{ "ports and protocols",
	  "rules:\n"
	  "  - {name: tcp-range, action: drop, protocol: tcp, port: 1000-2000}\n"
	  "  - {name: udp-top, action: drop, protocol: udp, port: 65535}\n"
	  "  - {name: udp-dns, action: reject, protocol: udp, port: 53}\n"
	  "  - {name: any-proto-echo, action: drop, port: 7}\n"
	  "  - {name: low-port, action: drop, protocol: tcp, port: 1}\n"
	  "  - {name: everything, action: allow, cidr: 10.200.0.0/16}\n",
	  port_rows },
	{ "directions",
	  "rules:\n"
	  "  - {name: in-only, action: drop, direction: ingress, cidr: 10.7.0.0/16}\n"
	  "  - {name: out-only, action: reject, direction: egress, cidr: 10.7.0.0/16, port: 80}\n"
	  "  - {name: both, action: drop, direction: any, cidr: \"fd00:8::/32\"}\n",
	  dir_rows },
	{ "cgroups",
	  "rules:\n"
	  "  - {name: allow-dns, action: allow, protocol: udp, port: 53}\n"
	  "  - {name: deny-db, action: deny, cgroup: /apps/shop, cidr: 10.20.0.0/16, port: 5432}\n"
	  "  - {name: reject-web, action: reject, cgroup: /apps/shop/web, cidr: 10.30.0.0/16}\n"
	  "  - {name: deny-batch, action: deny, cgroup: /batch}\n"
	  "  - {name: drop-db, action: drop, cidr: 10.20.0.0/16}\n"
	  "  - {name: deny-level15, action: deny, cgroup: " D15 ", cidr: 10.60.0.0/16}\n"
	  "  - {name: deny-level16, action: deny, cgroup: " E16 ", cidr: 10.60.0.0/16}\n",
	  cgroup_rows },
	{ "packets without ports",
	  "rules:\n"
	  "  - {name: allow-admin, action: allow, protocol: tcp, cidr: 10.40.0.10}\n"
	  "  - {name: drop-net, action: drop, cidr: 10.40.0.0/16}\n"
	  "  - {name: allow-web, action: allow, protocol: tcp, cidr: 10.50.0.0/16, port: 443}\n"
	  "  - {name: reject-net, action: reject, protocol: tcp, cidr: 10.50.0.0/16}\n"
	  "  - {name: allow-udp, action: allow, protocol: udp, cidr: 10.70.0.0/16}\n",
	  unparsed_rows },
	{ "64 rules", max_yaml, max_rows },
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -1;
}

int main(int argc, char **argv)
{
	struct vigil_policy p = {};
	struct bpf_object *obj;
	struct bpf_map *map;
	char yaml[8192], err[512];
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(quiet);
	if (argc != 2) {
		fprintf(stderr, "usage: %s build/tests/rule_match.bpf.o\n", argv[0]);
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		printf("Bail out! cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	/* The policy maps are pinned by name in production: unpinned here, so
	 * that no pin of an agent is reused and nothing is left behind. */
	bpf_object__for_each_map(map, obj)
		bpf_map__set_pin_path(map, NULL);
	if (bpf_object__load(obj)) {
		printf("Bail out! cannot load %s (verifier log above)\n", argv[1]);
		bpf_object__close(obj);
		return 1;
	}
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "rule_match_case"));
	rules_fd = map_fd(obj, "vigil_rules");
	cgroup_fd = map_fd(obj, "vigil_rule_cgroup");
	pol_fd[0] = map_fd(obj, "vigil_pol4");
	pol_fd[1] = map_fd(obj, "vigil_pol6");
	if (prog_fd < 0 || rules_fd < 0 || cgroup_fd < 0 || pol_fd[0] < 0 || pol_fd[1] < 0) {
		printf("Bail out! %s lacks the program or a policy map\n", argv[1]);
		bpf_object__close(obj);
		return 1;
	}
	make_max_yaml(max_yaml, sizeof(max_yaml), VIGIL_RULES_MAX);
	for (unsigned i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		run_table(&tables[i]);

	/* Past the limit: the parser refuses the policy, nothing to match. */
	make_max_yaml(yaml, sizeof(yaml), VIGIL_RULES_MAX + 1);
	ret = vigil_policy_add_text(&p, "65 rules", (const unsigned char *)yaml, strlen(yaml), err,
				    sizeof(err));
	ok(ret == -EINVAL, "65 rules: refused when read");
	vigil_policy_free(&p);

	printf("1..%d\n", n_test);
	bpf_object__close(obj);
	return n_fail ? 1 : 0;
}
