// SPDX-License-Identifier: GPL-2.0
/* Agent streams: found by (boot id, ring id), formatted with the agent's
 * own node name and clock, de-duplicated and gap-counted by sequence. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "collector.h"
#include "conn_tls.h"
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

static bool zero(const __u8 *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Also over the state file: a restart does not free a proved name for
 * clear text. */
bool collector_name_certified(const struct collector *c, const char *name)
{
	__u8 sha[32];

	if (!c->tls)
		return false;
	conn_tls_name_sha256(name, sha);
	for (unsigned i = 0; i < c->max_agents; i++)
		if (c->agents[i].used && !memcmp(c->agents[i].cert_sha256, sha, 32))
			return true;
	for (unsigned i = 0; i < c->commit.n; i++)
		if (!memcmp(c->commit.e[i].cert_sha256, sha, 32))
			return true;
	return false;
}

const __u8 *collector_cert_bound(const struct collector *c, const struct agent *a,
				 const __u8 boot_id[16], uint32_t ring_id)
{
	const struct vigil_commit_entry *e;

	if (a)
		return zero(a->cert_sha256, 32) ? NULL : a->cert_sha256;
	e = vigil_commit_find(&c->commit, boot_id, ring_id);
	return e && !zero(e->cert_sha256, 32) ? e->cert_sha256 : NULL;
}

struct agent *collector_agent_get(struct collector *c, const struct vigil_stream_peer *p)
{
	struct agent *a = NULL, *spare = NULL;
	const struct vigil_commit_entry *e;

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
	if (vigil_formatter_init(&a->fmt, p->node_name, VIGIL_PROC_CACHE_MAX))
		return NULL;
	vigil_proc_cache_budget(&a->fmt.cache, c->proc_bytes);
	a->fmt.realtime_offset_ns = p->realtime_offset_ns;	/* the agent's clock, not ours */
	a->fmt.opts = c->format;
	a->used = true;
	memcpy(a->boot_id, p->boot_id, 16);
	a->ring_id = p->ring_id;
	vigil_boot_id_str(a->boot_id, a->boot_str);
	e = vigil_commit_find(&c->commit, a->boot_id, a->ring_id);
	a->written = e ? e->offset : p->start_offset;
	a->out = a->done = a->written;
	/* Nothing below the first hello's offset was written here: a later
	 * hello below it proves this one false, as a jump would. A collector
	 * restarted keeps the last hole it recorded. */
	if (!e && p->start_offset)
		a->holes[a->nholes++] = (struct agent_hole){ 0, p->start_offset, 0, false };
	else if (e && e->hole_from < e->hole_to && e->hole_to <= e->offset)
		a->holes[a->nholes++] = (struct agent_hole){ e->hole_from, e->hole_to, 0, false };
	if (e)
		memcpy(a->cert_sha256, e->cert_sha256, 32);
	return a;
}

int collector_agent_commit(struct collector *c, const struct agent *a)
{
	struct vigil_commit_entry e = { .ring_id = a->ring_id, .offset = a->done };

	memcpy(e.boot_id, a->boot_id, 16);
	memcpy(e.cert_sha256, a->cert_sha256, 32);
	if (a->nholes) {
		e.hole_from = a->holes[a->nholes - 1].from;
		e.hole_to = a->holes[a->nholes - 1].to;
	}
	return vigil_commit_put(&c->commit, &e);
}

int collector_agent_bind(struct collector *c, struct agent *a, const char *name)
{
	__u8 was[32];
	int err;

	memcpy(was, a->cert_sha256, 32);
	conn_tls_name_sha256(name, a->cert_sha256);
	/* In the table now, not at the first ack: a binding only in memory
	 * would go with the agent's slot. */
	if ((err = collector_agent_commit(c, a))) {
		memcpy(a->cert_sha256, was, 32);
		return err;
	}
	snprintf(a->cert, sizeof(a->cert), "%s", name);
	/* Lines carry the authenticated name, also for a stream first heard
	 * in clear under another. */
	vigil_formatter_node_name(&a->fmt, name);
	return 0;
}

/* A gap is an event too, in the stream's own place, so whoever reads the
 * output sees that something is missing and where. */
static void gap_event(struct collector *c, struct agent *a, const struct vigil_hdr *at,
		      uint64_t count, uint64_t offset)
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
	vigil_pub_line(c->pub, &c->batch, from, a->fmt.node_name, a->boot_str, a->ring_id, offset,
		       "g", a->win.gap_first);
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
	vigil_pub_line(c->pub, &c->batch, start, a->fmt.node_name, a->boot_str, a->ring_id, from,
		       "o", from);
	a->gap_events++;
	a->lost_bytes += to - from;
}

void collector_agent_record(struct collector *c, struct agent *a, const void *event,
			    uint64_t offset, bool new_offset)
{
	const struct vigil_hdr *h = event;
	uint64_t gaps;
	size_t from;

	if (!vigil_seq_window_add(&a->win, h->seq, &gaps)) {
		if (!new_offset)
			return;
		/* A number the window calls seen or too old, at an offset never
		 * written: a sequence jump (forged, or out of order past the
		 * window) does not decide which records are kept. */
		a->win.dups--;
		a->out_of_window++;
	}
	if (gaps)
		gap_event(c, a, h, gaps, offset);
	if (!vigil_stream_type_known(h->type)) {
		/* A newer minor version's kind: its number is in the window (no
		 * false gap), its content is skipped, counted and said once. */
		if (!a->unknown_kinds++)
			vlog_info("agent %s (boot %s, ring %u) sends event type %u, a kind this "
				  "collector's schema %u.%u does not have: records of kinds it does not "
				  "know are counted and skipped (upgrade the collector to keep them)",
				  a->fmt.node_name, a->boot_str, a->ring_id, h->type,
				  VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR);
		return;
	}
	a->records++;
	agent_health_note(&a->health, event, vigil_stream_now());
	from = c->batch.len;
	vigil_event_format(&a->fmt, event, &c->batch, NULL);
	vigil_pub_line(c->pub, &c->batch, from, a->fmt.node_name, a->boot_str, a->ring_id, offset,
		       "r", h->seq);
}

/* The window forgets what it saw, or records taken again would be dropped
 * as duplicates; its counts stay. */
static void window_restart(struct agent *a)
{
	uint64_t gaps = a->win.gaps, dups = a->win.dups;

	memset(&a->win, 0, sizeof(a->win));
	a->win.gaps = gaps;
	a->win.dups = dups;
}

/* Forgets the holes from index i on that start at or past offset `from`,
 * and the bytes they counted as lost. Holes are kept in offset order. */
static void drop_holes_from(struct agent *a, unsigned i, uint64_t from)
{
	while (i < a->nholes && a->holes[i].from < from)
		i++;
	for (unsigned j = i; j < a->nholes; j++)
		if (a->holes[j].lost)
			a->lost_bytes -= a->holes[j].to - a->holes[j].from;
	a->nholes = i;
}

/* A hole [from, to) is proven false by a hello at an offset inside it: the
 * agent that skipped those offsets would not have them. Everything from the
 * hole's start is taken again; later holes go with it. */
static void take_back(struct agent *a, const struct conn *k, unsigned i)
{
	const struct agent_hole *h = &a->holes[i];

	vlog_info("agent %s (boot %s, ring %u): %s sends ring offset %llu, inside the jump "
		  "[%llu, %llu) an earlier hello claimed was dropped on the agent's side: that "
		  "jump was false (forged, or another sender with this identity); taking the "
		  "stream again from %llu",
		  a->fmt.node_name, a->boot_str, a->ring_id, k->peer,
		  (unsigned long long)k->offset, (unsigned long long)h->from,
		  (unsigned long long)h->to, (unsigned long long)h->from);
	a->false_jumps++;
	a->written = h->from;
	/* Numbers the false stream skipped were not missing. */
	a->win.gaps = h->seq_gaps;
	if (a->out > a->written)
		a->out = a->written;
	drop_holes_from(a, i, 0);
	/* The window saw numbers of the false stream. */
	window_restart(a);
}

bool collector_agent_in_hole(struct agent *a, const struct conn *k)
{
	for (unsigned i = 0; i < a->nholes; i++)
		if (k->offset >= a->holes[i].from && k->offset < a->holes[i].to)
			return take_back(a, k, i), true;
	return false;
}

void collector_agent_resume(struct collector *c, struct agent *a, const struct conn *k)
{
	uint64_t at = k->offset;

	if (collector_agent_in_hole(a, k) || at <= a->written)
		return;
	vlog_info("agent %s resumes at ring offset %llu, past %llu written: its records "
		  "between were dropped on its side",
		  a->fmt.node_name, (unsigned long long)at, (unsigned long long)a->written);
	collector_agent_offset_gap(c, a, a->written, at);
	if (a->nholes == AGENT_HOLES) {	/* the oldest is forgotten: taken as true */
		memmove(a->holes, a->holes + 1, sizeof(a->holes[0]) * (AGENT_HOLES - 1));
		a->nholes--;
	}
	a->holes[a->nholes++] = (struct agent_hole){ a->written, at, a->win.gaps, true };
	a->written = at;
}

void collector_agent_rewind(struct agent *a)
{
	/* Below a->out, the offsets tell re-sends apart. */
	window_restart(a);
	a->written = a->out;
	/* Jumps past it were reported in lines that did not go out: the
	 * agent's next hello makes them again. */
	drop_holes_from(a, 0, a->out);
}

void collector_agent_report(const struct agent *a)
{
	struct vigil_buf kinds = {};

	vigil_event_counts_text(&a->fmt, &kinds);
	vlog_info("agent %s (boot %s, ring %u): %llu records, %llu duplicates, %llu re-sent, "
		  "%llu missing in sequence, %llu bytes lost on its side, %llu out of sequence "
		  "window, %llu false offset jumps taken back, %llu of kinds unknown here skipped; "
		  "process cache: %zu processes (%zu KiB), %llu not cached (full), %llu lookups "
		  "found none (details missing from lines); written by kind: %.*s",
		  a->fmt.node_name, a->boot_str, a->ring_id, (unsigned long long)a->records,
		  (unsigned long long)a->win.dups, (unsigned long long)a->resent,
		  (unsigned long long)a->win.gaps, (unsigned long long)a->lost_bytes,
		  (unsigned long long)a->out_of_window, (unsigned long long)a->false_jumps,
		  (unsigned long long)a->unknown_kinds, a->fmt.cache.count, a->fmt.cache.bytes >> 10,
		  (unsigned long long)a->fmt.cache.misses,
		  (unsigned long long)a->fmt.cache.lookups_missed, (int)kinds.len, kinds.p);
	vbuf_free(&kinds);
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
