// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <vigil/event_kinds.h>
#include "event_format.h"
#include "ids.h"
#include "json.h"

int vigil_formatter_init(struct vigil_formatter *f, const char *node_name, size_t cache_max)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->node_name, sizeof(f->node_name), "%s", node_name);
	f->realtime_offset_ns = vigil_realtime_offset();
	return vigil_proc_cache_init(&f->cache, cache_max);
}

static void memos_free(struct vigil_formatter *f)
{
	for (unsigned i = 0; i < VIGIL_PROCESS_MEMOS; i++) {
		vbuf_free(&f->memos[i].json);
		f->memos[i].serial = 0;
	}
}

void vigil_formatter_free(struct vigil_formatter *f)
{
	vigil_proc_cache_free(&f->cache);
	vbuf_free(&f->tmp);
	memos_free(f);
}

void vigil_formatter_memo(struct vigil_formatter *f, bool on)
{
	f->memo = on;
	if (!on)
		memos_free(f);
}

void vigil_formatter_node_name(struct vigil_formatter *f, const char *node_name)
{
	snprintf(f->node_name, sizeof(f->node_name), "%s", node_name);
	memos_free(f);	/* their exec ids are of the old name */
}

/* Each kind's size, or minimum size when variable, and content check,
 * from the catalogue; the formatters' table is at the end of this file. */
static const struct {
	uint16_t size;
	bool variable;
	vigil_event_check_fn *check;
	const char *name;
} kinds[VIGIL_EV_TYPE_MAX + 1] = {
#define KIND_CHECK(id, name, st, var, check, format, tetragon) \
	[id] = { sizeof(struct st), var, check, #name },
	VIGIL_EVENT_KINDS(KIND_CHECK)
#undef KIND_CHECK
};

int vigil_check_exec(const void *rec, uint32_t len, const char **why)
{
	const struct vigil_exec *ex = rec;
	uint32_t strings = (uint32_t)ex->binary_len + ex->args_len + ex->cwd_len +
			   ex->cgroup_len + ex->file_len;

	if (sizeof(*ex) + strings > len || len - sizeof(*ex) - strings >= 8)
		return *why = "exec event string lengths disagree with its size", -EINVAL;
	return 0;
}

int vigil_event_check(const void *rec, uint32_t len, const char **why)
{
	const struct vigil_hdr *h = rec;

	if (len < sizeof(*h))
		return *why = "record shorter than the event header", -EINVAL;
	if (h->size != len || (len & 7))
		return *why = "event size disagrees with the record length", -EINVAL;
	if (h->type > VIGIL_EV_TYPE_MAX || !kinds[h->type].size)
		return *why = "unknown event type", -EINVAL;
	if (kinds[h->type].variable ? len < kinds[h->type].size : len != kinds[h->type].size)
		return *why = "event size does not match its type", -EINVAL;
	return kinds[h->type].check ? kinds[h->type].check(rec, len, why) : 0;
}

const char *vigil_event_kind_name(unsigned type)
{
	return type <= VIGIL_EV_TYPE_MAX ? kinds[type].name : NULL;
}

const struct vigil_proc *vigil_event_proc(const void *rec)
{
	const struct vigil_proc *p;

	switch (((const struct vigil_hdr *)rec)->type) {
	case VIGIL_EV_EXEC:
		p = &((const struct vigil_exec *)rec)->proc;
		break;
	case VIGIL_EV_EXIT:
		p = &((const struct vigil_exit *)rec)->proc;
		break;
	case VIGIL_EV_FORK:
		p = &((const struct vigil_fork *)rec)->proc;
		break;
	case VIGIL_EV_CONNECT:
	case VIGIL_EV_ACCEPT:
	case VIGIL_EV_LISTEN:
		p = &((const struct vigil_conn *)rec)->proc;
		break;
	case VIGIL_EV_CLOSE:
		p = &((const struct vigil_close *)rec)->proc;
		break;
	case VIGIL_EV_RESET:
		p = &((const struct vigil_reset *)rec)->proc;
		break;
	case VIGIL_EV_REPORT_PROC:
		p = &((const struct vigil_report_proc *)rec)->proc;
		break;
	case VIGIL_EV_TAMPER:
		p = &((const struct vigil_tamper *)rec)->proc;
		break;
	case VIGIL_EV_ENFORCE:
		p = &((const struct vigil_enforce *)rec)->proc;
		break;
	case VIGIL_EV_POLICY_HIT:
		p = &((const struct vigil_policy_hit *)rec)->proc;
		break;
	default:
		return NULL;
	}
	return p->pid ? p : NULL;
}

void vigil_event_counts_text(const struct vigil_formatter *f, struct vigil_buf *b)
{
	size_t at = b->len;

	for (unsigned t = 0; t <= VIGIL_EV_TYPE_MAX; t++)
		if (kinds[t].name && f->counts[t])
			vbuf_printf(b, "%s%s %llu", b->len > at ? ", " : "", kinds[t].name,
				    (unsigned long long)f->counts[t]);
	if (b->len == at)
		vbuf_printf(b, "none");
}

/* argv[1..] joined by spaces, as Tetragon's "arguments"; an argument that is
 * empty or holds a space or quote is quoted, so the words can be told apart. */
void vigil_args_text(struct vigil_buf *b, const char *args, size_t n)
{
	const char *end = args + n, *a = memchr(args, 0, n);

	b->len = 0;
	if (!a)
		return;
	for (a++; a <= end; ) {
		const char *z = memchr(a, 0, end - a);
		size_t len = z ? (size_t)(z - a) : (size_t)(end - a);
		bool quote = !len || memchr(a, ' ', len) || memchr(a, '"', len);

		if (b->len)
			vbuf_putc(b, ' ');
		if (quote) {
			vbuf_putc(b, '"');
			for (size_t i = 0; i < len; i++) {
				if (a[i] == '"' || a[i] == '\\')
					vbuf_putc(b, '\\');
				vbuf_putc(b, a[i]);
			}
			vbuf_putc(b, '"');
		} else {
			vbuf_put(b, a, len);
		}
		if (!z)
			break;
		a = z + 1;
	}
}

void vigil_json_envelope_end(struct vigil_formatter *f, struct jw *w, const struct vigil_hdr *h)
{
	char t[VIGIL_TIME_MAX];

	jw_cstr(w, "node_name", f->node_name);
	vigil_rfc3339(t, sizeof(t), h->ktime, f->realtime_offset_ns);
	jw_cstr(w, "time", t);
	if (f->relay) {
		jw_u64(w, "seq", f->relay->seq);
		jw_u64(w, "health_seq", h->seq);
	} else {
		jw_u64(w, "seq", h->seq);
	}
	jw_end(w);
	vbuf_putc(w->b, '\n');
}

/* Length of the valid UTF-8 sequence at s (of n bytes) for a code point
 * a terminal prints, or 0: invalid, overlong, a surrogate, past U+10FFFF,
 * or a C1 control (U+0080-U+009F), which terminals obey like ESC. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	uint32_t cp = s[0] & (0x3f >> (len - 1));

	if (s[0] < 0xc2 || s[0] > 0xf4 || n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return len;
}

void vigil_compact_text(struct vigil_buf *b, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0; i < n;) {
		size_t run = i;

		while (run < n && s[run] >= ' ' && s[run] < 0x7f)
			run++;
		vbuf_put(b, text + i, run - i);
		i = run;
		if (i == n)
			break;
		if (s[i] >= 0x80 && (run = utf8_printable(s + i, n - i))) {
			vbuf_put(b, text + i, run);
			i += run;
			continue;
		}
		switch (s[i]) {
		case 0x1b: vbuf_puts(b, "\\e"); break;
		case '\n': vbuf_puts(b, "\\n"); break;
		case '\r': vbuf_puts(b, "\\r"); break;
		case '\t': vbuf_puts(b, "\\t"); break;
		default: vbuf_printf(b, "\\x%02x", s[i]); break;
		}
		i++;
	}
}

static void compact_args(struct vigil_formatter *f, struct vigil_buf *c,
			 const struct vigil_proc_entry *e)
{
	if (!e) {
		vbuf_puts(c, "?");
		return;
	}
	vigil_compact_text(c, e->binary, e->binary_len);
	vigil_args_text(&f->tmp, e->args, e->args_len);
	if (f->tmp.len) {
		vbuf_putc(c, ' ');
		vigil_compact_text(c, f->tmp.p, f->tmp.len);
	}
}

void vigil_format_exec(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		       struct vigil_buf *compact)
{
	const struct vigil_exec *ev = rec;
	struct vigil_proc_entry *e = vigil_proc_cache_exec(&f->cache, ev);
	struct vigil_proc_entry stack = {
		.proc = ev->proc,
		.creds = ev->creds,
		.flags = ev->flags,
		.binary = (char *)ev->data,
		.binary_len = ev->binary_len,
		.args = (char *)ev->data + ev->binary_len,
		.args_len = ev->args_len,
		.cwd = (char *)ev->data + ev->binary_len + ev->args_len,
		.cwd_len = ev->cwd_len,
		.cgroup = (char *)ev->data + ev->binary_len + ev->args_len + ev->cwd_len,
		.cgroup_len = ev->cgroup_len,
	};
	struct jw w;

	if (!e)
		e = &stack;	/* not cached (full): this event still says it all */
	if (ev->flags & VIGIL_EXEC_KNOWN)
		return;		/* its line was written before: the cache only */
	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_exec");
		vigil_json_process_form(f, &w, VIGIL_EXPORT_VIGIL, "process", &ev->proc, e, ev);
		vigil_json_parent(f, &w, VIGIL_EXPORT_VIGIL, &ev->proc);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s %7u ", (ev->flags & VIGIL_EXEC_PROCFS) ? "procfs" : "exec",
			    ev->proc.pid);
		compact_args(f, compact, e);
		vbuf_putc(compact, '\n');
	}
}

void vigil_format_exit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		       struct vigil_buf *compact)
{
	const struct vigil_exit *ev = rec;
	struct vigil_proc_entry *e = vigil_proc_cache_find(&f->cache, ev->proc.pid,
							   ev->proc.exec_ktime);
	int status = (ev->exit_code >> 8) & 0xff, sig = ev->exit_code & 0x7f;
	char sigbuf[32];
	const char *signame = vigil_signal_name(sig, sigbuf, sizeof(sigbuf));
	struct vigil_proc p = ev->proc;
	struct jw w;

	/* The parent is the one at exec, as in Tetragon: an orphan adopted by
	 * init or a subreaper still names who started it. */
	if (e) {
		p.ppid = e->proc.ppid;
		p.parent_exec_ktime = e->proc.parent_exec_ktime;
	}
	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_exit");
		vigil_json_process_form(f, &w, VIGIL_EXPORT_VIGIL, "process", &p, e, NULL);
		vigil_json_parent(f, &w, VIGIL_EXPORT_VIGIL, &p);
		if (signame)
			jw_cstr(&w, "signal", signame);
		if (status)	/* zero values are left out, as Tetragon does */
			jw_u64(&w, "status", status);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s %7u ", "exit", ev->proc.pid);
		compact_args(f, compact, e);
		if (signame)
			vbuf_printf(compact, " %s", signame);
		else
			vbuf_printf(compact, " %d", status);
		vbuf_putc(compact, '\n');
	}
	vigil_proc_cache_exited(&f->cache, ev->proc.pid, ev->proc.exec_ktime);
}

void vigil_format_loss(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		       struct vigil_buf *compact)
{
	const struct vigil_loss *ev = rec;
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_loss");
		jw_u64(&w, "ring_full", ev->ring_full);
		jw_u64(&w, "recursion_misses", ev->recursion_misses);
		jw_u64(&w, "threads_exited", ev->threads_exited);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact)
		vbuf_printf(compact, "%-8s ring_full=%llu recursion_misses=%llu\n", "loss",
			    (unsigned long long)ev->ring_full,
			    (unsigned long long)ev->recursion_misses);
}

static const char *const throttle_phases[] = {
	[VIGIL_THROTTLE_HELD] = "held",
	[VIGIL_THROTTLE_START] = "start",
	[VIGIL_THROTTLE_STOP] = "stop",
};

void vigil_format_throttle(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			   struct vigil_buf *compact)
{
	const struct vigil_throttle *ev = rec;
	const char *phase = ev->phase < sizeof(throttle_phases) / sizeof(*throttle_phases) ?
			    throttle_phases[ev->phase] : "unknown";
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "vigil_throttle");
		if (ev->by == VIGIL_BUDGET_BY_UID)
			jw_u64(&w, "uid", ev->uid);
		else
			jw_u64(&w, "cgroup_id", ev->cgroup_id);
		jw_u64(&w, "throttled", ev->throttled);
		jw_cstr(&w, "type", phase);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact)
		vbuf_printf(compact, "%-8s %s=%llu throttled=%llu %s\n", "throttle",
			    ev->by == VIGIL_BUDGET_BY_UID ? "uid" : "cgroup_id",
			    (unsigned long long)(ev->by == VIGIL_BUDGET_BY_UID ? ev->uid : ev->cgroup_id),
			    (unsigned long long)ev->throttled, phase);
}

void vigil_format_fork(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		       struct vigil_buf *compact)
{
	(void)json, (void)compact;	/* no line: the process cache learns of it */
	vigil_proc_cache_fork(&f->cache, rec);
}

/* Each kind's formatters, from the catalogue. Every kind has vigil's own,
 * which also keeps the process cache and may write nothing (fork): a
 * catalogue line without one does not build. The Tetragon form may have
 * none (NULL). */
#define KIND_HAS_FORMAT(id, name, st, var, check, format, tetragon)			\
	_Static_assert(__builtin_types_compatible_p(__typeof__(format), vigil_event_format_fn), \
		       "event kind " #name " has no formatter (FORMAT in vigil/event_kinds.h)");
VIGIL_EVENT_KINDS(KIND_HAS_FORMAT)
#undef KIND_HAS_FORMAT

static const struct {
	vigil_event_format_fn *format;
	void (*tetragon)(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
} formatters[VIGIL_EV_TYPE_MAX + 1] = {
#define KIND_FORMAT(id, name, st, var, check, format, tetragon) [id] = { format, tetragon },
	VIGIL_EVENT_KINDS(KIND_FORMAT)
#undef KIND_FORMAT
};

void vigil_event_format_forms(struct vigil_formatter *f, const void *rec,
			      struct vigil_buf *vigil_json, struct vigil_buf *tetragon_json,
			      struct vigil_buf *compact)
{
	unsigned type = ((const struct vigil_hdr *)rec)->type & VIGIL_EV_TYPE_MAX;

	f->counts[type]++;
	/* The native pass keeps the process cache and the compact view; the
	 * Tetragon form reads the cache it left. */
	if (formatters[type].format)
		formatters[type].format(f, rec, vigil_json, compact);
	if (tetragon_json && formatters[type].tetragon)
		formatters[type].tetragon(f, rec, tetragon_json);
}

void vigil_event_format(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			struct vigil_buf *compact)
{
	bool tetragon = f->opts.format == VIGIL_EXPORT_TETRAGON;

	vigil_event_format_forms(f, rec, tetragon ? NULL : json, tetragon ? json : NULL, compact);
}
