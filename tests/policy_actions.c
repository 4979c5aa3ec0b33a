// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the policy actions' catalogue (vigil/policy_actions.h) one action a
 * line, in its order: `NAME CGROUP`, CGROUP no, may or must (whether a rule
 * of that action takes a 'cgroup'). Driven by tests/policy_parse.t, which
 * checks docs/policy.md against it.
 */
#include <stdio.h>
#include <vigil/events.h>

int main(void)
{
	static const char *const cgroup[] = {
		[VIGIL_ACT_CGROUP_NO] = "no", [VIGIL_ACT_CGROUP_MAY] = "may",
		[VIGIL_ACT_CGROUP_MUST] = "must",
	};

#define PRINT_ACTION(id, value, name, cg) printf("%s %s\n", #name, cgroup[cg]);
	VIGIL_POLICY_ACTIONS(PRINT_ACTION)
	return 0;
}
