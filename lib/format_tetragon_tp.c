// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vigil's kinds that Tetragon has no kind for, in Tetragon's form: each is a
 * process_tracepoint of subsys "vigil" whose event is vigil's kind name,
 * its fields labelled arguments (docs/events.md, "The Tetragon form").
 * - Enforcement decisions (network_enforce): policy_name "vigil-policy",
 *   action KPROBE_ACTION_OVERRIDE (vigil refused what the process or peer
 *   asked for; which action its rule took is the "action" argument). The
 *   process and file policies write their decisions in this shape too.
 * - Reports (process_report, remote_report, report_end): policy_name
 *   "vigil-report", action KPROBE_ACTION_POST.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "event_format.h"
#include "format_tetragon_json.h"
#include "ids.h"
#include "json.h"

/* Opens a process_tracepoint of subsys "vigil" up to its first argument;
 * p NULL: a line about no process (it has none). */
static void tp_begin(struct vigil_formatter *f, struct jw *w, struct vigil_buf *json,
		     const struct vigil_proc *p, uint32_t owner_flags, const char *event)
{
	vigil_tg_begin(w, json, "process_tracepoint");
	if (p)
		vigil_tg_owner(f, w, p, owner_flags);
	jw_cstr(w, "subsys", "vigil");
	jw_cstr(w, "event", event);
	jw_arr(w, "args");
}

static void tp_end(struct vigil_formatter *f, struct jw *w, uint64_t ktime, const char *policy,
		   const char *action)
{
	jw_arr_end(w);
	jw_cstr(w, "policy_name", policy);
	jw_cstr(w, "action", action);
	vigil_tg_end(f, w, ktime);
}

static const char *tetragon_proto(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP: return "IPPROTO_TCP";
	case IPPROTO_UDP: return "IPPROTO_UDP";
	case IPPROTO_ICMP: return "IPPROTO_ICMP";
	case IPPROTO_ICMPV6: return "IPPROTO_ICMPV6";
	}
	return NULL;
}

/* The packet or call a decision was about, as Tetragon's skb_arg: its
 * source and destination (a connect's: this end, then the peer). */
static void skb_arg(struct jw *w, const struct vigil_enforce *ev)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";
	const char *proto = tetragon_proto(ev->proto);

	inet_ntop(ev->family, ev->saddr, s, sizeof(s));
	inet_ntop(ev->family, ev->daddr, d, sizeof(d));
	jw_obj(w, NULL);
	jw_obj(w, "skb_arg");
	jw_cstr(w, "saddr", s);
	jw_cstr(w, "daddr", d);
	jw_u64(w, "sport", ev->sport);
	jw_u64(w, "dport", ev->dport);
	jw_u64(w, "proto", ev->proto);
	if (proto)
		jw_cstr(w, "protocol", proto);
	jw_cstr(w, "family", ev->family == AF_INET6 ? "AF_INET6" : "AF_INET");
	jw_end(w);
	jw_end(w);
}

void vigil_tetragon_enforce(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_enforce *ev = rec;
	char flags[9];
	struct jw w;

	tp_begin(f, &w, json, &ev->proc,
		 ev->flags & VIGIL_ENF_HAS_PROC ? 0 : VIGIL_CONN_NO_OWNER, "network_enforce");
	skb_arg(&w, ev);
	vigil_tg_string_arg(&w, "action", vigil_enforce_action_name(ev->action));
	vigil_tg_string_arg(&w, "reply", vigil_enforce_reply_name(ev->reply));
	vigil_tg_string_arg(&w, "direction", vigil_enforce_dir_name(ev->dir));
	vigil_tg_size_arg(&w, "rule_id", ev->rule_id);
	if (ev->proto == IPPROTO_TCP) {
		vigil_tcp_flags_text(flags, ev->tcp_flags);
		vigil_tg_string_arg(&w, "tcp_flags", flags);
	}
	if (ev->ifindex)
		vigil_tg_size_arg(&w, "ifindex", ev->ifindex);
	if (ev->cookie)
		vigil_tg_size_arg(&w, "socket_cookie", ev->cookie);
	if (ev->suppressed)
		vigil_tg_size_arg(&w, "suppressed_before", ev->suppressed);
	tp_end(f, &w, ev->hdr.ktime, VIGIL_TETRAGON_ENFORCE_POLICY, "KPROBE_ACTION_OVERRIDE");
}

/* The period's id, start and end, then the counts that are not 0. */
static void period_args(struct vigil_formatter *f, struct jw *w, const struct vigil_period *p)
{
	char t[VIGIL_TIME_MAX];

	vigil_tg_size_arg(w, "period_id", p->id);
	vigil_rfc3339(t, sizeof(t), p->start_ktime, f->realtime_offset_ns);
	vigil_tg_string_arg(w, "period_start", t);
	vigil_rfc3339(t, sizeof(t), p->end_ktime, f->realtime_offset_ns);
	vigil_tg_string_arg(w, "period_end", t);
}

static void count_arg(struct jw *w, const char *label, uint64_t v)
{
	if (v)
		vigil_tg_size_arg(w, label, v);
}

void vigil_tetragon_report_proc(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_report_proc *ev = rec;
	const struct vigil_report_counts *c = &ev->c;
	struct jw w;

	tp_begin(f, &w, json, &ev->proc, ev->proc.pid ? 0 : VIGIL_CONN_NO_OWNER, "process_report");
	period_args(f, &w, &ev->period);
	count_arg(&w, "execs", c->execs);
	count_arg(&w, "connects", c->connects);
	count_arg(&w, "connect_errors", c->connect_errors);
	count_arg(&w, "accepts", c->accepts);
	count_arg(&w, "bytes_sent", c->bytes_sent);
	count_arg(&w, "bytes_received", c->bytes_received);
	count_arg(&w, "resets_sent", c->resets_sent);
	count_arg(&w, "resets_received", c->resets_received);
	tp_end(f, &w, ev->hdr.ktime, VIGIL_TETRAGON_REPORT_POLICY, "KPROBE_ACTION_POST");
}

/* The remote end as Tetragon's sockaddr_arg, then its direction and the
 * namespace it was seen from. */
void vigil_tetragon_report_remote(struct vigil_formatter *f, const void *rec,
				  struct vigil_buf *json)
{
	const struct vigil_report_remote *ev = rec;
	const struct vigil_remote *r = &ev->remote;
	char a[INET6_ADDRSTRLEN];
	struct jw w;

	tp_begin(f, &w, json, NULL, 0, "remote_report");
	jw_obj(&w, NULL);
	jw_obj(&w, "sockaddr_arg");
	jw_cstr(&w, "family", r->family == AF_INET6 ? "AF_INET6" : "AF_INET");
	jw_cstr(&w, "addr", vigil_addr_text(a, r->family, r->addr));
	jw_u64(&w, "port", r->port);
	jw_end(&w);
	jw_end(&w);
	vigil_tg_string_arg(&w, "direction", vigil_conn_dir_name(r->direction));
	vigil_tg_size_arg(&w, "netns", r->netns);
	period_args(f, &w, &ev->period);
	count_arg(&w, "connections", ev->connections);
	count_arg(&w, "bytes_sent", ev->bytes_sent);
	count_arg(&w, "bytes_received", ev->bytes_received);
	tp_end(f, &w, ev->hdr.ktime, VIGIL_TETRAGON_REPORT_POLICY, "KPROBE_ACTION_POST");
}

void vigil_tetragon_report_end(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_report_end *ev = rec;
	struct jw w;

	tp_begin(f, &w, json, NULL, 0, "report_end");
	period_args(f, &w, &ev->period);
	vigil_tg_size_arg(&w, "processes", ev->procs);
	vigil_tg_size_arg(&w, "remotes", ev->remotes);
	count_arg(&w, "lost", ev->lost);
	vigil_tg_size_arg(&w, "interval_ns", ev->interval_ns);
	count_arg(&w, "table_full", ev->table_full);
	tp_end(f, &w, ev->hdr.ktime, VIGIL_TETRAGON_REPORT_POLICY, "KPROBE_ACTION_POST");
}
