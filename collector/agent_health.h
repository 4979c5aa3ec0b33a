/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an agent stream's own health records say (docs/events.md, "Health
 * records"): when its last heartbeat arrived, heartbeats and health records
 * that never did, and the last stretch its user space was blind. Whether a
 * node is silent is decided here, from the stream: connected, but no
 * heartbeat for three of its intervals (its timer gone, or its health ring
 * not read). A stream that is not connected here may have moved to another
 * collector: that one's to judge, so it is "gone", never "silent".
 */
#ifndef VIGIL_AGENT_HEALTH_H
#define VIGIL_AGENT_HEALTH_H

#include <stdbool.h>
#include <stdint.h>
#include "buf.h"

struct vigil_formatter;

struct agent_health {
	uint64_t beats;		/* heartbeats received */
	uint64_t last_beat;	/* the last one's number (beats), 0: none yet */
	uint64_t beats_missing;	/* numbers skipped between two received */
	uint64_t interval_ns;	/* the last heartbeat's interval */
	double beat_rx;		/* when it arrived (collector's clock), 0: none */
	uint64_t health_seq;	/* the highest health_seq received */
	uint64_t health_missing;	/* health_seq numbers skipped */
	uint64_t blinds;	/* blind records received */
	uint64_t blind_from, blind_to;	/* the last one, the node's ktime */
};

/* Takes note of a checked record when it is a health record. */
void agent_health_note(struct agent_health *h, const void *event, double now);
/* "; heartbeats 12, ... last heartbeat 3 s ago" for the status line,
 * connected: the stream is heard here now; nothing before the first
 * health record. */
void agent_health_text(const struct agent_health *h, const struct vigil_formatter *f,
		       double now, bool connected, struct vigil_buf *b);

#endif
