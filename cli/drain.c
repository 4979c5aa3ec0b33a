// SPDX-License-Identifier: GPL-2.0
/*
 * vigil drain: reads the records waiting in a pinned ring out to a file in
 * the stream format (docs/stream.md: a hello, then the records as they lie),
 * and moves the ring's consumer past them. The way out when a vigild of
 * another event schema refuses the ring: drain it, then unpin it. The hello
 * names the ring's own schema version; when that is not this build's, its
 * type table is left empty, since this build cannot say that schema's sizes.
 * Run it with vigild stopped: it consumes the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "ids.h"
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
	if (schema && schema != VIGIL_SCHEMA_VERSION) {
		size_t table = h->ntypes * sizeof(struct vigil_stream_type);

		h->schema_version = schema;
		memmove(h + 1, (char *)(h + 1) + table, b->len - sizeof(*h) - table);
		b->len -= table;	/* a multiple of 8: the padding stays right */
		h->hello_len -= table;
		h->ntypes = 0;
	}
}

int do_drain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{}
	};
	const char *out = NULL;
	struct vigil_buf hello = {};
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0, schema = 0;
	struct vigil_ring r = {};
	uint64_t pos, end, records = 0;
	int c, fd = -1, ring_fd, schema_fd, err = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c != 'o')
			return vlog_err(-EINVAL, "usage: vigil drain -o FILE");
		out = optarg;
	}
	if (!out)
		return vlog_err(-EINVAL, "usage: vigil drain -o FILE");
	ring_fd = vigil_pinned_fd(cli_pin_dir, "vigil_ring");
	if (ring_fd < 0)
		return vlog_err(-errno, "no vigil ring pinned at %s", cli_pin_dir);
	schema_fd = vigil_pinned_fd(cli_pin_dir, "vigil_schema");
	if (schema_fd >= 0) {
		bpf_map_lookup_elem(schema_fd, &key, &schema);
		close(schema_fd);
	}
	if (bpf_obj_get_info_by_fd(ring_fd, &info, &len) || (err = vigil_ring_open(&r, ring_fd))) {
		err = vlog_err(err ? err : -errno, "cannot map the ring pinned at %s", cli_pin_dir);
		goto out;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = vlog_err(-errno, "cannot create %s (it must not exist)", out);
		goto out;
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
out_write:
	if (err)
		vlog_err(err, "cannot write %s", out);
	else
		printf("drained %llu records (schema %u) from %s to %s\n",
		       (unsigned long long)records, schema, cli_pin_dir, out);
out:
	if (fd >= 0)
		close(fd);
	vigil_ring_close(&r);
	vbuf_free(&hello);
	close(ring_fd);
	return err;
}
