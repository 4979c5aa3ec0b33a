// SPDX-License-Identifier: GPL-2.0
/*
 * Loads BPF objects and tells a refusal by program and reason
 * (agent/core/feature_load.h). Owns no decision about features: callers say
 * what a refused program turns off.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "core/feature_load.h"
#include "core/kernel_features.h"
#include "log.h"

/* Room for a level-1 log of the one path that failed; 6.1 keeps a log's
 * head when it overflows, and the reason is at its end. */
#define VERIFIER_LOG_SIZE (4u << 20)

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

bool vigil_verifier_line_refuses_helper(const char *line)
{
	return strstr(line, "unknown func") || strstr(line, "invalid func") ||
	       strstr(line, "program of this type cannot use helper");
}

/* The verifier's reason in log: the line that refuses a helper, or else its
 * last line that is not the closing statistics. */
static void reason_of(const char *log, struct vigil_refusal *r)
{
	const char *line = log, *last = NULL, *end;
	size_t len, last_len = 0;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		len = end - line;
		if (!len || !strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17))
			continue;
		if (len < sizeof(r->why)) {
			char one[sizeof(r->why)];

			memcpy(one, line, len);
			one[len] = 0;
			if (vigil_verifier_line_refuses_helper(one)) {
				snprintf(r->why, sizeof(r->why), "%s", one);
				r->helper = true;
				return;
			}
		}
		last = line;
		last_len = len;
	}
	if (last)
		snprintf(r->why, sizeof(r->why), "%.*s", (int)last_len, last);
}

int vigil_skel_load_told(struct bpf_object_skeleton *s, struct vigil_refusal *r)
{
	struct bpf_object *obj = *s->obj;
	struct bpf_program *prog;
	libbpf_print_fn_t was = NULL;
	char *log = calloc(1, VERIFIER_LOG_SIZE);
	int err;

	memset(r, 0, sizeof(*r));
	if (!log)
		return -ENOMEM;
	/* Only a refused program fills the log (libbpf asks for one after a
	 * load fails), so one buffer serves them all. */
	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog))
			bpf_program__set_log_buf(prog, log, VERIFIER_LOG_SIZE);
	if (!vlog_verbose)
		was = libbpf_set_print(quiet_print);
	err = bpf_object__load_skeleton(s);
	if (!vlog_verbose)
		libbpf_set_print(was);
	if (err && log[0]) {
		/* libbpf loads in order and stops at the first refusal. */
		bpf_object__for_each_program(prog, obj)
			if (bpf_program__autoload(prog) && bpf_program__fd(prog) < 0) {
				r->prog = prog;
				break;
			}
		reason_of(log, r);
		vlog_debug("%s: verifier log of %s:\n%s", bpf_object__name(obj),
			   r->prog ? bpf_program__name(r->prog) : "?", log);
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_log_buf(prog, NULL, 0);
	free(log);
	return err;
}

int vigil_skel_load_feature(struct bpf_object_skeleton *s, const char *feature,
			    const char *effect_with, const char *effect_without)
{
	struct vigil_refusal r;
	char what[sizeof(r.why) + 200];
	int err = vigil_skel_load_told(s, &r);

	if (!err) {
		vigil_kernel_feature(feature, true, effect_with);
		return 1;
	}
	snprintf(what, sizeof(what), "%s (%s: %s)", feature,
		 r.prog ? bpf_program__name(r.prog) : "its load", r.why[0] ? r.why : strerror(-err));
	vigil_kernel_lacks(what, effect_without);
	return 0;
}

/* A helper that the verifier refuses to programs of type t: one of TC's
 * for XDP, as a kernel without the helper refuses it ("cannot use
 * helper"); elsewhere an id past every helper ("invalid func"). */
static int refused_helper_for(enum bpf_prog_type t)
{
	return t == BPF_PROG_TYPE_XDP ? BPF_FUNC_skb_store_bytes : 0x7fff;
}

int vigil_prog_refuse_helper(struct bpf_program *prog, int helper)
{
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	int err;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == 0 &&
		    insns[i].imm == helper)
			insns[i].imm = refused_helper_for(bpf_program__type(prog));
	err = bpf_program__set_insns(prog, insns, n);
	free(insns);
	return err;
}
