/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exec and file rules into their maps (vigil/proc_policy.h) and the hooks
 * that match them (bpf/enforce_proc.bpf.c). A policy is compiled and every
 * cgroup it names resolved first (vigil_proc_compile); then the generation
 * not in force is written whole (vigil_proc_write), and the flip
 * (vigil_proc_flip), one map update, puts it in force. The rule_maps.c
 * apply calls the three so network and process rules change together.
 */
#ifndef VIGIL_PROC_RULES_H
#define VIGIL_PROC_RULES_H

#include <stdint.h>
#include <stddef.h>
#include <vigil/proc_policy.h>
#include "policy_parse.h"

struct vigil_proc_rules;
struct vigil_tamper_progs;
struct vigil_proc_compiled;

/* Loads the program (pinned maps under pin_dir); attaches nothing. tamper
 * (may be NULL): the open hooks take its open checks over while attached. */
int vigil_proc_rules_open(struct vigil_proc_rules **out, const char *pin_dir, uint64_t ring_size,
			  struct vigil_tamper_progs *tamper);
void vigil_proc_rules_close(struct vigil_proc_rules *pr);

/* p's exec and file rules, compiled (rule i in slot i); NULL when none
 * would be (no rules) is not an error: *out is set either way. */
int vigil_proc_compile(const struct vigil_policy *p, struct vigil_proc_compiled **out, char *err,
		       size_t errlen);
void vigil_proc_compiled_free(struct vigil_proc_compiled *c);
/* Writes c into the generation not in force, and attaches the hooks its
 * verbs need. Nothing in force changes. */
int vigil_proc_write(struct vigil_proc_rules *pr, const struct vigil_proc_compiled *c);
/* Puts the generation written in force. old and np: the policies before
 * and after, so a rule that stays keeps its counters. Then moves tamper's
 * open checks into the open hooks in force (and out of those going), and
 * detaches the hooks no rule needs. */
void vigil_proc_flip(struct vigil_proc_rules *pr, const struct vigil_policy *old,
		     const struct vigil_policy *np);
/* The counters of exec or file rule pos of the policy in force. */
int vigil_proc_rule_stats(struct vigil_proc_rules *pr, unsigned pos, struct vigil_prule_stats *sum);
/* Counts of every outcome (enum vigil_pout), refusals included. */
int vigil_proc_outcomes(struct vigil_proc_rules *pr, uint64_t *counts);
/* Each process's io_uring counts (vigil_puring), while file rules are in
 * force: opens file rules did not see. */
int vigil_proc_uring_each(struct vigil_proc_rules *pr,
			  void (*fn)(void *arg, const struct vigil_uring_key *k,
				     const struct vigil_uring_count *c),
			  void *arg);
/* Each process that exec'd a 32-bit binary (vigil_pcompat) while file
 * rules were in force: its opens were not seen. */
int vigil_proc_compat_each(struct vigil_proc_rules *pr,
			   void (*fn)(void *arg, const struct vigil_uring_key *k,
				      const struct vigil_compat_count *c),
			   void *arg);

#endif
