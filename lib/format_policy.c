// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * process_tracepoint lines for exec and file rules. Records may come from
 * the network (the collector): lengths, names and every enum are checked
 * or printed through bounded tables before use.
 *
 * Tetragon's form: subsys/event name the hook (sched/sched_process_exec,
 * syscalls/sys_exit_openat, ...), args are the path, the flags, the result
 * and what took effect, action is what was done: KPROBE_ACTION_SIGKILL or
 * _SIGNAL when the signal was sent, KPROBE_ACTION_POST otherwise, with
 * tags saying why ("monitor", "would:sigkill"; "refused:init", ...).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "ids.h"
#include "json.h"
#include "policy_parse.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

static const char *const outcomes[VIGIL_POUT_MAX] = {
	[VIGIL_POUT_NONE] = "posted",
	[VIGIL_POUT_SIGNALLED] = "signalled",
	[VIGIL_POUT_MONITOR] = "monitor",
	[VIGIL_POUT_REFUSED_INIT] = "refused:init",
	[VIGIL_POUT_REFUSED_KTHREAD] = "refused:kthread",
	[VIGIL_POUT_REFUSED_EXITING] = "refused:exiting",
	[VIGIL_POUT_REFUSED_AGENT] = "refused:vigild",
	[VIGIL_POUT_REFUSED_HELPER] = "refused:helper",
};

int vigil_check_policy_hit(const void *rec, uint32_t len, const char **why)
{
	const struct vigil_policy_hit *ev = rec;

	if (sizeof(*ev) + (uint32_t)ev->path_len + ev->binary_len > len)
		return *why = "policy_hit strings run past the record", -EINVAL;
	if (ev->verb > VIGIL_VERB_CREAT)
		return *why = "policy_hit of an unknown verb", -EINVAL;
	if (ev->outcome >= VIGIL_POUT_MAX)
		return *why = "policy_hit of an unknown outcome", -EINVAL;
	if (ev->rule_id >= VIGIL_PRULES_MAX)
		return *why = "policy_hit of a rule id out of range", -EINVAL;
	return 0;
}

static const char *event_name(unsigned verb)
{
	static const char *const names[] = {
		[VIGIL_VERB_EXEC] = "sched_process_exec", [VIGIL_VERB_OPEN] = "sys_exit_open",
		[VIGIL_VERB_OPENAT] = "sys_exit_openat", [VIGIL_VERB_OPENAT2] = "sys_exit_openat2",
		[VIGIL_VERB_CREAT] = "sys_exit_creat",
	};

	return verb < N(names) && names[verb] ? names[verb] : "unknown";
}

/* "read,write,create,created,truncate". */
static void intent_text(char *out, size_t len, uint32_t in)
{
	static const char *const names[] = { "read", "write", "create", "truncate", "created" };
	size_t n = 0;

	out[0] = 0;
	for (unsigned i = 0; i < N(names); i++)
		if (in & (1u << i))
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "," : "", names[i]);
}

struct hit_view {
	const struct vigil_policy_hit *ev;
	const char *path, *binary;
	char rule[VIGIL_PRULE_NAME + 1];
	char intent[64];
	bool file;
};

static void view_of(struct hit_view *v, const struct vigil_policy_hit *ev)
{
	v->ev = ev;
	v->path = ev->data;
	v->binary = ev->data + ev->path_len;
	v->file = ev->verb != VIGIL_VERB_EXEC;
	snprintf(v->rule, sizeof(v->rule), "%.*s", (int)strnlen(ev->rule, sizeof(ev->rule)), ev->rule);
	intent_text(v->intent, sizeof(v->intent), ev->intent);
}

static void string_arg(struct jw *w, const char *label, const char *s, size_t n)
{
	jw_obj(w, NULL);
	jw_str(w, "string_arg", s, n);
	jw_cstr(w, "label", label);
	jw_end(w);
}

/* Tetragon's args: path, flags, result (int64: a JSON string in protojson)
 * and, for opens, what took effect. */
static void args(struct jw *w, const struct hit_view *v)
{
	char n[24];

	jw_arr(w, "args");
	string_arg(w, "path", v->path, v->ev->path_len);
	if (v->file) {
		jw_obj(w, NULL);
		jw_i64(w, "int_arg", (int32_t)v->ev->open_flags);
		jw_cstr(w, "label", "flags");
		jw_end(w);
		jw_obj(w, NULL);
		snprintf(n, sizeof(n), "%lld", (long long)v->ev->result);
		jw_cstr(w, "long_arg", n);
		jw_cstr(w, "label", "result");
		jw_end(w);
		if (v->intent[0])
			string_arg(w, "intent", v->intent, strlen(v->intent));
	}
	jw_arr_end(w);
}

/* The action as Tetragon names it, and the tags saying why. */
static const char *tetragon_action(const struct vigil_policy_hit *ev)
{
	if (ev->outcome != VIGIL_POUT_SIGNALLED)
		return "KPROBE_ACTION_POST";
	return ev->action == VIGIL_ACT_SIGKILL ? "KPROBE_ACTION_SIGKILL" : "KPROBE_ACTION_SIGNAL";
}

static void tags(struct jw *w, const struct vigil_policy_hit *ev)
{
	char would[32];

	if (ev->outcome == VIGIL_POUT_NONE || ev->outcome == VIGIL_POUT_SIGNALLED)
		return;
	jw_arr(w, "tags");
	if (ev->outcome == VIGIL_POUT_MONITOR) {
		jw_cstr(w, NULL, "monitor");
		snprintf(would, sizeof(would), "would:%s", vigil_policy_action_name(ev->action));
		jw_cstr(w, NULL, would);
	} else {
		jw_cstr(w, NULL, outcomes[ev->outcome]);
	}
	jw_arr_end(w);
}

void vigil_tetragon_policy_hit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_policy_hit *ev = rec;
	const struct vigil_proc_entry *e =
		vigil_proc_cache_find(&f->cache, ev->proc.pid, ev->proc.exec_ktime);
	struct hit_view v;
	char t[VIGIL_TIME_MAX];
	struct jw w;

	view_of(&v, ev);
	jw_begin(&w, json);
	jw_obj(&w, NULL);
	jw_obj(&w, "process_tracepoint");
	vigil_json_process_form(f, &w, VIGIL_EXPORT_TETRAGON, "process", &ev->proc, e, NULL);
	vigil_json_parent(f, &w, VIGIL_EXPORT_TETRAGON, &ev->proc);
	jw_cstr(&w, "subsys", v.file ? "syscalls" : "sched");
	jw_cstr(&w, "event", event_name(ev->verb));
	args(&w, &v);
	jw_cstr(&w, "policy_name", v.rule);
	jw_cstr(&w, "action", tetragon_action(ev));
	tags(&w, ev);
	jw_end(&w);
	jw_cstr(&w, "node_name", f->node_name);
	vigil_rfc3339(t, sizeof(t), ev->hdr.ktime, f->realtime_offset_ns);
	jw_cstr(&w, "time", t);
	jw_end(&w);
	vbuf_putc(json, '\n');
}

void vigil_format_policy_hit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			     struct vigil_buf *compact)
{
	const struct vigil_policy_hit *ev = rec;
	struct hit_view v;
	struct jw w;

	view_of(&v, ev);
	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_tracepoint");
		vigil_json_process(f, &w, "process", &ev->proc);
		jw_cstr(&w, "subsys", v.file ? "syscalls" : "sched");
		jw_cstr(&w, "event", event_name(ev->verb));
		args(&w, &v);
		jw_cstr(&w, "policy_name", v.rule);
		jw_u64(&w, "rule_id", ev->rule_id);
		jw_cstr(&w, "action", tetragon_action(ev));	/* Tetragon's name, Tetragon's values */
		jw_cstr(&w, "rule_action", vigil_policy_action_name(ev->action));
		if (ev->signal)
			jw_u64(&w, "signal", ev->signal);
		jw_cstr(&w, "outcome", outcomes[ev->outcome]);
		if (ev->flags & VIGIL_PHIT_MONITOR)
			jw_bool(&w, "monitor", true);
		tags(&w, ev);
		jw_str(&w, "path", v.path, ev->path_len);
		if (ev->flags & VIGIL_PHIT_PATH_CUT)
			jw_bool(&w, "path_truncated", true);
		if (v.file) {
			jw_str(&w, "binary", v.binary, ev->binary_len);
			jw_u64(&w, "flags", ev->open_flags);
			jw_i64(&w, "result", ev->result);
			jw_cstr(&w, "intent", v.intent);
		}
		jw_u64(&w, "inode", ev->ino);
		jw_u64(&w, "dev", ev->dev);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s %7u %s %s ", vigil_policy_action_name(ev->action),
			    ev->proc.pid, event_name(ev->verb), outcomes[ev->outcome]);
		vigil_compact_text(compact, v.rule, strlen(v.rule));
		vbuf_putc(compact, ' ');
		vigil_compact_text(compact, v.path, ev->path_len);
		if (v.intent[0])
			vbuf_printf(compact, " (%s)", v.intent);
		vbuf_putc(compact, '\n');
	}
}
