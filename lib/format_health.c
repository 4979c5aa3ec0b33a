// SPDX-License-Identifier: GPL-2.0
/* The node's health records (vigil/health_events.h) as JSON and compact lines. */
#include <errno.h>
#include <stdbool.h>
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

/* Each enum vigil_tamper_what: its name, and the name of what its arg
 * holds ("" for none). */
static const struct {
	const char *what, *arg;
} tamper_whats[] = {
	[VIGIL_TAMPER_SIGNAL] = { "signal", "signal" },
	[VIGIL_TAMPER_LINK_DETACH] = { "link_detach", "link_id" },
	[VIGIL_TAMPER_LINK_UPDATE] = { "link_update", "link_id" },
	[VIGIL_TAMPER_PTRACE_ATTACH] = { "ptrace_attach", "target_pid" },
	[VIGIL_TAMPER_PTRACE_SEIZE] = { "ptrace_seize", "target_pid" },
	[VIGIL_TAMPER_VM_WRITEV] = { "process_vm_writev", "target_pid" },
	[VIGIL_TAMPER_VM_READV] = { "process_vm_readv", "target_pid" },
	[VIGIL_TAMPER_PIDFD_GETFD] = { "pidfd_getfd", "target_fd" },
	[VIGIL_TAMPER_PROC_MEM] = { "proc_mem", "open_flags" },
	[VIGIL_TAMPER_PROC_MAPS] = { "proc_maps", "open_flags" },
	[VIGIL_TAMPER_PROC_ENVIRON] = { "proc_environ", "open_flags" },
	[VIGIL_TAMPER_MAP_UPDATE] = { "map_update", "map_id" },
	[VIGIL_TAMPER_MAP_DELETE] = { "map_delete", "map_id" },
	[VIGIL_TAMPER_MAP_SWAP] = { "map_swap", "map_id" },
	[VIGIL_TAMPER_PIN_UNLINK] = { "pin_unlink", "" },
	[VIGIL_TAMPER_PIN_RENAME] = { "pin_rename", "" },
};

/* Both tamper kinds, as one JSON object vigil_tamper: pin is the name
 * under the pin folder (vigil_tamper_pin), NULL for vigil_tamper. */
static void format_tamper(struct vigil_formatter *f, const struct vigil_tamper *ev,
			  const char *pin, size_t pin_len, struct vigil_buf *json,
			  struct vigil_buf *compact)
{
	size_t clen = strnlen(ev->comm, sizeof(ev->comm));
	bool known = ev->what < sizeof(tamper_whats) / sizeof(tamper_whats[0]) &&
		     tamper_whats[ev->what].what;
	const char *what = known ? tamper_whats[ev->what].what : "unknown";
	const char *arg = known ? tamper_whats[ev->what].arg : "arg";
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_tamper");
		vigil_json_process(f, &w, "process", &ev->proc);
		jw_str(&w, "comm", ev->comm, clen);
		jw_str(&w, "what", what, strlen(what));
		jw_u64(&w, "agent_pid", ev->agent_pid);
		if (arg[0])
			jw_u64(&w, arg, ev->arg);
		if (pin)
			jw_str(&w, "pin", pin, pin_len);
		if (ev->what == VIGIL_TAMPER_SIGNAL)
			jw_u64(&w, "result", (uint32_t)ev->result);
		else
			jw_i64(&w, "result", ev->result);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s pid=%u comm=", "tamper", ev->proc.pid);
		vigil_compact_text(compact, ev->comm, clen);
		vbuf_printf(compact, " %s", what);
		if (arg[0])
			vbuf_printf(compact, " %s=%u", arg, ev->arg);
		if (pin) {
			vbuf_printf(compact, " pin=");
			vigil_compact_text(compact, pin, pin_len);
		}
		vbuf_printf(compact, " result=%d (agent pid %u)\n", ev->result, ev->agent_pid);
	}
}

void vigil_format_tamper(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			 struct vigil_buf *compact)
{
	format_tamper(f, rec, NULL, 0, json, compact);
}

void vigil_format_tamper_pin(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			     struct vigil_buf *compact)
{
	const struct vigil_tamper_pin *ev = rec;

	format_tamper(f, &ev->t, ev->name, strnlen(ev->name, sizeof(ev->name)), json, compact);
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
