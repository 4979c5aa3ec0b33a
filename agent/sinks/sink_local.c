// SPDX-License-Identifier: GPL-2.0
/* See sink_local.h. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "counters.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "sinks/sink_local.h"
#include "stream.h"

/* Output per batch is bounded so a deep backlog costs bounded memory. */
#define BATCH_BYTES (1u << 20)
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/* Decodes rec once for every reader: the JSON output in its form, the
 * compact view, and a copy of each form a `vigil events` subscriber wants. */
static void format(struct vigil_sink_local *l, const void *rec)
{
	struct vigil_buf *form[VIGIL_SUB_FORMS] = {};
	size_t at[VIGIL_SUB_FORMS] = {};
	unsigned own = l->fmt.opts.format == VIGIL_EXPORT_TETRAGON ? VIGIL_SUB_TETRAGON : VIGIL_SUB_VIGIL;

	if (l->json_out)
		form[own] = &l->json;
	for (unsigned i = 0; l->subs && i < VIGIL_SUB_FORMS; i++) {
		if (!vigil_subscribers_want(l->subs, i))
			continue;
		if (!form[i]) {
			l->sub_line[i].len = 0;
			form[i] = &l->sub_line[i];
		}
		at[i] = form[i]->len;
	}
	vigil_event_format_forms(&l->fmt, rec, form[VIGIL_SUB_VIGIL], form[VIGIL_SUB_TETRAGON],
				 l->compact_fd >= 0 ? &l->compact : NULL);
	if (l->on_record)
		l->on_record(l->on_record_ctx, &l->fmt, rec);
	for (unsigned i = 0; l->subs && i < VIGIL_SUB_FORMS; i++)
		if (form[i] && form[i]->len > at[i] && vigil_subscribers_want(l->subs, i))
			vigil_subscribers_publish(l->subs, i, form[i]->p + at[i],
						  form[i]->len - at[i]);
}

static int take(void *ctx, const void *rec, uint32_t len, uint64_t pos)
{
	struct vigil_sink_local *l = ctx;
	uint64_t seq = ((const struct vigil_hdr *)rec)->seq;
	const char *why;
	uint64_t gaps;

	(void)pos;
	if (vigil_event_check(rec, len, &why)) {
		if (!l->bad_records++)
			vlog_info("skipping a malformed ring record (%s)", why);
		return 0;
	}
	l->records++;
	if (!vigil_seq_window_add(&l->seqs, seq, &gaps))
		return 0;	/* seen already: the ring never repeats, but be sure */
	if (!l->batch_records++ || seq < l->batch_first_seq)
		l->batch_first_seq = seq;
	if (seq > l->batch_last_seq)
		l->batch_last_seq = seq;
	format(l, rec);
	return l->json.len > BATCH_BYTES || l->compact.len > BATCH_BYTES;
}

/* Drops the first n bytes of b: they are out. */
static void consumed(struct vigil_buf *b, size_t n)
{
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
}

static int write_compact(struct vigil_sink_local *l)
{
	while (l->compact.len) {
		ssize_t w = write(l->compact_fd, l->compact.p, l->compact.len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		consumed(&l->compact, w);
	}
	return 0;
}

/* Writes the batch out; what failed stays in its buffer, with no byte
 * written twice (a torn line is finished, never repeated). */
static int write_out(struct vigil_sink_local *l)
{
	int err = 0, e;

	if (l->json.len) {
		size_t done;

		err = vigil_export_write_some(l->json_out, l->json.p, l->json.len, &done);
		if (err)
			consumed(&l->json, done);
		else
			l->json.len = 0;
	}
	if ((e = write_compact(l)))
		err = err ? err : e;
	return err;
}

/* What the output dropped and has not said yet, as the next batch's first
 * line: where the loss is in the output, with the sequence numbers it
 * spans (a reader sees them as a gap, the line says why). */
static void loss_line(struct vigil_sink_local *l)
{
	struct timespec ts;
	char t[VIGIL_TIME_MAX];
	struct jw w;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	vigil_rfc3339(t, sizeof(t), (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec,
		      l->fmt.realtime_offset_ns);
	if (l->json_out && l->fmt.opts.format == VIGIL_EXPORT_TETRAGON) {
		vigil_tetragon_lost_line(&l->fmt, &l->json,
					 (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec,
					 l->unsaid_records);
	} else if (l->json_out) {
		jw_begin(&w, &l->json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_output_loss");
		jw_u64(&w, "records", l->unsaid_records);
		jw_u64(&w, "ring_bytes", l->unsaid_bytes);
		jw_u64(&w, "first_seq", l->unsaid_first_seq);
		jw_u64(&w, "last_seq", l->unsaid_last_seq);
		jw_u64(&w, "dropped_total", l->dropped_records);
		jw_end(&w);
		jw_cstr(&w, "node_name", l->fmt.node_name);
		jw_cstr(&w, "time", t);
		jw_end(&w);
		vbuf_putc(&l->json, '\n');
	}
	if (l->compact_fd >= 0)
		vbuf_printf(&l->compact, "%-8s output dropped %llu records (seq %llu-%llu)\n", "loss",
			    (unsigned long long)l->unsaid_records,
			    (unsigned long long)l->unsaid_first_seq,
			    (unsigned long long)l->unsaid_last_seq);
}

/* The ring would overflow for this sink: the pending batch goes, counted,
 * said in the log, in vigil status (lost_output) and in the output itself
 * once it takes writes again. */
static void drop_pending(struct vigil_sink_local *l, const char *why)
{
	struct vigil_sink *s = &l->sink;

	if (!l->unsaid_records || l->batch_first_seq < l->unsaid_first_seq)
		l->unsaid_first_seq = l->batch_first_seq;
	if (l->batch_last_seq > l->unsaid_last_seq)
		l->unsaid_last_seq = l->batch_last_seq;
	l->unsaid_records += l->batch_records;
	l->unsaid_bytes += l->pending_end - s->pos;
	l->dropped_records += l->batch_records;
	l->dropped_bytes += l->pending_end - s->pos;
	if (l->counters_fd >= 0)
		vigil_counter_add(l->counters_fd, VIGIL_CNT_OUTPUT_LOST, l->batch_records);
	/* A disk full for hours must not fill the log too: a line a minute. */
	if (vigil_stream_now() >= l->drop_said_at + 60) {
		l->drop_said_at = vigil_stream_now();
		vlog_info("local output: dropped %llu records (seq %llu-%llu) it could not write: "
			  "%s; %llu dropped so far", (unsigned long long)l->batch_records,
			  (unsigned long long)l->batch_first_seq,
			  (unsigned long long)l->batch_last_seq, why,
			  (unsigned long long)l->dropped_records);
	}
	s->pos = l->pending_end;
	l->pending = false;
	l->json.len = l->compact.len = 0;
	l->batch_records = l->batch_first_seq = l->batch_last_seq = 0;
	loss_line(l);
}

static int offer(struct vigil_sink *s, const struct vigil_ring *r, uint64_t end)
{
	struct vigil_sink_local *l = (struct vigil_sink_local *)s;

	for (;;) {
		/* Past half the ring the records held here would soon make BPF
		 * drop events for every reader: the local output gives way. */
		bool overflowing = end - s->pos > r->size / 2;
		int err;

		if (!l->pending) {
			uint64_t next = vigil_ring_walk(r, s->pos, end, take, l);

			if (next == s->pos && !l->json.len && !l->compact.len)
				return 0;	/* at end, or an uncommitted record */
			l->pending = true;
			l->pending_end = next;
		}
		if (vigil_stream_now() < l->retry_at && !overflowing)
			return 0;
		if (!(err = write_out(l))) {
			if (l->failing)
				vlog_info("local output: writing again after %llu failed writes",
					  (unsigned long long)l->failing);
			l->failing = 0;
			l->retry_at = 0;
			l->backoff_ms = BACKOFF_MIN_MS;
			l->unsaid_records = l->unsaid_bytes = 0;
			l->unsaid_first_seq = l->unsaid_last_seq = 0;
			l->batch_records = l->batch_first_seq = l->batch_last_seq = 0;
			l->pending = false;
			s->pos = l->pending_end;
			continue;
		}
		l->write_errors++;
		/* A reader that quit (vigild --json | head): nothing will
		 * take these again. The agent stops; what is unwritten
		 * waits in the pinned ring for the next one. */
		if (err == -EPIPE) {
			l->reader_gone = true;
			return 0;
		}
		if (!l->failing++)
			vlog_info("local output: cannot write events (%s): they wait in the ring, "
				  "retrying", strerror(-err));
		l->retry_at = vigil_stream_now() + l->backoff_ms / 1000.0;
		l->backoff_ms = l->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : l->backoff_ms * 2;
		if (!overflowing || l->pending_end == s->pos)
			return 0;
		drop_pending(l, "the ring would overflow");
	}
}

/* At stop: one more try. What still cannot be written stays in the pinned
 * ring for the next agent (vigild --unpin-on-exit frees it: then it is
 * lost); the stop line says how much. */
static void flush(struct vigil_sink *s, const struct vigil_ring *r)
{
	struct vigil_sink_local *l = (struct vigil_sink_local *)s;

	l->retry_at = 0;
	if (!l->reader_gone)
		offer(s, r, vigil_ring_producer(r));
	l->unwritten_bytes = vigil_ring_producer(r) - s->pos;
}

static const struct vigil_sink_ops local_ops = { .offer = offer, .flush = flush };

int vigil_sink_local_init(struct vigil_sink_local *l, const char *node_name,
			  struct vigil_export_file *json_out, int compact_fd, int counters_fd)
{
	*l = (struct vigil_sink_local){
		.sink = { .name = "local", .ops = &local_ops },
		.json_out = json_out,
		.compact_fd = compact_fd,
		.counters_fd = counters_fd,
		.backoff_ms = BACKOFF_MIN_MS,
	};
	int err = vigil_formatter_init(&l->fmt, node_name, VIGIL_PROC_CACHE_MAX);

	if (!err)
		vigil_formatter_memo(&l->fmt, true);
	return err;
}

void vigil_sink_local_free(struct vigil_sink_local *l)
{
	vigil_formatter_free(&l->fmt);
	vbuf_free(&l->json);
	vbuf_free(&l->compact);
	for (unsigned i = 0; i < VIGIL_SUB_FORMS; i++)
		vbuf_free(&l->sub_line[i]);
}
