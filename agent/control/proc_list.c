// SPDX-License-Identifier: GPL-2.0
/*
 * The exec and file rules in force, listed with their counters
 * (agent/enforce/proc_rules.c sums them over CPUs and reloads), then the
 * processes that submitted io_uring requests or ran a 32-bit binary while
 * file rules were in force: opens among those were not seen by any rule.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "control/proc_list.h"
#include "enforce/rule_maps.h"
#include "enforce/proc_rules.h"

/* "open,openat" */
static void verbs_text(char *out, size_t len, uint32_t verbs)
{
	size_t n = 0;

	out[0] = 0;
	for (unsigned v = 0; v < VIGIL_VERB_MAX; v++)
		if (verbs & (1u << v))
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
				      vigil_verb_name(v));
}

struct uring_list {
	struct vigil_buf *out;
	bool json;
	unsigned n;
};

/* A comm as the kernel keeps it (16 bytes, NUL-padded, maybe unended). */
#define COMM_MAX 16
_Static_assert(sizeof(((struct vigil_uring_count *)0)->comm) == COMM_MAX, "uring comm");
_Static_assert(sizeof(((struct vigil_compat_count *)0)->comm) == COMM_MAX, "compat comm");

/* Starts a process's line of either list, after its heading: text, its pid
 * and comm; JSON, an object of kind with them. The caller adds its counts,
 * then ends the line with proc_line_end. */
static void proc_line_begin(struct uring_list *l, struct jw *w, const char *kind,
			    const struct vigil_uring_key *k, const char comm[COMM_MAX])
{
	char name[COMM_MAX + 1];

	snprintf(name, sizeof(name), "%.*s", (int)strnlen(comm, COMM_MAX), comm);
	if (!l->json) {
		vbuf_printf(l->out, "%-8u %-16s", k->tgid, name);
		return;
	}
	jw_begin(w, l->out);
	jw_obj(w, NULL);
	jw_cstr(w, "kind", kind);
	jw_u64(w, "pid", k->tgid);
	jw_cstr(w, "comm", name);
}

static void proc_line_end(struct uring_list *l, struct jw *w)
{
	if (l->json)
		jw_end(w);
	vbuf_putc(l->out, '\n');
}

static void uring_line(void *arg, const struct vigil_uring_key *k, const struct vigil_uring_count *c)
{
	struct uring_list *l = arg;
	struct jw w;

	if (!l->json && !l->n++)
		vbuf_printf(l->out, "\nio_uring, not seen by file rules:\n%-8s %-16s %10s %12s %10s\n",
			    "pid", "comm", "rings", "submissions", "opens");
	proc_line_begin(l, &w, "io_uring", k, c->comm);
	if (!l->json) {
		vbuf_printf(l->out, " %10" PRIu64 " %12" PRIu64 " %10" PRIu64, (uint64_t)c->rings,
			    (uint64_t)c->submissions, (uint64_t)c->opens);
	} else {
		jw_u64(&w, "rings", c->rings);
		jw_u64(&w, "submissions", c->submissions);
		jw_u64(&w, "opens", c->opens);
	}
	proc_line_end(l, &w);
}

static void compat_line(void *arg, const struct vigil_uring_key *k,
			const struct vigil_compat_count *c)
{
	struct uring_list *l = arg;
	struct jw w;

	if (!l->json && !l->n++)
		vbuf_printf(l->out, "\n32-bit processes, opens not seen by file rules:\n"
			    "%-8s %-16s %10s\n", "pid", "comm", "execs");
	proc_line_begin(l, &w, "ia32", k, c->comm);
	if (!l->json)
		vbuf_printf(l->out, " %10" PRIu64, (uint64_t)c->execs);
	else
		jw_u64(&w, "execs", c->execs);
	proc_line_end(l, &w);
}

void vigil_list_proc_rules(struct vigil_policy_state *s, struct vigil_buf *out, bool json)
{
	const struct vigil_policy *p = &s->in_force;
	char verbs[96];

	if (p->n_prules && !json)
		vbuf_printf(out, "\n%-3s %-20s %-7s %-22s %10s %10s %10s %10s %10s %10s\n", "id",
			    "name", "action", "on", "hits", "events", "kills", "signals",
			    "would", "refused");
	for (unsigned i = 0; i < p->n_prules; i++) {
		const struct vigil_prule_spec *r = &p->prules[i];
		struct vigil_prule_stats st = {};
		struct jw w;

		vigil_proc_rule_stats(s->proc, i, &st);
		verbs_text(verbs, sizeof(verbs), r->verbs);
		if (!json) {
			vbuf_printf(out, "%-3u %-20s %-7s %-22s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
				    " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "%s  (%s:%u)\n", i, r->name,
				    vigil_policy_action_name(r->action), verbs, (uint64_t)st.hits,
				    (uint64_t)st.events, (uint64_t)st.kills, (uint64_t)st.signals,
				    (uint64_t)(st.would_kill + st.would_signal), (uint64_t)st.refused,
				    r->monitor ? " monitor" : "", r->file, r->line);
			continue;
		}
		jw_begin(&w, out);
		jw_obj(&w, NULL);
		jw_u64(&w, "id", i);
		jw_cstr(&w, "name", r->name);
		jw_cstr(&w, "kind", r->verbs & VIGIL_VERBS_FILE ? "file" : "exec");
		jw_cstr(&w, "on", verbs);
		jw_cstr(&w, "action", vigil_policy_action_name(r->action));
		if (r->signal)
			jw_u64(&w, "signal", r->signal);
		jw_cstr(&w, "mode", r->monitor ? "monitor" : "enforce");
		jw_cstr(&w, "file", r->file);
		jw_u64(&w, "line", r->line);
		jw_u64(&w, "hits", st.hits);
		jw_u64(&w, "events", st.events);
		jw_u64(&w, "events_lost", st.events_lost);
		jw_u64(&w, "kills", st.kills);
		jw_u64(&w, "signals", st.signals);
		jw_u64(&w, "would_kill", st.would_kill);
		jw_u64(&w, "would_signal", st.would_signal);
		jw_u64(&w, "refused", st.refused);
		jw_end(&w);
		vbuf_putc(out, '\n');
	}
	struct uring_list ul = { .out = out, .json = json };

	vigil_proc_uring_each(s->proc, uring_line, &ul);
	struct uring_list cl = { .out = out, .json = json };

	vigil_proc_compat_each(s->proc, compat_line, &cl);
}
