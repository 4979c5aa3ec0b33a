/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node's own outputs: JSON lines (stdout or a rotated file) and the
 * compact terminal view. Decodes each record once for both. Its position
 * advances when a batch has been written out. A batch that cannot be
 * written (a full disk) waits, its records held in the ring, and is retried
 * with capped backoff; only when holding it would fill the ring past half
 * (and make BPF drop events for every reader) is it dropped: counted, said
 * in the log, in vigil status (lost_output) and as a vigil_output_loss line
 * in the output once it takes writes again. A pipe whose reader has gone
 * (EPIPE) is not retried: reader_gone tells the agent to stop.
 */
#ifndef VIGIL_SINK_LOCAL_H
#define VIGIL_SINK_LOCAL_H

#include "buf.h"
#include "event_format.h"
#include "export_file.h"
#include "core/pump.h"
#include "seq_window.h"
#include "sinks/subscribers.h"

struct vigil_sink_local {
	struct vigil_sink sink;
	struct vigil_formatter fmt;
	struct vigil_export_file *json_out;	/* NULL: no JSON */
	int compact_fd;				/* -1: no compact view */
	struct vigil_buf json, compact;
	uint64_t records, bad_records;
	struct vigil_seq_window seqs;	/* proves what was lost or doubled */
	int counters_fd;		/* the pinned counters (lost_output), or -1 */
	/* the batch in the buffers: its records and where it ends in the ring */
	bool pending;
	uint64_t pending_end, batch_records, batch_first_seq, batch_last_seq;
	/* writes failing: since when, and when to try again */
	uint64_t failing, write_errors;
	double retry_at;		/* CLOCK_MONOTONIC s */
	double drop_said_at;		/* the last drop logged */
	unsigned backoff_ms;
	/* dropped, and dropped but not yet said in the output */
	uint64_t dropped_records, dropped_bytes;
	uint64_t unsaid_records, unsaid_bytes, unsaid_first_seq, unsaid_last_seq;
	uint64_t unwritten_bytes;	/* at stop: left in the ring, unwritten */
	bool reader_gone;		/* stdout's reader closed it (EPIPE): stop */
	/* `vigil events` subscribers (NULL: none), and a line for a form the
	 * outputs do not write */
	struct vigil_subscribers *subs;
	struct vigil_buf sub_line[VIGIL_SUB_FORMS];
	/* Called with each record once formatted (the process cache has it
	 * then): --metrics-label binary counts there (control/metrics_binary.h).
	 * NULL: none. */
	void (*on_record)(void *ctx, struct vigil_formatter *f, const void *rec);
	void *on_record_ctx;
};

int vigil_sink_local_init(struct vigil_sink_local *l, const char *node_name,
			  struct vigil_export_file *json_out, int compact_fd, int counters_fd);
void vigil_sink_local_free(struct vigil_sink_local *l);

#endif
