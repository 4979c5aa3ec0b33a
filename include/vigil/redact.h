/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Secrets in process arguments, masked in BPF before the record reaches
 * the ring (bpf/lib/redact.bpf.h): the map ABI between the agent, which
 * writes what names a secret (agent/core/redact_maps.c, from the defaults
 * or a policy's `redact:` section), and the exec programs, which read it.
 * Not on the wire: an exec that was masked carries VIGIL_EXEC_REDACTED.
 *
 * Two generations, as the process rules (vigil/proc_policy.h): the agent
 * writes the keys of the generation not in force, flips
 * vigil_redact_conf.gen with one update, then removes the old keys, so an
 * exec is masked wholly by the old set or wholly by the new.
 *
 *   vigil_redact_conf  array[1]: struct vigil_redact_conf
 *   vigil_redact_keys  hash: struct vigil_redact_key -> enum vigil_redact_how
 *
 * A word is an argument's key: before its first '=', leading dashes off,
 * lower case, '-' read as '_' ("--API-Key=x" and "API_KEY=x": "api_key").
 */
#ifndef VIGIL_REDACT_H
#define VIGIL_REDACT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VIGIL_REDACT_WORD_MAX 32	/* a longer word names no secret */
#define VIGIL_REDACT_COMM_MAX 16	/* as the kernel's task comm */
#define VIGIL_REDACT_KEYS_MAX 1024	/* both generations together */
#define VIGIL_REDACT_RANGES 16		/* masked spans per exec; more: no arguments */

enum vigil_redact_kind {
	VIGIL_REDACT_WORD = 0,		/* the whole word */
	VIGIL_REDACT_SUFFIX = 1,	/* the word's end from one of its last two '_' ("_token") */
	VIGIL_REDACT_ATTACHED = 2,	/* one letter after one dash, value attached (-pVALUE) */
};

enum vigil_redact_how {
	VIGIL_REDACT_EQ = 1 << 0,	/* WORD=VALUE, --WORD=VALUE: what follows '=' */
	VIGIL_REDACT_NEXT = 1 << 1,	/* --WORD VALUE: the next argument (dashed words only) */
	VIGIL_REDACT_AFTER_COLON = 1 << 2,	/* with NEXT: only after its first ':' (user:pw) */
	VIGIL_REDACT_REST = 1 << 3,	/* ATTACHED: the rest of the argument */
};

struct vigil_redact_key {
	__u32 gen;		/* 0 or 1 */
	__u32 kind;		/* enum vigil_redact_kind */
	char comm[VIGIL_REDACT_COMM_MAX];	/* the program's comm; all zero: any program */
	char word[VIGIL_REDACT_WORD_MAX];	/* zero-padded */
};

struct vigil_redact_conf {
	__u32 gen;	/* the generation in force */
	__u32 on;	/* 0: nothing is masked */
	__u32 urls;	/* mask a URL's password (scheme://user:PASSWORD@host) */
	__u32 written;	/* an agent wrote a set: a new start leaves it to the policy */
};

#ifndef __VMLINUX_H__
_Static_assert(sizeof(struct vigil_redact_key) == 56, "vigil_redact_key layout");
_Static_assert(sizeof(struct vigil_redact_conf) == 16, "vigil_redact_conf layout");
#endif

#endif
