// SPDX-License-Identifier: GPL-2.0
/* See events_render.h. */
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "event_format.h"
#include "events_render.h"
#include "json_read.h"

/* A kind's short tag and emoji, as Tetragon's compact view has them. The
 * Tetragon form's process_kprobe is told apart by its function_name. */
static const struct {
	const char *kind, *tag, *emoji, *color;
} kinds[] = {
	{ "process_exec", "process", "🚀", "32" },
	{ "process_exit", "exit", "💥", "33" },
	{ "process_connect", "connect", "🔌", "36" },
	{ "tcp_connect", "connect", "🔌", "36" },
	{ "process_accept", "accept", "📥", "36" },
	{ "inet_csk_accept", "accept", "📥", "36" },
	{ "process_listen", "listen", "👂", "36" },
	{ "inet_listen", "listen", "👂", "36" },
	{ "process_close", "close", "🧹", "36" },
	{ "tcp_close", "close", "🧹", "36" },
	{ "process_reset", "reset", "⛔", "31" },
	{ "tcp_reset", "reset", "⛔", "31" },
	{ "tcp_send_reset", "reset", "⛔", "31" },
	{ "network_enforce", "enforce", "🛡️", "31;1" },
	{ "process_report", "report", "📊", "34" },
	{ "remote_report", "report", "📊", "34" },
	{ "report_end", "report", "📊", "34" },
	{ "vigil_loss", "loss", "⚠️", "35;1" },
	{ "vigil_output_loss", "loss", "⚠️", "35;1" },
	{ "vigil_gap", "gap", "⚠️", "35;1" },
	{ "rate_limit_info", "loss", "⚠️", "35;1" },
	{ "vigil_subscriber_loss", "dropped", "⚠️", "35;1" },
	{ "vigil_throttle", "throttle", "🐢", "35" },
};

struct line {
	const char *s;
	struct jtok t[JTOK_MAX];
	int n, body;
	char kind[64];
};

static int find_kind(const char *kind)
{
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
		if (!strcmp(kinds[i].kind, kind))
			return i;
	return -1;
}

static void text(const struct line *l, int i, char *out, size_t n)
{
	if (i < 0 || l->t[i].type == J_OBJ || l->t[i].type == J_ARR)
		*out = 0;
	else
		jtext(l->s, l->t, i, out, n);
}

static bool wanted(const struct events_view *v, const struct line *l, int k)
{
	char b[4096];
	bool kind_ok = !v->nkinds;

	for (unsigned i = 0; i < v->nkinds; i++)
		kind_ok |= !strcmp(v->kinds[i], l->kind) ||
			   (k >= 0 && !strcmp(v->kinds[i], kinds[k].tag));
	if (!kind_ok)
		return false;
	if (v->binary) {
		const char *base;

		text(l, jpath(l->s, l->t, l->body, "process.binary"), b, sizeof(b));
		base = strrchr(b, '/');
		if (strcmp(b, v->binary) && (!base || strcmp(base + 1, v->binary)))
			return false;
	}
	if (v->pid) {
		text(l, jpath(l->s, l->t, l->body, "process.pid"), b, sizeof(b));
		if (strcmp(b, v->pid))
			return false;
	}
	if (v->namespace) {
		char netns[64];

		text(l, jpath(l->s, l->t, l->body, "process.pod.namespace"), b, sizeof(b));
		text(l, jpath(l->s, l->t, l->body, "netns"), netns, sizeof(netns));
		if (!*netns)
			text(l, jpath(l->s, l->t, l->body, "remote.netns"), netns, sizeof(netns));
		if (strcmp(b, v->namespace) && strcmp(netns, v->namespace))
			return false;
	}
	return true;
}

/* Text from a process goes out escaped: it may hold terminal controls. */
static void put_safe(struct vigil_buf *out, const char *s)
{
	vigil_compact_text(out, s, strlen(s));
}

/* The process: pid, binary and arguments. */
static void process(const struct line *l, int p, struct vigil_buf *out)
{
	char b[8192];

	if (p < 0)
		return;
	text(l, jpath(l->s, l->t, p, "pid"), b, sizeof(b));
	vbuf_printf(out, " %7s ", *b ? b : "?");
	text(l, jpath(l->s, l->t, p, "binary"), b, sizeof(b));
	put_safe(out, *b ? b : "?");
	text(l, jpath(l->s, l->t, p, "arguments"), b, sizeof(b));
	if (*b) {
		vbuf_putc(out, ' ');
		put_safe(out, b);
	}
}

/* The object's plain members as key=value, but for those in skip. */
static void members(const struct line *l, int obj, const char *const *skip, struct vigil_buf *out)
{
	char b[1024];
	int i = obj + 1;

	for (int m = 0; obj >= 0 && l->t[obj].type == J_OBJ && m < l->t[obj].size; m++) {
		int v = l->t[i].next;
		char key[64];
		bool skipped = l->t[v].type == J_OBJ || l->t[v].type == J_ARR;

		jtext(l->s, l->t, i, key, sizeof(key));
		for (const char *const *s = skip; *s && !skipped; s++)
			skipped = !strcmp(*s, key);
		if (!skipped) {
			text(l, v, b, sizeof(b));
			vbuf_putc(out, ' ');
			put_safe(out, key);
			vbuf_putc(out, '=');
			put_safe(out, b);
		}
		i = l->t[v].next;
	}
}

/* SRC:PORT > DST:PORT, from vigil's members or Tetragon's sock_arg. */
static void tuple(const struct line *l, struct vigil_buf *out)
{
	static const char *const vigil_keys[] = { "source_ip", "source_port", "destination_ip",
						  "destination_port" };
	static const char *const tetragon_keys[] = { "saddr", "sport", "daddr", "dport" };
	int sock = jpath(l->s, l->t, l->body, "args");
	const char *const *keys = vigil_keys;
	int obj = l->body;
	char v[4][64];

	if (sock >= 0 && l->t[sock].type == J_ARR && l->t[sock].size) {
		obj = jpath(l->s, l->t, sock + 1, "sock_arg");
		keys = tetragon_keys;
	}
	for (int i = 0; i < 4; i++)
		text(l, jpath(l->s, l->t, obj, keys[i]), v[i], sizeof(v[i]));
	if (!*v[0] && !*v[2])
		return;
	vbuf_puts(out, " ");
	put_safe(out, v[0]);
	vbuf_printf(out, ":%s > ", v[1]);
	put_safe(out, v[2]);
	vbuf_printf(out, ":%s", v[3]);
}

/* Tetragon's labelled args: label=value. */
static void labelled_args(const struct line *l, struct vigil_buf *out)
{
	int a = jpath(l->s, l->t, l->body, "args"), i;
	char label[64], val[256];

	if (a < 0 || l->t[a].type != J_ARR)
		return;
	i = a + 1;
	for (int m = 0; m < l->t[a].size; m++) {
		int lab = jpath(l->s, l->t, i, "label"), first = i + 1;

		if (lab >= 0 && l->t[i].type == J_OBJ && l->t[i].size >= 1) {
			text(l, lab, label, sizeof(label));
			text(l, l->t[first].next, val, sizeof(val));
			vbuf_printf(out, " %s=", label);
			put_safe(out, val);
		}
		i = l->t[i].next;
	}
}

static void time_of_day(const struct line *l, int root, struct vigil_buf *out)
{
	char t[64];
	const char *tp;

	text(l, jpath(l->s, l->t, root, "time"), t, sizeof(t));
	tp = strchr(t, 'T');
	vbuf_printf(out, "%.12s ", tp ? tp + 1 : "            ");
}

int events_render(const struct events_view *v, const char *s, size_t n, struct vigil_buf *out)
{
	static const char *const skip[] = { "exec_id", "parent_exec_id", "function_name", "action",
					    "policy_name", "source_ip", "source_port",
					    "destination_ip", "destination_port", "family", "protocol",
					    NULL };
	static struct line l;
	int k, fn;

	l.s = s;
	l.n = jread(s, n, l.t, JTOK_MAX);
	if (l.n < 2 || l.t[0].type != J_OBJ) {
		if (!v->json)
			vbuf_puts(out, "(not a JSON event line)\n");
		return -1;
	}
	jtext(s, l.t, 1, l.kind, sizeof(l.kind));
	l.body = l.t[1].next;
	if ((fn = jpath(s, l.t, l.body, "function_name")) >= 0)	/* Tetragon's kprobe */
		jtext(s, l.t, fn, l.kind, sizeof(l.kind));
	k = find_kind(l.kind);
	if (!wanted(v, &l, k))
		return 0;
	if (v->json) {
		vbuf_put(out, s, n);
		vbuf_putc(out, '\n');
		return 0;
	}
	time_of_day(&l, 0, out);
	if (v->color && k >= 0)
		vbuf_printf(out, "\033[%sm", kinds[k].color);
	vbuf_printf(out, "%s %-8s", k >= 0 ? kinds[k].emoji : "❓", k >= 0 ? kinds[k].tag : "");
	if (v->color && k >= 0)
		vbuf_puts(out, "\033[0m");
	if (k < 0) {
		vbuf_putc(out, ' ');
		put_safe(out, l.kind);
	}
	process(&l, jpath(s, l.t, l.body, "process"), out);
	tuple(&l, out);
	members(&l, l.body, skip, out);
	labelled_args(&l, out);
	vbuf_putc(out, '\n');
	return 0;
}
