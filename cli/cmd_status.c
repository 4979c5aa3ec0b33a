// SPDX-License-Identifier: GPL-2.0
/* vigil status, vigil unpin: what the pins say, and removing them. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "counters.h"
#include "ids.h"
#include "buf.h"
#include "json.h"
#include "log.h"
#include "pins.h"
#include "ring.h"

int cli_no_ring(int err)
{
	if (err == -ENOENT)
		return vlog_refuse(err, "no vigil ring pinned at %s", cli_pin_dir);
	return vlog_err(err, "cannot open the vigil ring pinned at %s", cli_pin_dir);
}

/* One line of status: text ("name value") or a JSON member. */
struct status_out {
	bool json;
	struct jw w;
	struct vigil_buf b;
};

static void put_u64(struct status_out *o, const char *name, uint64_t v)
{
	if (o->json)
		jw_u64(&o->w, name, v);
	else
		printf("%-26s %llu\n", name, (unsigned long long)v);
}

static void put_str(struct status_out *o, const char *name, const char *v)
{
	if (o->json)
		jw_cstr(&o->w, name, v);
	else
		printf("%-26s %s\n", name, v);
}

/* The agent's "filtered: NAME=N ..." line (agent/enforce/filter_maps.h)
 * as an object of counts by filter; a name may hold '=': the last one
 * splits. */
static void filtered_json(struct status_out *o, const char *line, size_t n)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
	jw_obj(&o->w, "filtered");
	for (tok = strtok_r(buf + strlen("filtered:"), " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strrchr(tok, '=');

		if (!eq || eq == tok)
			continue;	/* "(no filters)" */
		*eq = 0;
		jw_u64(&o->w, tok, strtoull(eq + 1, NULL, 10));
	}
	jw_end(&o->w);
}

/* The running agent's own lines (its streams, records by kind, what the
 * kernel lacks): false when no agent answers on these pins. */
static bool agent_lines(struct status_out *o)
{
	struct vigil_buf req = {}, reply = {};
	bool up;

	vbuf_put(&req, "streams", sizeof("streams"));
	fflush(stdout);
	up = !req.oom && !cli_ask_agent_reply(&req, &reply);
	if (!o->json) {
		if (up)
			fwrite(reply.p, 1, reply.len, stdout);
		else
			put_str(o, "agent", "not running, or not answering within 1 s (it answers "
				"between two polls of its ring: --poll-ms)");
	} else {
		jw_bool(&o->w, "agent_running", up);
		jw_arr(&o->w, "agent");
		for (size_t at = 0; up && at < reply.len;) {
			const char *nl = memchr(reply.p + at, '\n', reply.len - at);
			size_t n = nl ? (size_t)(nl - reply.p - at) : reply.len - at;

			jw_str(&o->w, NULL, reply.p + at, n);
			at += n + 1;
		}
		jw_arr_end(&o->w);
		for (size_t at = 0; up && at < reply.len;) {
			const char *nl = memchr(reply.p + at, '\n', reply.len - at);
			size_t n = nl ? (size_t)(nl - reply.p - at) : reply.len - at;

			if (n > strlen("filtered:") && !memcmp(reply.p + at, "filtered:", 9))
				filtered_json(o, reply.p + at, n);
			at += n + 1;
		}
	}
	vbuf_free(&req);
	vbuf_free(&reply);
	return up;
}

/* The heartbeat timer's state (vigil/health_events.h): how long user
 * space was last blind, and whether it is now. Times are CLOCK_MONOTONIC. */
static void heartbeat_lines(struct status_out *o)
{
	int fd = vigil_pinned_fd(cli_pin_dir, "vigil_hb_state");
	struct vigil_hb_state st = {};
	char t[VIGIL_TIME_MAX];
	struct timespec now;
	uint32_t key = 0;

	if (fd < 0)
		return;
	if (!bpf_map_lookup_elem(fd, &key, &st)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		put_u64(o, "heartbeats", st.beats);
		put_u64(o, "heartbeats_lost", st.beats_lost);
		put_u64(o, "blind_last_ms", (st.last_to - st.last_from) / 1000000);
		if (st.last_to) {
			put_u64(o, "blind_last_ended_s_ago",
				((uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec - st.last_to) / 1000000000ull);
			/* the same times the blind record and the collector give */
			vigil_rfc3339(t, sizeof(t), st.last_from, vigil_realtime_offset());
			put_str(o, "blind_last_from", t);
			vigil_rfc3339(t, sizeof(t), st.last_to, vigil_realtime_offset());
			put_str(o, "blind_last_to", t);
		}
		put_u64(o, "blind_now_ms", st.since ? ((uint64_t)now.tv_sec * 1000000000ull +
						       now.tv_nsec - st.since) / 1000000 : 0);
		/* the fallback when the health ring was full too */
		if (st.lost_since)
			put_u64(o, "heartbeats_lost_since_s_ago",
				((uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec - st.lost_since) /
				1000000000ull);
	}
	close(fd);
}

/* The health ring (bpf/lib/health.bpf.h): what waits there for the agent
 * to copy into the main ring. Names that do not contain "ring_pending" or
 * "ring_size": scripts match the main ring's lines by those. */
static void health_ring_lines(struct status_out *o)
{
	int fd = vigil_pinned_fd(cli_pin_dir, "vigil_health_ring");
	struct vigil_ring r = {};

	if (fd < 0)
		return;
	if (!vigil_ring_open(&r, fd)) {
		put_u64(o, "health_size", r.size);
		put_u64(o, "health_waiting_bytes", vigil_ring_producer(&r) - vigil_ring_consumer(&r));
		vigil_ring_close(&r);
	}
	close(fd);
}

int do_status(int argc, char **argv)
{
	uint64_t c[VIGIL_CNT_MAX] = {}, seq = 0;
	int ring_fd, cnt_fd, seq_fd, schema_fd, err = 0;
	uint32_t key = 0, schema = 0;
	struct vigil_ring r = {};
	struct status_out o = {};

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") && strcmp(argv[i], "-j"))
			return vlog_usage("usage: vigil status [--json] (not '%s')", argv[i]);
		o.json = true;
	}
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
	if (o.json) {
		jw_begin(&o.w, &o.b);
		jw_obj(&o.w, NULL);
	}
	put_str(&o, "pin_dir", cli_pin_dir);
	put_u64(&o, "schema", schema);
	if (!vigil_ring_open(&r, ring_fd)) {
		put_u64(&o, "ring_size", r.size);
		put_u64(&o, "ring_pending", vigil_ring_producer(&r) - vigil_ring_consumer(&r));
		vigil_ring_close(&r);
	}
	put_u64(&o, "events_seq", seq);
	heartbeat_lines(&o);
	health_ring_lines(&o);
	{
		struct vigil_linked_progs progs = {};

		put_u64(&o, "recursion_misses", vigil_recursion_misses(cli_pin_dir, &progs));
		vigil_linked_progs_free(&progs);
	}
	/* Every counter slot a part uses, by name. */
	for (unsigned i = 0; i < VIGIL_CNT_MAX; i++)
		if (vigil_counter_name(i))
			put_u64(&o, vigil_counter_name(i), c[i]);
	/* Pins without an agent: events pile up in the ring, unread. */
	if (!agent_lines(&o))
		err = -ESRCH;
	if (o.json) {
		jw_end(&o.w);
		fwrite(o.b.p, 1, o.b.len, stdout);
		putchar('\n');
		vbuf_free(&o.b);
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
