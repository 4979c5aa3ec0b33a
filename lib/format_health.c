// SPDX-License-Identifier: GPL-2.0
/* The node's health records (vigil/health_events.h) as JSON and compact lines. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <vigil/events.h>
#include "buf.h"
#include "event_format.h"
#include "format_process.h"
#include "ids.h"
#include "json.h"

void vigil_format_heartbeat(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			    struct vigil_buf *compact)
{
	const struct vigil_heartbeat *ev = rec;
	char t[VIGIL_TIME_MAX];
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_heartbeat");
		jw_u64(&w, "producer_pos", ev->producer_pos);
		jw_u64(&w, "consumer_pos", ev->consumer_pos);
		jw_u64(&w, "last_seq", ev->last_seq);
		jw_u64(&w, "beats", ev->beats);
		jw_u64(&w, "beats_lost", ev->beats_lost);
		jw_u64(&w, "interval_ns", ev->interval_ns);
		if (ev->consumer_since) {
			vigil_rfc3339(t, sizeof(t), ev->consumer_since, f->realtime_offset_ns);
			jw_str(&w, "reader_still_since", t, strlen(t));
			jw_u64(&w, "ticks_blind", ev->ticks_blind);
		}
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact)
		vbuf_printf(compact, "%-8s beat=%llu waiting=%llu bytes%s\n", "heartbeat",
			    (unsigned long long)ev->beats,
			    (unsigned long long)(ev->producer_pos - ev->consumer_pos),
			    ev->consumer_since ? " reader still" : "");
}

void vigil_format_blind(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			struct vigil_buf *compact)
{
	const struct vigil_blind *ev = rec;
	char from[VIGIL_TIME_MAX], to[VIGIL_TIME_MAX];
	double secs = (double)(ev->to_ktime - ev->from_ktime) / 1e9;
	struct jw w;

	vigil_rfc3339(from, sizeof(from), ev->from_ktime, f->realtime_offset_ns);
	vigil_rfc3339(to, sizeof(to), ev->to_ktime, f->realtime_offset_ns);
	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_blind");
		jw_str(&w, "from", from, strlen(from));
		jw_str(&w, "to", to, strlen(to));
		jw_u64(&w, "duration_ns", ev->to_ktime - ev->from_ktime);
		jw_u64(&w, "ticks", ev->ticks);
		jw_u64(&w, "beats_lost", ev->beats_lost);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact)
		vbuf_printf(compact, "%-8s user space was not reading for %.1f s (%s to %s)\n", "blind",
			    secs, from, to);
}

void vigil_format_tamper(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			 struct vigil_buf *compact)
{
	const struct vigil_tamper *ev = rec;
	size_t clen = strnlen(ev->comm, sizeof(ev->comm));
	const char *what = ev->what == VIGIL_TAMPER_SIGNAL ? "signal" :
			   ev->what == VIGIL_TAMPER_LINK_DETACH ? "link_detach" :
			   ev->what == VIGIL_TAMPER_LINK_UPDATE ? "link_update" : "unknown";
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_tamper");
		vigil_json_process(f, &w, "process", &ev->proc);
		jw_str(&w, "comm", ev->comm, clen);
		jw_str(&w, "what", what, strlen(what));
		jw_u64(&w, "agent_pid", ev->agent_pid);
		if (ev->what == VIGIL_TAMPER_SIGNAL) {
			jw_u64(&w, "signal", ev->arg);
			jw_u64(&w, "result", (uint32_t)ev->result);
		} else {
			jw_u64(&w, "link_id", ev->arg);
		}
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s pid=%u comm=", "tamper", ev->proc.pid);
		vigil_compact_text(compact, ev->comm, clen);
		vbuf_printf(compact, " %s %u (agent pid %u)\n", what, ev->arg, ev->agent_pid);
	}
}

static const char *const prog_names[VIGIL_PROG_SLOTS] = {
#define PROG_NAME(slot, name) [slot] = #name,
	VIGIL_PROG_SLOT_LIST(PROG_NAME)
#undef PROG_NAME
};

void vigil_format_prog_runs(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			    struct vigil_buf *compact)
{
	const struct vigil_prog_runs *ev = rec;
	unsigned idle = 0;
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_prog_runs");
		jw_u64(&w, "beat", ev->beat);
		jw_u64(&w, "interval_ns", ev->interval_ns);
		/* by name; a slot this build does not name (a newer agent's
		 * program) by its number */
		jw_obj(&w, "runs");
		for (unsigned i = 0; i < VIGIL_PROG_SLOTS; i++) {
			char name[16];

			if (!prog_names[i] && !ev->runs[i])
				continue;
			if (!prog_names[i])
				snprintf(name, sizeof(name), "slot_%u", i);
			jw_u64(&w, prog_names[i] ? prog_names[i] : name, ev->runs[i]);
		}
		jw_end(&w);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		for (unsigned i = 0; i < VIGIL_PROG_SLOTS_USED; i++)
			idle += !ev->runs[i];
		vbuf_printf(compact, "%-8s beat=%llu programs that did not run: %u of %u\n", "runs",
			    (unsigned long long)ev->beat, idle, (unsigned)VIGIL_PROG_SLOTS_USED);
	}
}

int vigil_check_health(const void *rec, uint32_t len, const char **why)
{
	const struct vigil_health *ev = rec;
	const struct vigil_hdr *in = (const void *)ev->rec;
	uint32_t n = len - sizeof(*ev);

	if (n < sizeof(*in))
		return *why = "health event without a record", -EINVAL;
	if (in->type == VIGIL_EV_HEALTH)
		return *why = "health event inside a health event", -EINVAL;
	/* A kind a newer minor version added (a new tamper record): checked
	 * as far as its header goes, and skipped when formatted, as the
	 * stream skips the kinds it does not know. */
	if (!vigil_event_kind_name(in->type))
		return in->size == n ? 0 : (*why = "health record size disagrees", -EINVAL);
	return vigil_event_check(in, n, why);
}

/* The record as its own kind writes it, with the health event's seq and
 * its own as health_seq; its time is the record's, when BPF wrote it. */
void vigil_format_health(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			 struct vigil_buf *compact)
{
	const struct vigil_health *ev = rec;

	if (!vigil_event_kind_name(((const struct vigil_hdr *)ev->rec)->type))
		return;	/* a kind this build does not know: vigil_check_health */
	f->relay = &ev->hdr;
	vigil_event_format_forms(f, ev->rec, json, NULL, compact);
	f->relay = NULL;
}
