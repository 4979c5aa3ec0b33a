// SPDX-License-Identifier: GPL-2.0
/* Starts the tamper records (tamper.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

int vigil_tamper_start(const char *pin_dir, uint64_t ring_size)
{
	struct tamper_bpf *t = NULL;
	uint32_t zero = 0, me = (uint32_t)getpid();
	char dir[PATH_MAX];
	bool resumed = false;
	int err;

	/* The folder as the kernel's walk reaches it, for the unlink records:
	 * the programs compare the paths calls give with it. */
	if (!realpath(pin_dir, dir))
		return vlog_err(-errno, "cannot resolve the pin folder %s", pin_dir);
	if (strlen(dir) >= sizeof(t->rodata->vigil_pin_dir))
		vlog_warn("pin folder %s is too long: unlinks in it will not be recorded", dir);
	if ((err = vigil_skel_open(tamper, &t, pin_dir, ring_size)))
		goto out;
	if (strlen(dir) < sizeof(t->rodata->vigil_pin_dir)) {
		memcpy((char *)t->rodata->vigil_pin_dir, dir, strlen(dir));
		t->rodata->vigil_pin_dir_len = strlen(dir);
	}
	if ((err = vigil_skel_load(t->skeleton)))
		goto out;
	if (bpf_map_update_elem(bpf_map__fd(t->maps.vigil_agent_tgid), &zero, &me, BPF_ANY)) {
		err = vlog_err(-errno, "cannot record the agent's pid for the tamper records");
		goto out;
	}
	err = vigil_obj_attach(t->obj, pin_dir, &resumed);
out:
	tamper_bpf__destroy(t);
	return err;
}
