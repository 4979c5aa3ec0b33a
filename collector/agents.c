// SPDX-License-Identifier: GPL-2.0
/* Agent streams: found by (boot id, ring id), formatted with the agent's
 * own node name and clock, de-duplicated and gap-counted by sequence. */
#include <string.h>
#include <time.h>
#include "collector.h"
#include "json.h"
#include "log.h"

struct agent *collector_agent_find(struct collector *c, const __u8 boot_id[16], uint32_t ring_id)
{
	for (unsigned i = 0; i < c->max_agents; i++) {
		struct agent *x = &c->agents[i];

		if (x->used && x->ring_id == ring_id && !memcmp(x->boot_id, boot_id, 16))
			return x;
	}
	return NULL;
}

struct agent *collector_agent_get(struct collector *c, const struct vigil_stream_peer *p)
{
	struct agent *a = NULL, *spare = NULL;
	int64_t written;

	for (unsigned i = 0; i < c->max_agents; i++) {
		struct agent *x = &c->agents[i];

		if (x->used && x->ring_id == p->ring_id && !memcmp(x->boot_id, p->boot_id, 16))
			return x;
		/* a free slot, else the agent longest gone */
		if (!x->used ? (!spare || spare->used) :
			       (!x->conn && (!spare || (spare->used && x->last_seen < spare->last_seen))))
			spare = x;
	}
	if (!spare)
		return NULL;
	a = spare;
	if (a->used) {
		collector_agent_report(a);
		vigil_formatter_free(&a->fmt);
	}
	memset(a, 0, sizeof(*a));
	if (vigil_formatter_init(&a->fmt, p->node_name, AGENT_PROC_CACHE))
		return NULL;
	a->fmt.realtime_offset_ns = p->realtime_offset_ns;	/* the agent's clock, not ours */
	a->fmt.opts = c->format;
	a->used = true;
	memcpy(a->boot_id, p->boot_id, 16);
	a->ring_id = p->ring_id;
	vigil_boot_id_str(a->boot_id, a->boot_str);
	written = vigil_commit_get(&c->commit, a->boot_id, a->ring_id);
	a->written = written >= 0 ? (uint64_t)written : p->start_offset;
	a->out = a->written;
	return a;
}

/* A gap is an event too, in the stream's own place, so whoever reads the
 * output sees that something is missing and where. */
static void gap_event(struct collector *c, struct agent *a, const struct vigil_hdr *at,
		      uint64_t count)
{
	struct vigil_hdr h = *at;
	size_t from = c->batch.len;
	struct jw w;

	h.seq = a->win.gap_first;
	if (a->fmt.opts.format == VIGIL_EXPORT_TETRAGON) {
		/* Tetragon's schema has no seq: the gap is a count, and the log
		 * keeps where it was. */
		vlog_info("agent %s (boot %s): %llu records missing from seq %llu",
			  a->fmt.node_name, a->boot_str, (unsigned long long)count,
			  (unsigned long long)a->win.gap_first);
		vigil_tetragon_lost_line(&a->fmt, &c->batch, h.ktime, count);
		goto publish;
	}
	jw_begin(&w, &c->batch);
	jw_obj(&w, NULL);
	jw_obj(&w, "vigil_gap");
	jw_cstr(&w, "boot_id", a->boot_str);
	jw_u64(&w, "first_seq", a->win.gap_first);
	jw_u64(&w, "missing", count);
	jw_end(&w);
	vigil_json_envelope_end(&a->fmt, &w, &h);
publish:
	vigil_pub_line(c->pub, &c->batch, from, a->fmt.node_name, a->boot_str, a->ring_id, "g",
		       a->win.gap_first);
	a->gap_events++;
}

void collector_agent_offset_gap(struct collector *c, struct agent *a, uint64_t from, uint64_t to)
{
	struct timespec now;
	struct vigil_hdr h = {};
	size_t start = c->batch.len;
	struct jw w;

	/* Stamped now, in the agent's clock. */
	clock_gettime(CLOCK_REALTIME, &now);
	h.ktime = now.tv_sec * 1000000000ull + now.tv_nsec - a->fmt.realtime_offset_ns;
	if (a->fmt.opts.format == VIGIL_EXPORT_TETRAGON) {
		/* How many records the bytes held is unknown: no Tetragon line
		 * can say it; the log does. */
		vlog_info("agent %s (boot %s): stream bytes %llu-%llu lost on its side",
			  a->fmt.node_name, a->boot_str, (unsigned long long)from,
			  (unsigned long long)to);
		goto publish;
	}
	jw_begin(&w, &c->batch);
	jw_obj(&w, NULL);
	jw_obj(&w, "vigil_gap");
	jw_cstr(&w, "boot_id", a->boot_str);
	jw_u64(&w, "from_offset", from);
	jw_u64(&w, "to_offset", to);
	jw_u64(&w, "lost_bytes", to - from);
	jw_end(&w);
	vigil_json_envelope_end(&a->fmt, &w, &h);
publish:
	vigil_pub_line(c->pub, &c->batch, start, a->fmt.node_name, a->boot_str, a->ring_id, "o",
		       from);
	a->gap_events++;
	a->lost_bytes += to - from;
}

void collector_agent_record(struct collector *c, struct agent *a, const void *event)
{
	const struct vigil_hdr *h = event;
	uint64_t gaps;
	size_t from;

	if (!vigil_seq_window_add(&a->win, h->seq, &gaps))
		return;
	if (gaps)
		gap_event(c, a, h, gaps);
	a->records++;
	from = c->batch.len;
	vigil_event_format(&a->fmt, event, &c->batch, NULL);
	vigil_pub_line(c->pub, &c->batch, from, a->fmt.node_name, a->boot_str, a->ring_id, "r",
		       h->seq);
}

void collector_agent_rewind(struct agent *a)
{
	uint64_t gaps = a->win.gaps, dups = a->win.dups;

	/* The window forgets what it saw, or the records sent again would be
	 * dropped as duplicates; its counts stay. Below a->out, the offsets
	 * tell re-sends apart. */
	memset(&a->win, 0, sizeof(a->win));
	a->win.gaps = gaps;
	a->win.dups = dups;
	a->written = a->out;
}

void collector_agent_report(const struct agent *a)
{
	vlog_info("agent %s (boot %s, ring %u): %llu records, %llu duplicates, %llu re-sent, "
		  "%llu missing in sequence, %llu bytes lost on its side",
		  a->fmt.node_name, a->boot_str, a->ring_id, (unsigned long long)a->records,
		  (unsigned long long)a->win.dups, (unsigned long long)a->resent,
		  (unsigned long long)a->win.gaps, (unsigned long long)a->lost_bytes);
}

void collector_agents_free(struct collector *c)
{
	for (unsigned i = 0; i < c->max_agents; i++) {
		if (!c->agents[i].used)
			continue;
		collector_agent_report(&c->agents[i]);
		vigil_formatter_free(&c->agents[i].fmt);
	}
}
