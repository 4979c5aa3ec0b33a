// SPDX-License-Identifier: GPL-2.0
/* Starts the tamper records (tamper.h). */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/loader.h"
#include "core/tamper.h"
#include "tamper.skel.h"

int vigil_tamper_start(const char *pin_dir, uint64_t ring_size)
{
	struct tamper_bpf *t = NULL;
	uint32_t zero = 0, me = (uint32_t)getpid();
	bool resumed = false;
	int err;

	if ((err = vigil_skel_open(tamper, &t, pin_dir, ring_size)) ||
	    (err = vigil_skel_load(t->skeleton)))
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
