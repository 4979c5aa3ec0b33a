/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loads a BPF object whose programs the kernel it lands on may refuse, and
 * tells which program was refused and why, so the caller can turn off the
 * one feature that program gives, by name, in one line (docs/kernels.md).
 * A feature is decided by loading the real program that needs it, never by
 * a probe alone: libbpf 1.1's helper probe reads only two of the three ways
 * verifiers have worded a refused helper.
 *
 * libbpf's messages and the verifier's log are held back unless -v.
 */
#ifndef VIGIL_AGENT_FEATURE_LOAD_H
#define VIGIL_AGENT_FEATURE_LOAD_H

#include <stdbool.h>

struct bpf_object_skeleton;
struct bpf_program;

struct vigil_refusal {
	const struct bpf_program *prog;	/* the program the verifier refused;
					 * NULL: the load failed before or
					 * otherwise (maps, relocations) */
	char why[200];			/* the verifier's reason, one line */
	bool helper;			/* the reason: a helper or kfunc this
					 * program type cannot call */
};

/* bpf_object__load_skeleton(s), quietly: 0, or -errno with *r filled. */
int vigil_skel_load_told(struct bpf_object_skeleton *s, struct vigil_refusal *r);

/* Loads skeleton s, which gives feature: 1 when it loaded (said as
 * present, with effect_with), 0 when the kernel refused it (said as
 * missing, with the program and the verifier's reason, and effect_without;
 * the caller destroys the skeleton and goes on without the feature). */
int vigil_skel_load_feature(struct bpf_object_skeleton *s, const char *feature,
			    const char *effect_with, const char *effect_without);

/* Whether a verifier log line says a helper cannot be called here, in any
 * of the wordings kernels have used: "unknown func" (before 6.2), "invalid
 * func", "program of this type cannot use helper". */
bool vigil_verifier_line_refuses_helper(const char *line);

/* Test switch only (VIGIL_TEST_REFUSE): between open and load, makes each
 * call in prog to helper a call the verifier refuses to prog's type, so the
 * real load fails as on a kernel that refuses that helper. -errno, or 0. */
int vigil_prog_refuse_helper(struct bpf_program *prog, int helper);

#endif
