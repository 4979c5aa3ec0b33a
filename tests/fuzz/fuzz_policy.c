// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the policy file parser (lib/policy.c). It reads a
 * path, so the input goes into a memfd read through /proc/self/fd. A file
 * is taken whole or refused whole: on a refusal the policy is unchanged and
 * the error names the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct vigil_policy p = { 0 };
	char err[512] = "";
	int r;

	if (fd < 0) {
		fd = memfd_create("fuzz-policy.yaml", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	r = vigil_policy_add_file(&p, path, err, sizeof(err));
	if (r < 0 && (p.n_rules || p.n_files || strncmp(err, path, strlen(path))))
		abort();
	if (!r) {
		/* What the agent does next with a rule: name it, format it. */
		for (unsigned i = 0; i < p.n_rules; i++) {
			char s[64];

			for (unsigned k = 0; k < p.rules[i].n_cidrs; k++)
				vigil_cidr_format(&p.rules[i].cidrs[k], s, sizeof(s));
			if (!vigil_policy_action_name(p.rules[i].action) ||
			    !vigil_policy_dir_name(p.rules[i].direction) ||
			    !memchr(p.rules[i].name, 0, sizeof(p.rules[i].name)))
				abort();
		}
	}
	vigil_policy_free(&p);
	return 0;
}
