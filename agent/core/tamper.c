// SPDX-License-Identifier: GPL-2.0
/* Starts the tamper records (tamper.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/proc_policy.h>
#include "core/loader.h"
#include "core/tamper.h"
#include "tamper.skel.h"

int vigil_tamper_claim(const char *pin_dir)
{
	int fd = vigil_pinned_fd(pin_dir, "vigil_agent_tgid"), err = 0;
	uint32_t zero = 0, me = (uint32_t)getpid();

	if (fd < 0)
		return errno == ENOENT ? 0 : vlog_err(-errno, "cannot open %s/vigil_agent_tgid", pin_dir);
	if (bpf_map_update_elem(fd, &zero, &me, BPF_ANY))
		err = vlog_err(-errno, "cannot record the agent's pid for the tamper records");
	close(fd);
	return err;
}

struct vigil_tamper_progs {
	struct tamper_bpf *skel;	/* loaded: the open hooks attach from it again */
	char pin_dir[256];
	int fold_fd;			/* vigil_tamper_fold */
};

int vigil_tamper_start(struct vigil_tamper_progs **out, const char *pin_dir, uint64_t ring_size)
{
	struct vigil_tamper_progs *t = calloc(1, sizeof(*t));
	uint32_t zero = 0, me = (uint32_t)getpid();
	char dir[PATH_MAX];
	bool resumed = false;
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->fold_fd = -1;
	snprintf(t->pin_dir, sizeof(t->pin_dir), "%s", pin_dir);
	/* The folder as the kernel's walk reaches it, for the unlink records:
	 * the programs compare the paths calls give with it. */
	if (!realpath(pin_dir, dir)) {
		err = vlog_err(-errno, "cannot resolve the pin folder %s", pin_dir);
		goto out;
	}
	if ((err = vigil_skel_open(tamper, &t->skel, pin_dir, ring_size)))
		goto out;
	if (strlen(dir) < sizeof(t->skel->rodata->vigil_pin_dir)) {
		memcpy((char *)t->skel->rodata->vigil_pin_dir, dir, strlen(dir));
		t->skel->rodata->vigil_pin_dir_len = strlen(dir);
	} else {
		vlog_warn("pin folder %s is too long: unlinks in it will not be recorded", dir);
	}
	if ((err = vigil_skel_load(t->skel->skeleton)))
		goto out;
	t->fold_fd = bpf_map__fd(t->skel->maps.vigil_tamper_fold);
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.vigil_agent_tgid), &zero, &me, BPF_ANY)) {
		err = vlog_err(-errno, "cannot record the agent's pid for the tamper records");
		goto out;
	}
	err = vigil_obj_attach(t->skel->obj, pin_dir, &resumed);
out:
	if (err)
		vigil_tamper_close(t);
	else
		*out = t;
	return err;
}

void vigil_tamper_close(struct vigil_tamper_progs *t)
{
	if (!t)
		return;
	tamper_bpf__destroy(t->skel);
	free(t);
}

static struct vigil_tamper_fold read_fold(const struct vigil_tamper_progs *t)
{
	struct vigil_tamper_fold f = {};
	uint32_t zero = 0;

	if (t)
		bpf_map_lookup_elem(t->fold_fd, &zero, &f);
	return f;
}

uint32_t vigil_tamper_folded(const struct vigil_tamper_progs *t)
{
	return read_fold(t).in_rule;
}

static struct bpf_program *open_hook(struct vigil_tamper_progs *t, unsigned verb)
{
	switch (verb) {
	case VIGIL_VERB_OPEN: return t->skel->progs.tamper_open;
	case VIGIL_VERB_OPENAT: return t->skel->progs.tamper_openat;
	case VIGIL_VERB_OPENAT2: return t->skel->progs.tamper_openat2;
	case VIGIL_VERB_CREAT: return t->skel->progs.tamper_creat;
	}
	return NULL;
}

static int write_fold(struct vigil_tamper_progs *t, uint32_t in_rule, uint32_t own_skips)
{
	struct vigil_tamper_fold f = { .in_rule = in_rule, .own_skips = own_skips };
	uint32_t zero = 0;

	if (bpf_map_update_elem(t->fold_fd, &zero, &f, BPF_ANY))
		return vlog_err(-errno, "cannot move the open checks for tampering");
	return 0;
}

/* Until every run of a tracepoint that began before now has ended: then
 * each run sees the hooks attached and the state written so far. A run
 * holds rcu_read_lock (trace_call_bpf); MEMBARRIER_CMD_GLOBAL is a
 * synchronize_rcu(). Where it is refused (nohz_full, a seccomp filter),
 * a wait far longer than any program runs. */
static void grace_period(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(100 * 1000);
}

static void calls_text(char *out, size_t n, uint32_t verbs)
{
	static const char *const names[] = { [VIGIL_VERB_OPEN] = "open",
		[VIGIL_VERB_OPENAT] = "openat", [VIGIL_VERB_OPENAT2] = "openat2",
		[VIGIL_VERB_CREAT] = "creat" };
	size_t len = 0;

	out[0] = 0;
	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_CREAT && len < n; v++)
		if (verbs & (1u << v))
			len += snprintf(out + len, n - len, "%s%s", len ? "," : "", names[v]);
	if (!out[0])
		snprintf(out, n, "none");
}

int vigil_tamper_fold_opens(struct vigil_tamper_progs *t, uint32_t verbs)
{
	struct vigil_tamper_fold was;
	uint32_t now, moving;
	char a[64], b[64];
	int err = 0, e;

	if (!t)
		return 0;
	was = read_fold(t);
	now = verbs & VIGIL_VERBS_FILE;
	/* Back to tamper's own hook: attached first. One that cannot be
	 * attached leaves the check in the rule's hook. */
	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_CREAT; v++)
		if ((was.in_rule & ~now & (1u << v)) &&
		    (e = vigil_prog_attach_pinned(open_hook(t, v), t->pin_dir, NULL, NULL)) < 0) {
			now |= 1u << v;
			err = e;
		}
	moving = (was.in_rule ^ now) | (was.own_skips ^ now);
	if (moving) {
		/* Both check where the check moves, for a grace period: a run
		 * that still has only one of the two hooks finds it checking. */
		if ((e = write_fold(t, was.in_rule | now, was.own_skips & now)))
			return e;
		grace_period();
		if ((e = write_fold(t, now, now)))
			return e;	/* both go on checking: safe, twice the cost */
		calls_text(a, sizeof(a), now);
		calls_text(b, sizeof(b), was.in_rule);
		vlog_info("tamper: the file rules' hooks check opens for calls %s (were for %s)", a, b);
	}
	/* Tamper's own hook of a call the rule's hook checks: unpinned. */
	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_CREAT; v++)
		if ((now & (1u << v)) && (e = vigil_prog_unpin(open_hook(t, v), t->pin_dir)) &&
		    e != -ENOENT)
			vlog_warn("cannot unpin %s's link (%s): it stays attached, and skips",
				  bpf_program__name(open_hook(t, v)), strerror(-e));
	return err;
}
