// SPDX-License-Identifier: GPL-2.0
/*
 * The packet path on the interfaces a policy names: each rule's interfaces,
 * in each network namespace the rule names, get vigil's TC programs
 * (agent/enforce/enforce_tc.c attaches them from a thread inside the namespace).
 * Interfaces are looked up when the policy is read, so a policy naming one
 * that is not there is refused whole; one a new policy no longer names is
 * detached once the new rules are in force. The links are pinned, so an
 * interface stays enforced on while vigild restarts (agent/enforce/enforce_tc.h);
 * where no rule matches, the programs pass traffic through.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include "enforce/enforce_tc.h"
#include "log.h"
#include "core/netns.h"
#include "enforce/rule_maps.h"

static int if_exists(void *ifname)
{
	return if_nametoindex(ifname) ? 0 : -ENODEV;
}

int vigil_policy_tc_check(const struct vigil_rule *r, char *err, size_t errlen)
{
	for (unsigned n = 0; n < r->n_netns; n++) {
		for (unsigned i = 0; i < r->n_interfaces; i++) {
			int ret = vigil_netns_run(r->netns[n], if_exists, r->interfaces[i], NULL);

			if (ret) {
				snprintf(err, errlen, "interface '%s' not found in network namespace '%s'",
					 r->interfaces[i], r->netns[n]);
				return ret;
			}
		}
	}
	return 0;
}

static bool attached(const struct vigil_policy_state *s, const char *netns, const char *ifname)
{
	for (unsigned i = 0; i < s->n_tc; i++)
		if (!strcmp(s->tc_at[i].netns, netns) && !strcmp(s->tc_at[i].ifname, ifname))
			return true;
	return false;
}

int vigil_policy_tc_attach(struct vigil_policy_state *s, const struct vigil_policy *p)
{
	struct vigil_enforce_tc_opts o = {
		.pin_dir = s->pin_dir,
		.ring_size = s->ring_size,
		.wakeup_bytes = s->ring_size / 8,	/* vigild's default */
	};
	int err;

	for (unsigned r = 0; r < p->n_rules; r++) {
		const struct vigil_rule *rule = &p->rules[r];

		for (unsigned n = 0; n < rule->n_netns; n++) {
			for (unsigned i = 0; i < rule->n_interfaces; i++) {
				struct vigil_policy_tc_at *at = &s->tc_at[s->n_tc];

				if (attached(s, rule->netns[n], rule->interfaces[i]))
					continue;
				if (s->n_tc == VIGIL_POLICY_TC_MAX)
					return vlog_refuse(-E2BIG, "policy: more than %d interfaces",
							VIGIL_POLICY_TC_MAX);
				if (!s->tc && (err = vigil_enforce_tc_open(&s->tc, &o)))
					return err;
				err = vigil_enforce_tc_attach(s->tc, rule->netns[n], rule->interfaces[i],
							      false);
				if (err)
					return err;
				snprintf(at->netns, sizeof(at->netns), "%s", rule->netns[n]);
				snprintf(at->ifname, sizeof(at->ifname), "%s", rule->interfaces[i]);
				s->n_tc++;
			}
		}
	}
	return 0;
}

void vigil_policy_tc_mark(const struct vigil_policy_state *s, struct vigil_policy_tc_mark *m)
{
	m->n_tc = s->n_tc;
	m->n_at = vigil_enforce_tc_count(s->tc);
}

void vigil_policy_tc_rollback(struct vigil_policy_state *s, const struct vigil_policy_tc_mark *m)
{
	vigil_enforce_tc_rollback(s->tc, m->n_at);
	s->n_tc = m->n_tc;
}

/* Whether a rule of p names ifname in netns. */
static bool named(const struct vigil_policy *p, const char *netns, const char *ifname)
{
	for (unsigned r = 0; r < p->n_rules; r++)
		for (unsigned n = 0; n < p->rules[r].n_netns; n++)
			for (unsigned i = 0; i < p->rules[r].n_interfaces; i++)
				if (!strcmp(p->rules[r].netns[n], netns) &&
				    !strcmp(p->rules[r].interfaces[i], ifname))
					return true;
	return false;
}

void vigil_policy_tc_detach_others(struct vigil_policy_state *s, const struct vigil_policy *p)
{
	for (unsigned i = 0; i < s->n_tc; ) {
		struct vigil_policy_tc_at *at = &s->tc_at[i];

		if (named(p, at->netns, at->ifname)) {
			i++;
			continue;
		}
		vigil_enforce_tc_detach(s->tc, at->netns, at->ifname);
		s->tc_at[i] = s->tc_at[--s->n_tc];
	}
}

void vigil_policy_tc_close(struct vigil_policy_state *s)
{
	vigil_enforce_tc_close(s->tc);
	s->tc = NULL;
	s->n_tc = 0;
}
