// SPDX-License-Identifier: GPL-2.0
/*
 * vigil policy check|load|list: checks policy files here, and asks the
 * running vigild (over its control socket) to load them or to list what is
 * in force. Checking needs no agent; load and list do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "log.h"
#include "policy.h"

static int policy_check(int argc, char **argv)
{
	struct vigil_policy p = {};
	char err[512];
	int ret = 0;

	if (argc < 1)
		return vlog_err(-EINVAL, "usage: vigil policy check FILE...");
	for (int i = 0; i < argc && !ret; i++) {
		unsigned before = p.n_rules;

		ret = vigil_policy_add_file(&p, argv[i], err, sizeof(err));
		if (ret)
			fprintf(stderr, "%s\n", err);
		else
			printf("%s: %u rules\n", argv[i], p.n_rules - before);
	}
	vigil_policy_free(&p);
	return ret;
}

int do_policy(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return policy_check(argc - 2, argv + 2);
	return vlog_err(-EINVAL, "usage: vigil policy check FILE... | load FILE... | list");
}
