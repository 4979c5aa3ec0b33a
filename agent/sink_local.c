// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <unistd.h>
#include "log.h"
#include "sink_local.h"

/* Output per batch is bounded so a deep backlog costs bounded memory. */
#define BATCH_BYTES (1u << 20)
#define PROC_CACHE_MAX 65536

static int take(void *ctx, const void *rec, uint32_t len, uint64_t pos)
{
	struct vigil_sink_local *l = ctx;
	const char *why;
	uint64_t gaps;

	(void)pos;
	if (vigil_event_check(rec, len, &why)) {
		if (!l->bad_records++)
			vlog_info("skipping a malformed ring record (%s)", why);
		return 0;
	}
	l->records++;
	if (!vigil_seq_window_add(&l->seqs, ((const struct vigil_hdr *)rec)->seq, &gaps))
		return 0;	/* seen already: the ring never repeats, but be sure */
	vigil_event_format(&l->fmt, rec, l->json_out ? &l->json : NULL,
			   l->compact_fd >= 0 ? &l->compact : NULL);
	return l->json.len > BATCH_BYTES || l->compact.len > BATCH_BYTES;
}

static void write_out(struct vigil_sink_local *l)
{
	if (l->json.len && vigil_export_write(l->json_out, l->json.p, l->json.len))
		vlog_err(-errno, "cannot write JSON events");
	if (l->compact.len) {
		const char *p = l->compact.p;
		size_t n = l->compact.len;

		while (n) {
			ssize_t w = write(l->compact_fd, p, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			p += w;
			n -= w;
		}
	}
	l->json.len = l->compact.len = 0;
}

static int offer(struct vigil_sink *s, const struct vigil_ring *r, uint64_t end)
{
	struct vigil_sink_local *l = (struct vigil_sink_local *)s;

	for (;;) {
		uint64_t next = vigil_ring_walk(r, s->pos, end, take, l);

		write_out(l);
		if (next == s->pos)
			return 0;	/* at end, or an uncommitted record */
		s->pos = next;
	}
}

static const struct vigil_sink_ops local_ops = { .offer = offer };

int vigil_sink_local_init(struct vigil_sink_local *l, const char *node_name,
			  struct vigil_export_file *json_out, int compact_fd)
{
	*l = (struct vigil_sink_local){
		.sink = { .name = "local", .ops = &local_ops },
		.json_out = json_out,
		.compact_fd = compact_fd,
	};
	return vigil_formatter_init(&l->fmt, node_name, PROC_CACHE_MAX);
}

void vigil_sink_local_free(struct vigil_sink_local *l)
{
	vigil_formatter_free(&l->fmt);
	vbuf_free(&l->json);
	vbuf_free(&l->compact);
}
