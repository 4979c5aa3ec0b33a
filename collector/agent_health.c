// SPDX-License-Identifier: GPL-2.0
/* See agent_health.h. */
#include <vigil/events.h>
#include "agent_health.h"
#include "event_format.h"
#include "ids.h"

void agent_health_note(struct agent_health *h, const void *event, double now)
{
	const struct vigil_health *w = event;
	const struct vigil_hdr *in = (const void *)w->rec;

	if (w->hdr.type != VIGIL_EV_HEALTH)
		return;
	/* A record copied twice (the agent died between the copy and the
	 * release) comes again with the same health_seq: not news. */
	if (in->seq <= h->health_seq)
		return;
	if (h->health_seq)
		h->health_missing += in->seq - h->health_seq - 1;
	h->health_seq = in->seq;
	if (in->type == VIGIL_EV_HEARTBEAT) {
		const struct vigil_heartbeat *hb = (const void *)in;

		if (h->last_beat && hb->beats > h->last_beat)
			h->beats_missing += hb->beats - h->last_beat - 1;
		h->last_beat = hb->beats;
		h->interval_ns = hb->interval_ns;
		h->beat_rx = now;
		h->beats++;
	} else if (in->type == VIGIL_EV_BLIND) {
		const struct vigil_blind *b = (const void *)in;

		h->blinds++;
		h->blind_from = b->from_ktime;
		h->blind_to = b->to_ktime;
	}
}

void agent_health_text(const struct agent_health *h, const struct vigil_formatter *f,
		       double now, bool connected, struct vigil_buf *b)
{
	char from[VIGIL_TIME_MAX], to[VIGIL_TIME_MAX];
	double interval = (double)h->interval_ns / 1e9;

	if (!h->health_seq)
		return;
	vbuf_printf(b, "; heartbeats %llu, %llu missing, health records missing %llu",
		    (unsigned long long)h->beats, (unsigned long long)h->beats_missing,
		    (unsigned long long)h->health_missing);
	if (h->beat_rx) {
		vbuf_printf(b, ", last heartbeat %.0f s ago", now - h->beat_rx);
		if (connected && interval > 0 && now - h->beat_rx > 3 * interval)
			vbuf_printf(b, " (silent: no heartbeat for 3 intervals of %.0f s)", interval);
	}
	if (h->blinds) {
		vigil_rfc3339(from, sizeof(from), h->blind_from, f->realtime_offset_ns);
		vigil_rfc3339(to, sizeof(to), h->blind_to, f->realtime_offset_ns);
		vbuf_printf(b, "; user space blind %llu times, last from %s to %s (%.1f s)",
			    (unsigned long long)h->blinds, from, to,
			    (double)(h->blind_to - h->blind_from) / 1e9);
	}
}
