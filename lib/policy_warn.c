// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rules that can never match where they stand (policy_warn.h). */
#include "policy_warn.h"

/* Every rule applies on every interface vigil enforces on, whichever rule
 * named it (docs/policy.md, `interfaces`). */
static bool has_interfaces(const struct vigil_policy *p)
{
	for (unsigned i = 0; i < p->n_rules; i++)
		if (p->rules[i].n_interfaces)
			return true;
	return false;
}

const char *vigil_rule_unreachable(const struct vigil_policy *p, const struct vigil_rule *r,
				   bool packet_path)
{
	if (packet_path || has_interfaces(p))
		return NULL;
	switch (r->action) {
	case VIGIL_ACT_DROP:
		return "drop acts on packets only, and no rule names 'interfaces'";
	case VIGIL_ACT_REJECT:
		return r->cgroup ? NULL
				 : "reject without 'cgroup' acts on packets only, and no rule names "
				   "'interfaces'";
	case VIGIL_ACT_RESET:
		return r->n_netns ? NULL
				  : "reset without 'netns' destroys no socket and acts on packets "
				    "only, and no rule names 'interfaces'";
	}
	return NULL;
}
