/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What names a secret in process arguments (vigil/redact.h, docs/operations.md
 * "Secrets in arguments"): the default set, on unless a policy's `redact:`
 * section says otherwise. Only data here; the agent writes it into the
 * maps (agent/core/redact_maps.c).
 */
#ifndef VIGIL_REDACT_LIB_H
#define VIGIL_REDACT_LIB_H

#include <stdbool.h>
#include <stdint.h>
#include <vigil/redact.h>

struct vigil_redact_entry {
	uint32_t kind;		/* enum vigil_redact_kind */
	uint32_t how;		/* enum vigil_redact_how */
	const char *comm;	/* NULL: any program */
	const char *word;
};

struct vigil_redact_set {
	bool on;
	bool urls;
	const struct vigil_redact_entry *entries;
	unsigned n;
};

/* The default set: --password VALUE and =VALUE, token, secret, api keys,
 * *_TOKEN= and the like, URL passwords, mysql -pVALUE, curl -u user:pw. */
extern const struct vigil_redact_set vigil_redact_defaults;

/* A policy's set (lib/policy_redact.c): set.entries is entries, whose
 * words it owns. */
struct vigil_redact_policy {
	struct vigil_redact_set set;
	struct vigil_redact_entry *entries;
};
void vigil_redact_policy_free(struct vigil_redact_policy *r);

#endif
