// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the policy actions' catalogue (vigil/policy_actions.h) one action a
 * line, in its order: `NAME CGROUP KINDS`, CGROUP no, may or must (whether a
 * network rule of that action takes a 'cgroup'), KINDS the rule kinds that
 * take it (net, or exec,file). Driven by tests/policy_parse.t, which checks
 * docs/policy.md against it.
 */
#include <stdio.h>
#include <vigil/events.h>

int main(void)
{
	static const char *const cgroup[] = {
		[VIGIL_ACT_CGROUP_NO] = "no", [VIGIL_ACT_CGROUP_MAY] = "may",
		[VIGIL_ACT_CGROUP_MUST] = "must",
	};

#define PRINT_ACTION(id, value, name, cg, kinds)					\
	printf("%s %s %s%s%s\n", #name, cgroup[cg], (kinds) & VIGIL_KIND_NET ? "net" : "",	\
	       (kinds) & VIGIL_KIND_EXEC ? "exec" : "", (kinds) & VIGIL_KIND_FILE ? ",file" : "");
	VIGIL_POLICY_ACTIONS(PRINT_ACTION)
	return 0;
}
