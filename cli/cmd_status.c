// SPDX-License-Identifier: GPL-2.0
/* vigil status, vigil unpin: what the pins say, and removing them. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "counters.h"
#include "buf.h"
#include "log.h"
#include "pins.h"
#include "ring.h"

int cli_no_ring(int err)
{
	if (err == -ENOENT)
		return vlog_refuse(err, "no vigil ring pinned at %s", cli_pin_dir);
	return vlog_err(err, "cannot open the vigil ring pinned at %s", cli_pin_dir);
}

int do_status(int argc, char **argv)
{
	uint64_t c[VIGIL_CNT_MAX] = {}, seq = 0;
	int ring_fd, cnt_fd, seq_fd, schema_fd, err = 0;
	uint32_t key = 0, schema = 0;
	struct vigil_ring r = {};

	(void)argc;
	(void)argv;
	ring_fd = vigil_pinned_fd(cli_pin_dir, "vigil_ring");
	if (ring_fd < 0)
		return cli_no_ring(-errno);
	cnt_fd = vigil_pinned_fd(cli_pin_dir, "vigil_counters");
	seq_fd = vigil_pinned_fd(cli_pin_dir, "vigil_seq");
	schema_fd = vigil_pinned_fd(cli_pin_dir, "vigil_schema");
	if (cnt_fd < 0 || seq_fd < 0 || schema_fd < 0) {
		err = vlog_refuse(-ENOENT, "incomplete pins at %s", cli_pin_dir);
		goto out;
	}
	vigil_counters_read(cnt_fd, c);
	vigil_seq_read(seq_fd, &seq);
	bpf_map_lookup_elem(schema_fd, &key, &schema);
	printf("%-26s %s\n%-26s %u\n", "pin_dir", cli_pin_dir, "schema", schema);
	if (!vigil_ring_open(&r, ring_fd)) {
		uint64_t cons = vigil_ring_consumer(&r), prod = vigil_ring_producer(&r);

		printf("%-26s %llu\n%-26s %llu\n", "ring_size", (unsigned long long)r.size,
		       "ring_pending", (unsigned long long)(prod - cons));
		vigil_ring_close(&r);
	}
	printf("%-26s %llu\n%-26s %llu\n", "events_seq", (unsigned long long)seq, "recursion_misses",
	       (unsigned long long)vigil_recursion_misses(cli_pin_dir));
	/* Every counter slot a part uses, by name. */
	for (unsigned i = 0; i < VIGIL_CNT_MAX; i++)
		if (vigil_counter_name(i))
			printf("%-26s %llu\n", vigil_counter_name(i), (unsigned long long)c[i]);
	/* The running agent's streams, when one runs on these pins. */
	{
		struct vigil_buf req = {};

		vbuf_put(&req, "streams", sizeof("streams"));
		fflush(stdout);
		if (req.oom || cli_ask_agent(&req, true))
			printf("%-26s %s\n", "agent", "not running, or not answering within 1 s "
			       "(it answers between two polls of its ring: --poll-ms)");
		vbuf_free(&req);
	}
out:
	close(ring_fd);
	if (cnt_fd >= 0)
		close(cnt_fd);
	if (seq_fd >= 0)
		close(seq_fd);
	if (schema_fd >= 0)
		close(schema_fd);
	return err;
}

int do_unpin(int argc, char **argv)
{
	bool force = argc == 2 && !strcmp(argv[1], "--force");
	int n, pid;

	if (argc > 2 || (argc == 2 && !force))
		return vlog_usage("usage: vigil unpin [--force]");
	/* Pins removed under a running agent leave it writing to a ring no
	 * one will find, and its programs detached. */
	if (!force && (pid = cli_agent_pid()))
		return vlog_refuse(-EBUSY, "vigild (pid %d) runs on %s: stop it first, or "
				   "`vigil unpin --force` to remove its pins anyway", pid, cli_pin_dir);
	n = vigil_unpin_all(cli_pin_dir);
	if (n == -ENOMSG)
		return vlog_refuse(n, "%s holds no %s map: not a vigil pin folder, nothing removed",
				   cli_pin_dir, VIGIL_SCHEMA_PIN);
	if (n == -ENOENT)
		return vlog_refuse(n, "nothing pinned at %s", cli_pin_dir);
	if (n < 0)
		return vlog_err(n, "cannot remove pins at %s", cli_pin_dir);
	printf("removed %d pins from %s\n", n, cli_pin_dir);
	return 0;
}
