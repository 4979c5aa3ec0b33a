// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the policy file parser (lib/policy_parse.c), from the bytes
 * on (vigil_policy_add_text: what vigil_policy_add_file does once it has
 * read the file; its checks of the file itself refuse a /proc/self/fd
 * link, so a memfd would never reach the parser). A file is taken whole or
 * refused whole: on a refusal the policy is unchanged and the error names
 * the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char path[] = "fuzz-policy.yaml";
	struct vigil_policy p = { 0 };
	char err[512] = "";
	int r;

	if (size > (1u << 20))
		return 0;	/* add_file refuses a file this big before reading it */
	r = vigil_policy_add_text(&p, path, data, size, err, sizeof(err));
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
