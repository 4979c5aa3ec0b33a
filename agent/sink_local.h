/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node's own outputs: JSON lines (stdout or a rotated file) and the
 * compact terminal view. Decodes each record once for both. Its position
 * advances when a batch has been written out.
 */
#ifndef VIGIL_SINK_LOCAL_H
#define VIGIL_SINK_LOCAL_H

#include "buf.h"
#include "event_format.h"
#include "export_file.h"
#include "pump.h"
#include "seq_window.h"

struct vigil_sink_local {
	struct vigil_sink sink;
	struct vigil_formatter fmt;
	struct vigil_export_file *json_out;	/* NULL: no JSON */
	int compact_fd;				/* -1: no compact view */
	struct vigil_buf json, compact;
	uint64_t records, bad_records;
	struct vigil_seq_window seqs;	/* proves what was lost or doubled */
};

int vigil_sink_local_init(struct vigil_sink_local *l, const char *node_name,
			  struct vigil_export_file *json_out, int compact_fd);
void vigil_sink_local_free(struct vigil_sink_local *l);

#endif
