// SPDX-License-Identifier: GPL-2.0
/* Arms the heartbeat timer (heartbeat.h). */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/loader.h"
#include "core/heartbeat.h"
#include "heartbeat.skel.h"

int vigil_heartbeat_start(const char *pin_dir, uint64_t ring_size, uint64_t interval_ns)
{
	struct heartbeat_bpf *hb = NULL;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &interval_ns,
		    .ctx_size_in = sizeof(interval_ns));
	int err;

	if ((err = vigil_skel_open(heartbeat, &hb, pin_dir, ring_size)))
		goto out;
	hb->rodata->vigil_nr_cpus = libbpf_num_possible_cpus();
	if ((err = vigil_skel_load(hb->skeleton)))
		goto out;
	if (bpf_prog_test_run_opts(bpf_program__fd(hb->progs.heartbeat_start), &opts))
		err = vlog_err(-errno, "cannot run heartbeat_start");
	else if (opts.retval)
		err = vlog_err((int)opts.retval, "cannot arm the heartbeat timer");
out:
	heartbeat_bpf__destroy(hb);
	return err;
}
