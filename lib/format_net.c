// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Checks and formats the network events and reports
 * (include/vigil/net_events.h): Tetragon-style JSON, one object a line keyed
 * by the kind, and a compact line each. Records come from the network in the
 * collector: sizes and families are checked before any field is read, and
 * every enum is printed through a bounded table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "ids.h"
#include "json.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

static bool family_ok(uint16_t family)
{
	return family == AF_INET || family == AF_INET6;
}

/* Every connection event starts hdr, proc, tuple; sizes were checked
 * against the catalogue already. */
int vigil_check_conn(const void *rec, uint32_t len, const char **why)
{
	(void)len;
	if (!family_ok(((const struct vigil_conn *)rec)->tuple.family))
		return *why = "network event of an unknown address family", -EINVAL;
	return 0;
}

int vigil_check_report_remote(const void *rec, uint32_t len, const char **why)
{
	(void)len;
	if (!family_ok(((const struct vigil_report_remote *)rec)->remote.family))
		return *why = "remote report of an unknown address family", -EINVAL;
	return 0;
}

static const char *const tcp_states[] = {
	[1] = "TCP_ESTABLISHED", "TCP_SYN_SENT", "TCP_SYN_RECV", "TCP_FIN_WAIT1",
	"TCP_FIN_WAIT2", "TCP_TIME_WAIT", "TCP_CLOSE", "TCP_CLOSE_WAIT", "TCP_LAST_ACK",
	"TCP_LISTEN", "TCP_CLOSING", "TCP_NEW_SYN_RECV",
};
static const char *const close_reasons[] = {
	[VIGIL_CLOSE_UNKNOWN] = "unknown",
	[VIGIL_CLOSE_LOCAL_FIN] = "local_fin",
	[VIGIL_CLOSE_PEER_FIN] = "peer_fin",
	[VIGIL_CLOSE_LOCAL_RST] = "local_rst",
	[VIGIL_CLOSE_PEER_RST] = "peer_rst",
	[VIGIL_CLOSE_TIMEOUT] = "timeout",
	[VIGIL_CLOSE_LISTENER] = "listener_closed",
};
static const char *const directions[] = {
	[VIGIL_CONN_UNKNOWN] = "unknown",
	[VIGIL_CONN_OUT] = "outgoing",
	[VIGIL_CONN_IN] = "incoming",
	[VIGIL_CONN_LISTEN] = "listen",
};
static const char *const reset_dirs[] = {
	[VIGIL_RESET_SENT] = "sent",
	[VIGIL_RESET_RECEIVED] = "received",
};

static const char *name_of(const char *const *t, size_t n, unsigned v)
{
	return v < n && t[v] ? t[v] : "unknown";
}
#define NAME(t, v) name_of(t, N(t), v)

const char *vigil_tcp_state_name(unsigned state)
{
	return NAME(tcp_states, state);
}

const char *vigil_close_reason_name(unsigned reason)
{
	return NAME(close_reasons, reason);
}

const char *vigil_conn_dir_name(unsigned dir)
{
	return NAME(directions, dir);
}

/* "10.0.0.1" or "fd00::1"; out holds INET6_ADDRSTRLEN. IPv4 by hand:
 * glibc's inet_ntop formats it with sprintf, about 4 % of the agent's time
 * in a connection storm (two addresses per event). */
const char *vigil_addr_text(char *out, uint16_t family, const uint8_t *a)
{
	if (family != AF_INET6) {
		char *p = out;

		for (int i = 0; i < 4; i++) {
			p += vigil_u64_dec(p, a[i]);
			*p++ = i < 3 ? '.' : 0;
		}
		return out;
	}
	if (!inet_ntop(AF_INET6, a, out, INET6_ADDRSTRLEN))
		snprintf(out, INET6_ADDRSTRLEN, "?");
	return out;
}

static void errno_json(struct jw *w, const char *key, uint32_t err)
{
	const char *name = err < 4096 ? strerrorname_np(err) : NULL;

	if (name)
		jw_cstr(w, key, name);
	else
		jw_u64(w, key, err);
}

/* The tuple as Tetragon's network events name it: source is this end. */
static void tuple_json(struct jw *w, const struct vigil_tuple *t)
{
	char a[INET6_ADDRSTRLEN];

	jw_cstr(w, "family", t->family == AF_INET6 ? "AF_INET6" : "AF_INET");
	jw_cstr(w, "protocol", "TCP");
	jw_cstr(w, "source_ip", vigil_addr_text(a, t->family, t->saddr));
	jw_u64(w, "source_port", t->sport);
	jw_cstr(w, "destination_ip", vigil_addr_text(a, t->family, t->daddr));
	jw_u64(w, "destination_port", t->dport);
	jw_u64(w, "netns", t->netns);
}

static void owner_json(struct vigil_formatter *f, struct jw *w, const struct vigil_proc *p,
		       uint32_t flags)
{
	if (flags & VIGIL_CONN_NO_OWNER) {
		jw_bool(w, "owner_unknown", true);
		if (flags & VIGIL_CONN_PREEXISTING)
			jw_u64(w, "uid", p->uid);	/* the iterator knows this much */
	} else
		vigil_json_process(f, w, "process", p);
	if (flags & VIGIL_CONN_REFINED)
		jw_bool(w, "owner_refined", true);
	if (flags & VIGIL_CONN_PREEXISTING)
		jw_bool(w, "preexisting", true);
}

static void compact_head(struct vigil_formatter *f, struct vigil_buf *c, const char *kind,
			 const struct vigil_proc *p, bool owned)
{
	const struct vigil_proc_entry *e =
		owned ? vigil_proc_cache_find(&f->cache, p->pid, p->exec_ktime) : NULL;

	vbuf_printf(c, "%-8s %7u ", kind, owned ? p->pid : 0);
	if (e)
		vigil_compact_text(c, e->binary, e->binary_len);
	else
		vbuf_putc(c, '?');
}

static void compact_end(struct vigil_buf *c, uint16_t family, const uint8_t *a, uint16_t port)
{
	char s[INET6_ADDRSTRLEN];

	vbuf_printf(c, family == AF_INET6 ? "[%s]:%u" : "%s:%u", vigil_addr_text(s, family, a), port);
}

static void compact_tuple(struct vigil_buf *c, const struct vigil_tuple *t)
{
	vbuf_putc(c, ' ');
	compact_end(c, t->family, t->saddr, t->sport);
	vbuf_puts(c, " -> ");
	compact_end(c, t->family, t->daddr, t->dport);
}

static const char *const conn_kinds[] = {
	[VIGIL_EV_CONNECT - VIGIL_EV_NET_FIRST] = "process_connect",
	[VIGIL_EV_ACCEPT - VIGIL_EV_NET_FIRST] = "process_accept",
	[VIGIL_EV_LISTEN - VIGIL_EV_NET_FIRST] = "process_listen",
};

void vigil_format_conn(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		       struct vigil_buf *compact)
{
	const struct vigil_conn *ev = rec;
	const char *kind = conn_kinds[ev->hdr.type - VIGIL_EV_NET_FIRST];
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, kind);
		owner_json(f, &w, &ev->proc, ev->flags);
		tuple_json(&w, &ev->tuple);
		if (ev->cookie)
			jw_u64(&w, "socket_cookie", ev->cookie);
		if (ev->latency_ns)
			jw_u64(&w, "latency_ns", ev->latency_ns);
		if (ev->error)
			errno_json(&w, "error", ev->error);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		compact_head(f, compact, kind + 8, &ev->proc, !(ev->flags & VIGIL_CONN_NO_OWNER));
		if (ev->hdr.type == VIGIL_EV_LISTEN) {
			vbuf_putc(compact, ' ');
			compact_end(compact, ev->tuple.family, ev->tuple.saddr, ev->tuple.sport);
		} else {
			compact_tuple(compact, &ev->tuple);
		}
		if (ev->error)
			vbuf_printf(compact, " %s", strerrorname_np(ev->error) ?: "error");
		vbuf_putc(compact, '\n');
	}
}

void vigil_format_close(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			struct vigil_buf *compact)
{
	const struct vigil_close *ev = rec;
	const char *reason = NAME(close_reasons, ev->reason);
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_close");
		owner_json(f, &w, &ev->proc, ev->flags);
		tuple_json(&w, &ev->tuple);
		if (ev->cookie)
			jw_u64(&w, "socket_cookie", ev->cookie);
		jw_cstr(&w, "direction", NAME(directions, ev->direction));
		jw_cstr(&w, "closed_by", reason);
		jw_cstr(&w, "state", NAME(tcp_states, ev->state));
		jw_obj(&w, "stats");
		jw_u64(&w, "bytes_sent", ev->bytes_sent);
		jw_u64(&w, "bytes_received", ev->bytes_received);
		jw_u64(&w, "retransmits", ev->retransmits);
		jw_end(&w);
		if (ev->duration_ns)
			jw_u64(&w, "duration_ns", ev->duration_ns);
		if (ev->error)
			errno_json(&w, "error", ev->error);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		compact_head(f, compact, "close", &ev->proc, !(ev->flags & VIGIL_CONN_NO_OWNER));
		compact_tuple(compact, &ev->tuple);
		vbuf_printf(compact, " %s sent=%llu received=%llu\n", reason,
			    (unsigned long long)ev->bytes_sent,
			    (unsigned long long)ev->bytes_received);
	}
}

void vigil_format_reset(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			struct vigil_buf *compact)
{
	const struct vigil_reset *ev = rec;
	const char *dir = NAME(reset_dirs, ev->direction);
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_reset");
		owner_json(f, &w, &ev->proc, ev->flags);
		tuple_json(&w, &ev->tuple);
		if (ev->cookie)
			jw_u64(&w, "socket_cookie", ev->cookie);
		jw_cstr(&w, "direction", dir);
		if (ev->state)
			jw_cstr(&w, "state", NAME(tcp_states, ev->state));
		if (ev->reason)
			jw_u64(&w, "reason_code", ev->reason);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		compact_head(f, compact, "reset", &ev->proc, !(ev->flags & VIGIL_CONN_NO_OWNER));
		compact_tuple(compact, &ev->tuple);
		vbuf_printf(compact, " %s\n", dir);
	}
}

static void period_json(struct vigil_formatter *f, struct jw *w, const struct vigil_period *p)
{
	char t[VIGIL_TIME_MAX];

	jw_obj(w, "period");
	jw_u64(w, "id", p->id);
	vigil_rfc3339(t, sizeof(t), p->start_ktime, f->realtime_offset_ns);
	jw_cstr(w, "start", t);
	vigil_rfc3339(t, sizeof(t), p->end_ktime, f->realtime_offset_ns);
	jw_cstr(w, "end", t);
	jw_end(w);
}

/* Zero counts are left out, as Tetragon leaves out zero values. */
static void count_json(struct jw *w, const char *key, uint64_t v)
{
	if (v)
		jw_u64(w, key, v);
}

void vigil_format_report_proc(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			      struct vigil_buf *compact)
{
	const struct vigil_report_proc *ev = rec;
	const struct vigil_report_counts *c = &ev->c;
	bool owned = ev->proc.pid != 0;
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "process_report");
		if (owned)
			vigil_json_process(f, &w, "process", &ev->proc);
		else
			jw_bool(&w, "owner_unknown", true);
		period_json(f, &w, &ev->period);
		count_json(&w, "execs", c->execs);
		count_json(&w, "connects", c->connects);
		count_json(&w, "connect_errors", c->connect_errors);
		count_json(&w, "accepts", c->accepts);
		count_json(&w, "bytes_sent", c->bytes_sent);
		count_json(&w, "bytes_received", c->bytes_received);
		count_json(&w, "resets_sent", c->resets_sent);
		count_json(&w, "resets_received", c->resets_received);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		compact_head(f, compact, "report", &ev->proc, owned);
		vbuf_printf(compact, " period=%llu execs=%llu connects=%llu accepts=%llu "
			    "sent=%llu received=%llu resets=%llu/%llu\n",
			    (unsigned long long)ev->period.id, (unsigned long long)c->execs,
			    (unsigned long long)c->connects, (unsigned long long)c->accepts,
			    (unsigned long long)c->bytes_sent, (unsigned long long)c->bytes_received,
			    (unsigned long long)c->resets_sent, (unsigned long long)c->resets_received);
	}
}

void vigil_format_report_remote(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
				struct vigil_buf *compact)
{
	const struct vigil_report_remote *ev = rec;
	const struct vigil_remote *r = &ev->remote;
	const char *dir = NAME(directions, r->direction);
	char a[INET6_ADDRSTRLEN];
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "remote_report");
		period_json(f, &w, &ev->period);
		jw_obj(&w, "remote");
		jw_cstr(&w, "family", r->family == AF_INET6 ? "AF_INET6" : "AF_INET");
		jw_cstr(&w, "ip", vigil_addr_text(a, r->family, r->addr));
		jw_u64(&w, "port", r->port);
		jw_cstr(&w, "direction", dir);
		jw_u64(&w, "netns", r->netns);
		jw_end(&w);
		count_json(&w, "connections", ev->connections);
		count_json(&w, "bytes_sent", ev->bytes_sent);
		count_json(&w, "bytes_received", ev->bytes_received);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s %7s ", "remote", dir);
		compact_end(compact, r->family, r->addr, r->port);
		vbuf_printf(compact, " period=%llu connections=%llu sent=%llu received=%llu\n",
			    (unsigned long long)ev->period.id, (unsigned long long)ev->connections,
			    (unsigned long long)ev->bytes_sent, (unsigned long long)ev->bytes_received);
	}
}

void vigil_format_report_end(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			     struct vigil_buf *compact)
{
	const struct vigil_report_end *ev = rec;
	struct jw w;

	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "report_end");
		period_json(f, &w, &ev->period);
		jw_u64(&w, "processes", ev->procs);
		jw_u64(&w, "remotes", ev->remotes);
		count_json(&w, "lost", ev->lost);
		jw_u64(&w, "interval_ns", ev->interval_ns);
		count_json(&w, "table_full", ev->table_full);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact)
		vbuf_printf(compact, "%-8s period=%llu processes=%u remotes=%u lost=%u\n", "reported",
			    (unsigned long long)ev->period.id, ev->procs, ev->remotes, ev->lost);
}
