// SPDX-License-Identifier: GPL-2.0
/*
 * vigil drain: reads the records waiting in a pinned ring out to a file in
 * the stream format (docs/stream.md: a hello, then the records as they lie),
 * and moves the ring's consumer past them. The way out when a vigild of
 * another event schema refuses the ring: drain it, then unpin it. The hello
 * names the ring's own schema version; when that is not this build's, its
 * type table is left empty, since this build cannot say that schema's sizes.
 * Run it with vigild stopped: it consumes the ring.
 *
 * With --export-format it writes JSON lines instead, as vigild would have
 * (either form), for a ring of this build's schema.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "event_format.h"
#include "ids.h"
#include "opts.h"
#include "log.h"
#include "pins.h"
#include "ring.h"
#include "stream.h"

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		p = (const char *)p + w;
		n -= w;
	}
	return 0;
}

/* The hello of this ring, in the ring's own schema. */
static void drain_hello(struct vigil_buf *b, const struct vigil_ring *r, uint32_t ring_id,
			uint32_t schema, uint64_t start)
{
	struct vigil_stream_hello *h;
	char host[256] = "?";
	__u8 boot[16] = {};

	gethostname(host, sizeof(host) - 1);
	vigil_boot_id(boot);
	vigil_stream_hello_build(b, host, boot, ring_id, r->size, start, vigil_realtime_offset());
	h = (struct vigil_stream_hello *)b->p;
	if (schema && VIGIL_SCHEMA_MAJOR_OF(schema) != VIGIL_SCHEMA_MAJOR) {
		size_t table = h->ntypes * sizeof(struct vigil_stream_type);

		h->schema_version = schema;
		memmove(h + 1, (char *)(h + 1) + table, b->len - sizeof(*h) - table);
		b->len -= table;	/* a multiple of 8: the padding stays right */
		h->hello_len -= table;
		h->ntypes = 0;
	}
}

#define DRAIN_USAGE "usage: vigil drain [--export-format tetragon|vigil " \
	"[--enable-process-ns] [--enable-process-cred]] -o FILE"

struct drain_json {
	struct vigil_formatter fmt;
	struct vigil_buf out;
	uint64_t records, bad, unknown;
};

static int take_json(void *ctx, const void *rec, uint32_t len, uint64_t pos)
{
	struct drain_json *d = ctx;
	const char *why;

	(void)pos;
	if (len >= sizeof(struct vigil_hdr) &&
	    !vigil_stream_type_known(((const struct vigil_hdr *)rec)->type)) {
		if (!d->unknown++)	/* a newer minor version's kind */
			vlog_info("skipping records of event type %u, a kind this vigil's schema "
				  "%u.%u does not have", ((const struct vigil_hdr *)rec)->type,
				  VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR);
		return 0;
	}
	if (vigil_event_check(rec, len, &why)) {
		if (!d->bad++)
			vlog_info("skipping a malformed ring record (%s)", why);
		return 0;
	}
	d->records++;
	vigil_event_format(&d->fmt, rec, &d->out, NULL);
	return d->out.len > (1u << 20);
}

/* A record of the health ring as the agent would have copied it into the
 * main ring (a health record), but with seq 0: it has no place in the main
 * stream; its health_seq is its own. */
static int take_health_json(void *ctx, const void *rec, uint32_t len, uint64_t pos)
{
	static union {
		uint64_t align;
		struct vigil_health h;
		uint8_t b[sizeof(struct vigil_health) + VIGIL_HEALTH_REC_MAX];
	} w;

	if (len > VIGIL_HEALTH_REC_MAX || len < sizeof(struct vigil_hdr))
		return take_json(ctx, rec, len, pos);	/* refused there, with why */
	memset(&w.h, 0, sizeof(w.h));
	w.h.hdr.type = VIGIL_EV_HEALTH;
	w.h.hdr.size = sizeof(w.h) + len;
	w.h.hdr.ktime = ((const struct vigil_hdr *)rec)->ktime;
	memcpy(w.h.rec, rec, len);
	return take_json(ctx, &w, sizeof(w.h) + len, pos);
}

/* The waiting records as JSON lines, a bounded batch at a time; each batch
 * is released once written. Then those of the health ring (health, when
 * pinned), which the next vigild would have copied into the main ring. */
static int drain_json(int fd, struct vigil_ring *r, struct vigil_ring *health,
		      const struct vigil_format_opts *opts, uint64_t *records)
{
	struct drain_json d = {};
	char host[256] = "?";
	uint64_t pos = vigil_ring_consumer(r), end = vigil_ring_producer(r), next;
	int err;

	gethostname(host, sizeof(host) - 1);
	if ((err = vigil_formatter_init(&d.fmt, host, 65536)))
		return vlog_err(err, "no memory for the process cache");
	d.fmt.opts = *opts;
	for (; pos < end; pos = next) {
		next = vigil_ring_walk(r, pos, end, take_json, &d);
		if (next == pos)
			break;	/* a record still being written */
		if ((err = write_all(fd, d.out.p, d.out.len)))
			break;
		d.out.len = 0;
		vigil_ring_release(r, next);
	}
	if (health && !err) {
		pos = vigil_ring_consumer(health);
		end = vigil_ring_producer(health);
		for (; pos < end; pos = next) {
			next = vigil_ring_walk(health, pos, end, take_health_json, &d);
			if (next == pos)
				break;
			if ((err = write_all(fd, d.out.p, d.out.len)))
				break;
			d.out.len = 0;
			vigil_ring_release(health, next);
		}
	}
	*records = d.records;
	vigil_formatter_free(&d.fmt);
	vbuf_free(&d.out);
	return err;
}

int do_drain(int argc, char **argv)
{
	enum { O_FORMAT = 256, O_FORMAT_LAST = O_FORMAT + 2 };
	static const struct vigil_opt options[] = {
		{ "output", 'o', 'o', "FILE", "where the records go" },
		VIGIL_FORMAT_OPTS(O_FORMAT, 0),
	};
	struct vigil_getopt g;
	struct vigil_format_opts fmt = {};
	bool json = false;
	const char *out = NULL;
	struct vigil_buf hello = {};
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, schema = 0;
	struct vigil_ring r = {}, health = {};
	uint64_t pos, end, records = 0;
	int c, fd = -1, ring_fd, health_fd = -1, schema_fd, lock_fd, err = 0;

	optind = 1;
	opterr = 0;	/* the usage line below says it */
	if (vigil_getopt_make(&g, options, VIGIL_OPTS_N(options), ""))
		return -E2BIG;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case O_FORMAT ... O_FORMAT_LAST:
			if (vigil_format_option(c, O_FORMAT, optarg, &fmt))
				return -VIGIL_EUSAGE;
			json |= c == O_FORMAT;
			break;
		default: return vlog_usage(DRAIN_USAGE);
		}
	}
	if (!out || optind < argc || ((fmt.process_ns || fmt.process_cred) && !json))
		return vlog_usage(DRAIN_USAGE);
	/* Refused as a second vigild is: records drained from a ring the agent
	 * reads would be gone from its stream. Held until the drain ends, so
	 * no vigild starts meanwhile. */
	lock_fd = vigil_pins_lock(cli_pin_dir);
	if (lock_fd == -EBUSY)
		return vlog_refuse(-EBUSY, "vigild is running on %s (or another vigil drain): it reads "
				   "the ring; drain is for a ring no agent reads (stop vigild first)",
				   cli_pin_dir);
	ring_fd = vigil_pinned_fd(cli_pin_dir, "vigil_ring");
	if (ring_fd < 0) {
		err = cli_no_ring(-errno);
		if (lock_fd >= 0)
			close(lock_fd);
		return err;
	}
	schema_fd = vigil_pinned_fd(cli_pin_dir, "vigil_schema");
	if (schema_fd >= 0) {
		bpf_map_lookup_elem(schema_fd, &key, &schema);
		close(schema_fd);
	}
	if (bpf_obj_get_info_by_fd(ring_fd, &info, &len) || (err = vigil_ring_open(&r, ring_fd))) {
		err = vlog_err(err ? err : -errno, "cannot map the ring pinned at %s", cli_pin_dir);
		goto out;
	}
	/* Only this build's records can be decoded; a ring of another schema
	 * goes out in the stream format, its hello naming it. */
	if (json && schema && VIGIL_SCHEMA_MAJOR_OF(schema) != VIGIL_SCHEMA_MAJOR) {
		err = vlog_refuse(-EPROTO, "the ring at %s holds schema %u.%u records; this vigil "
			       "formats schema %u.%u: drain it without --export-format",
			       cli_pin_dir, VIGIL_SCHEMA_MAJOR_OF(schema), VIGIL_SCHEMA_MINOR_OF(schema),
			       VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR);
		goto out;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = vlog_err(-errno, "cannot create %s (it must not exist)", out);
		goto out;
	}
	health_fd = vigil_pinned_fd(cli_pin_dir, "vigil_health_ring");
	if (health_fd >= 0 && vigil_ring_open(&health, health_fd)) {
		close(health_fd);
		health_fd = -1;
	}
	if (json) {
		err = drain_json(fd, &r, health_fd >= 0 ? &health : NULL, &fmt, &records);
		if (!err && fsync(fd))
			err = -errno;
		goto out_write;
	}
	pos = vigil_ring_consumer(&r);
	end = vigil_ring_producer(&r);
	drain_hello(&hello, &r, info.id, schema, pos);
	if ((err = write_all(fd, hello.p, hello.len)))
		goto out_write;
	/* Whole committed records, written as they lie; the mirror mapping
	 * makes each range contiguous. */
	while (pos < end) {
		uint64_t from = pos;

		while (pos < end && pos - from < (1u << 20)) {
			uint32_t l = vigil_ring_rec_len(&r, pos);

			if (l & VIGIL_RB_BUSY)
				break;
			records += !(l & VIGIL_RB_DISCARD);
			pos += vigil_ring_rec_span(l);
		}
		if (pos == from)
			break;	/* a record still being written */
		if ((err = write_all(fd, vigil_ring_at(&r, from), pos - from)))
			goto out_write;
		vigil_ring_release(&r, pos);
	}
	if (fsync(fd))
		err = -errno;
	/* The stream format has one ring's offsets: the health ring's records
	 * cannot go with them. */
	if (health_fd >= 0 && vigil_ring_producer(&health) != vigil_ring_consumer(&health))
		vlog_info("%llu bytes of heartbeats and tamper records stay in the health ring: "
			  "the next vigild sends them; drain with --export-format to keep them "
			  "before an unpin",
			  (unsigned long long)(vigil_ring_producer(&health) -
					       vigil_ring_consumer(&health)));
out_write:
	if (err)
		vlog_err(err, "cannot write %s", out);
	else
		printf("drained %llu records (schema %u.%u) from %s to %s\n",
		       (unsigned long long)records, VIGIL_SCHEMA_MAJOR_OF(schema),
		       VIGIL_SCHEMA_MINOR_OF(schema), cli_pin_dir, out);
out:
	if (fd >= 0)
		close(fd);
	vigil_ring_close(&r);
	vigil_ring_close(&health);
	if (health_fd >= 0)
		close(health_fd);
	vbuf_free(&hello);
	close(ring_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	return err;
}
