// SPDX-License-Identifier: GPL-2.0
/* Starts the tamper records (tamper.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/proc_policy.h>
#include "pins.h"
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
	char pin_dir[PATH_MAX];
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

uint32_t vigil_tamper_folded(const struct vigil_tamper_progs *t)
{
	uint32_t zero = 0, bits = 0;

	if (t)
		bpf_map_lookup_elem(t->fold_fd, &zero, &bits);
	return bits;
}

static struct bpf_program *open_hook(struct vigil_tamper_progs *t, unsigned verb)
{
	switch (verb) {
	case VIGIL_VERB_OPEN: return t->skel->progs.tamper_open;
	case VIGIL_VERB_OPENAT: return t->skel->progs.tamper_openat;
	case VIGIL_VERB_OPENAT2: return t->skel->progs.tamper_openat2;
	}
	return NULL;
}

static void link_path(struct vigil_tamper_progs *t, struct bpf_program *prog, char *path, size_t n)
{
	snprintf(path, n, "%s/" VIGIL_LINK_PREFIX "%s", t->pin_dir, bpf_program__name(prog));
}

/* prog attached and its link pinned, unless it is. */
static int attach_hook(struct vigil_tamper_progs *t, struct bpf_program *prog)
{
	char path[PATH_MAX + 64];
	struct bpf_link *link;
	int err;

	link_path(t, prog, path, sizeof(path));
	if (!access(path, F_OK))
		return 0;
	link = bpf_program__attach(prog);
	if (!link)
		return vlog_err(-errno, "cannot attach %s", bpf_program__name(prog));
	err = bpf_link__pin(link, path);
	bpf_link__destroy(link);	/* the pin holds it */
	return err ? vlog_err(err, "cannot pin link %s", path) : 0;
}

static int set_folded(struct vigil_tamper_progs *t, uint32_t bits)
{
	uint32_t zero = 0;

	if (bpf_map_update_elem(t->fold_fd, &zero, &bits, BPF_ANY))
		return vlog_err(-errno, "cannot move the open checks for tampering");
	return 0;
}

int vigil_tamper_fold_opens(struct vigil_tamper_progs *t, uint32_t verbs)
{
	const uint32_t opens = 1u << VIGIL_VERB_OPEN | 1u << VIGIL_VERB_OPENAT |
			       1u << VIGIL_VERB_OPENAT2;
	char path[PATH_MAX + 64];
	uint32_t was, now;
	int err = 0, e;

	if (!t)
		return 0;
	was = vigil_tamper_folded(t);
	now = verbs & opens;
	/* Back to tamper's own hook: attached before the bit clears. One that
	 * cannot be attached leaves the check where it is. */
	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_OPENAT2; v++)
		if ((was & ~now & (1u << v)) && (e = attach_hook(t, open_hook(t, v)))) {
			now |= 1u << v;
			err = e;
		}
	if (now != was) {
		if ((e = set_folded(t, now)))
			return e;	/* nothing moved: both hooks stay */
		vlog_info("tamper: the open checks are in the file rules' hooks for calls %#x "
			  "(were for %#x)", now, was);
	}
	/* Into the rule's hook: tamper's own is unpinned after the bit is set. */
	for (unsigned v = VIGIL_VERB_OPEN; v <= VIGIL_VERB_OPENAT2; v++) {
		if (!(now & (1u << v)))
			continue;
		link_path(t, open_hook(t, v), path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			vlog_warn("cannot unpin %s (%s): it stays attached, and skips", path,
				  strerror(errno));
	}
	return err;
}
