// SPDX-License-Identifier: GPL-2.0
/* The health ring into the main ring (health_relay.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "counters.h"
#include "log.h"
#include "pins.h"
#include "core/health_relay.h"

int vigil_health_relay_open(struct vigil_health_relay *r, const char *pin_dir)
{
	int err;

	*r = (struct vigil_health_relay){ .fd = vigil_pinned_fd(pin_dir, "vigil_health_ring") };
	if (r->fd < 0)
		return vlog_err(-errno, "cannot open the health ring pinned at %s", pin_dir);
	err = vigil_ring_open(&r->ring, r->fd);
	if (err) {
		close(r->fd);
		r->fd = -1;
		return vlog_err(err, "cannot map the health ring");
	}
	return 0;
}

struct relay_walk {
	struct vigil_health_relay *r;
	struct vigil_bpf *b;
	struct vigil_health_inject in;
	int copied, err;
};

static int relay_one(void *ctx, const void *rec, uint32_t len, uint64_t pos)
{
	struct relay_walk *w = ctx;
	struct vigil_health *h = (struct vigil_health *)w->in.rec;
	int err;

	(void)pos;
	if (len > VIGIL_HEALTH_REC_MAX || (len & 7) || len < sizeof(struct vigil_hdr)) {
		/* A writer that broke vigil_health_reserve's rule: said once,
		 * counted, skipped (it would not fit the copy). */
		if (!w->r->bad++)
			vlog_info("skipping a health ring record of %u bytes (type %u): more than "
				  "%u, or not a multiple of 8", len,
				  len >= 2 ? *(const uint16_t *)rec : 0, VIGIL_HEALTH_REC_MAX);
		return 0;
	}
	memset(&h->hdr, 0, sizeof(h->hdr));
	h->health_lost = w->r->lost;
	memcpy(h->rec, rec, len);
	w->in.len = sizeof(*h) + len;
	err = vigil_bpf_inject_health(w->b, &w->in);
	if (err == -ENOSPC)
		return -1;	/* the main ring is full: kept for the next call */
	if (err) {
		w->err = err;
		return -1;
	}
	w->copied++;
	return 0;
}

int vigil_health_relay_run(struct vigil_health_relay *r, struct vigil_bpf *b)
{
	uint64_t c[VIGIL_CNT_MAX], start, end, pos;
	struct relay_walk w = { .r = r, .b = b };

	if (r->fd < 0)
		return 0;
	start = vigil_ring_consumer(&r->ring);
	end = vigil_ring_producer(&r->ring);
	if (start == end)
		return 0;	/* the common case: two loads */
	if (!vigil_counters_read(b->counters_fd, c))
		r->lost = c[VIGIL_CNT_HEALTH_FULL];
	pos = vigil_ring_walk(&r->ring, start, end, relay_one, &w);
	/* Released record by record would cost a store each; a crash between
	 * the copies and this store copies them again (docs/stream.md). */
	if (pos > start)
		vigil_ring_release(&r->ring, pos);
	r->relayed += w.copied;
	return w.err ? vlog_err(w.err, "cannot copy a health record into the ring") : w.copied;
}

void vigil_health_relay_close(struct vigil_health_relay *r)
{
	if (r->fd < 0)
		return;
	vigil_ring_close(&r->ring);
	close(r->fd);
	r->fd = -1;
}
