// SPDX-License-Identifier: GPL-2.0
/*
 * `vigil policy list` when no agent answers: the rules a stopped vigild
 * left pinned still enforce, so they are listed from the pinned maps
 * themselves (docs/enforce-maps.md): each active rule's action, protocol,
 * ports and hits from vigil_rules and vigil_rule_stats, its addresses and
 * direction from the prefix tries, its cgroup from vigil_rule_cgroup; then
 * the exec and file rules in force, by name, with their counts. Network
 * rules' names, files and interfaces, and exec and file rules' patterns,
 * live only in a running agent.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/enforce_maps.h>
#include <vigil/proc_policy.h>
#include "buf.h"
#include "cmd.h"
#include "log.h"
#include "percpu.h"
#include "pins.h"
#include "policy_parse.h"

struct pinned {
	int rules, stats, cgroups, pol[2];	/* pol[0]: IPv4, pol[1]: IPv6 */
};

/* A prefix of rule i: the trie holds, for each prefix, every rule covering
 * it, so a rule's own prefixes are those with no shorter one of its own. */
struct prefix {
	struct vigil_cidr cidr;
	uint32_t dir;
	uint64_t rules;
};

#define PREFIXES_MAX 4096

/* A pinned map of cli_pin_dir (lib/pins.h): 0, or -errno (said by the caller:
 * a pin may be absent, as when no rule of its kind was ever loaded). */
static int open_pinned(const char *name, int *fd)
{
	*fd = vigil_pinned_fd(cli_pin_dir, name);
	return *fd < 0 ? -errno : 0;
}

static unsigned read_prefixes(const struct pinned *p, struct prefix *out, unsigned room)
{
	unsigned n = 0;

	for (int v6 = 0; v6 < 2; v6++) {
		struct vigil_pol_key6 key, next;	/* the larger; v4 keys are its head */
		struct vigil_pol_set set;
		size_t alen = v6 ? 16 : 4;
		void *prev = NULL;

		while (n < room && !bpf_map_get_next_key(p->pol[v6], prev, &next)) {
			memcpy(&key, &next, sizeof(key));
			prev = &key;
			if (bpf_map_lookup_elem(p->pol[v6], &key, &set))
				continue;
			out[n] = (struct prefix){ .dir = key.dir, .rules = set.rules,
				.cidr = { .family = v6 ? 10 : 2, .prefix = key.prefixlen - 32 } };
			memcpy(out[n].cidr.addr, key.addr, alen);
			n++;
		}
	}
	return n;
}

static bool within(const struct prefix *a, const struct prefix *b)	/* a inside b */
{
	unsigned bits = b->cidr.prefix;

	if (a->cidr.family != b->cidr.family || a->dir != b->dir || a->cidr.prefix < bits)
		return false;
	for (unsigned i = 0; i < bits; i++)
		if (((a->cidr.addr[i / 8] ^ b->cidr.addr[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static void print_prefixes(unsigned id, const struct prefix *pf, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		bool own = pf[i].rules >> id & 1;
		char cidr[64];

		for (unsigned j = 0; own && j < n; j++)
			own = j == i || !(pf[j].rules >> id & 1) || !within(&pf[i], &pf[j]) ||
			      pf[j].cidr.prefix == pf[i].cidr.prefix;
		if (!own)
			continue;
		vigil_cidr_format(&pf[i].cidr, cidr, sizeof(cidr));
		printf(" %s %s", vigil_policy_dir_name(pf[i].dir), pf[i].cidr.prefix ? cidr : "any");
	}
}

static int list(const struct pinned *p)
{
	static struct prefix pf[PREFIXES_MAX];
	unsigned npf = read_prefixes(p, pf, PREFIXES_MAX), shown = 0;

	printf("%-3s %-7s %-5s %-11s %10s %10s %10s  %s\n", "id", "action", "proto", "port",
	       "hits", "replies", "suppressed", "match");
	for (unsigned id = 0; id < VIGIL_RULES_MAX; id++) {
		struct vigil_pol_rule r;
		struct vigil_pol_cgroup cg = {};
		struct vigil_rule_stats st;
		char port[16] = "any";

		if (bpf_map_lookup_elem(p->rules, &id, &r) || !(r.flags & VIGIL_RULE_ACTIVE))
			continue;
		vigil_percpu_sum(p->stats, &id, &st, sizeof(st));
		st.replies_suppressed += st.events_suppressed;
		if (r.port_lo != 0 || r.port_hi != 65535)
			snprintf(port, sizeof(port), r.port_lo == r.port_hi ? "%u" : "%u-%u",
				 r.port_lo, r.port_hi);
		printf("%-3u %-7s %-5s %-11s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " ", id,
		       vigil_policy_action_name(r.action), vigil_policy_proto_name(r.proto), port,
		       (uint64_t)st.hits, (uint64_t)st.replies, (uint64_t)st.replies_suppressed);
		print_prefixes(id, pf, npf);
		if (!bpf_map_lookup_elem(p->cgroups, &id, &cg) && cg.id)
			printf(" cgroup=#%" PRIu64, (uint64_t)cg.id);
		putchar('\n');
		shown++;
	}
	if (!shown)
		puts("no rules in force");
	if (npf == PREFIXES_MAX)
		printf("(only the first %d prefixes were read)\n", PREFIXES_MAX);
	return 0;
}

/* Exec and file rules (include/vigil/proc_policy.h): the generation in
 * force, its active rules, their counts summed over the CPUs. Absent pins
 * (no such rule ever loaded): nothing. */
static void list_proc(void)
{
	int state_fd = -1, rules_fd = -1, stats_fd = -1;
	struct vigil_pstate st = {};
	__u32 zero = 0;
	unsigned shown = 0;

	if (open_pinned("vigil_pstate", &state_fd) || open_pinned("vigil_prules", &rules_fd) ||
	    open_pinned("vigil_prule_stats", &stats_fd) || bpf_map_lookup_elem(state_fd, &zero, &st))
		goto out;
	for (__u32 i = 0; i < VIGIL_PRULES_MAX; i++) {
		__u32 key = (st.gen & 1) * VIGIL_PRULES_MAX + i;
		struct vigil_prule_stats sum;
		struct vigil_prule r;
		char action[24];

		if (bpf_map_lookup_elem(rules_fd, &key, &r) || !(r.flags & VIGIL_PRULE_ACTIVE))
			continue;
		vigil_percpu_sum(stats_fd, &key, &sum, sizeof(sum));
		sum.would_kill += sum.would_signal;
		if (!shown++)
			printf("\n%-3s %-24s %-10s %8s %10s %8s %8s %8s %8s\n", "id", "name", "action", "mode",
			       "hits", "kills", "signals", "would", "refused");
		if (r.action == VIGIL_ACT_SIGNAL)
			snprintf(action, sizeof(action), "signal %u", r.signal);
		else
			snprintf(action, sizeof(action), "%s", vigil_policy_action_name(r.action));
		printf("%-3u %-24.*s %-10s %8s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
		       " %8" PRIu64 "\n", i, (int)sizeof(r.name), r.name, action,
		       r.flags & VIGIL_PRULE_MONITOR ? "monitor" : "enforce", (uint64_t)sum.hits,
		       (uint64_t)sum.kills, (uint64_t)sum.signals, (uint64_t)sum.would_kill,
		       (uint64_t)sum.refused);
	}
out:
	if (state_fd >= 0)
		close(state_fd);
	if (rules_fd >= 0)
		close(rules_fd);
	if (stats_fd >= 0)
		close(stats_fd);
}

int cli_policy_list_pinned(void)
{
	struct pinned p = { -1, -1, -1, { -1, -1 } };
	int err;

	if ((err = open_pinned("vigil_rules", &p.rules)) ||
	    (err = open_pinned("vigil_rule_stats", &p.stats)) ||
	    (err = open_pinned("vigil_rule_cgroup", &p.cgroups)) ||
	    (err = open_pinned("vigil_pol4", &p.pol[0])) ||
	    (err = open_pinned("vigil_pol6", &p.pol[1]))) {
		if (err == -ENOENT)
			vlog_refuse(err, "no policy is pinned in %s", cli_pin_dir);
		else
			vlog_err(err, "cannot open the policy maps pinned in %s", cli_pin_dir);
	} else {
		fprintf(stderr, "vigil: vigild is not running; the rules pinned in %s still enforce "
			"(names, files and interfaces are known to a running agent only):\n",
			cli_pin_dir);
		err = list(&p);
		list_proc();
	}
	{
		int fds[] = { p.rules, p.stats, p.cgroups, p.pol[0], p.pol[1] };

		for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	return err;
}
