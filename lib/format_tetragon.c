// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tetragon's form of vigil's records (see format_tetragon.h): only fields
 * of Tetragon's schema, with Tetragon's meanings, written as protojson
 * writes them (64-bit integers as strings, enums by name, timestamps in
 * RFC 3339). Process events are process_exec and process_exit; connections
 * are process_kprobe events of vigil's built-in network policy, their
 * socket in a sock_arg and the rest in labelled arguments; losses are
 * rate_limit_info; a process budget's storms process_throttle. Kinds
 * Tetragon has no kind for are format_tetragon_tp.c's. tests/tetragon_schema.t parses every line with
 * Tetragon's own protos, unknown fields refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "event_format.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "format_tetragon_json.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

static int parse_form(const char *arg, struct vigil_format_opts *o)
{
	if (!strcmp(arg, "vigil"))
		o->format = VIGIL_EXPORT_VIGIL;
	else if (!strcmp(arg, "tetragon"))
		o->format = VIGIL_EXPORT_TETRAGON;
	else
		return vlog_refuse(-EINVAL, "invalid value '%s' for --export-format (tetragon or vigil)",
				arg);
	return 0;
}

int vigil_format_option(int code, int base, const char *arg, struct vigil_format_opts *o)
{
	if (code == base + 1)
		o->process_ns = true;
	else if (code == base + 2)
		o->process_cred = true;
	else
		return parse_form(arg, o);
	return 0;
}

int vigil_format_opt_form(const struct vigil_opt *opt, void *base, const char *arg)
{
	return parse_form(arg, (struct vigil_format_opts *)((char *)base + opt->off));
}

/* protojson writes 64-bit integers as strings. */
void vigil_tg_u64_str(struct jw *w, const char *key, uint64_t v)
{
	char s[24];

	jw_str(w, key, s, vigil_u64_dec(s, v));
}

void vigil_tg_begin(struct jw *w, struct vigil_buf *json, const char *kind)
{
	jw_begin(w, json);
	jw_obj(w, NULL);
	jw_obj(w, kind);
}

/* Closes the kind's object and the line: node and time, no seq. */
void vigil_tg_end(struct vigil_formatter *f, struct jw *w, uint64_t ktime)
{
	char t[VIGIL_TIME_MAX];

	jw_end(w);
	jw_cstr(w, "node_name", f->node_name);
	vigil_rfc3339(t, sizeof(t), ktime, f->realtime_offset_ns);
	jw_cstr(w, "time", t);
	jw_end(w);
	vbuf_putc(w->b, '\n');
}

void vigil_tetragon_exec(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_exec *ev = rec;
	const struct vigil_proc_entry *e =
		vigil_proc_cache_find(&f->cache, ev->proc.pid, ev->proc.exec_ktime);
	struct jw w;

	if (ev->flags & VIGIL_EXEC_KNOWN)
		return;		/* its line was written before */
	vigil_tg_begin(&w, json, "process_exec");
	vigil_json_process_form(f, &w, VIGIL_EXPORT_TETRAGON, "process", &ev->proc, e, ev);
	vigil_json_parent(f, &w, VIGIL_EXPORT_TETRAGON, &ev->proc);
	vigil_tg_end(f, &w, ev->hdr.ktime);
}

void vigil_tetragon_exit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_exit *ev = rec;
	const struct vigil_proc_entry *e =
		vigil_proc_cache_find(&f->cache, ev->proc.pid, ev->proc.exec_ktime);
	int status = (ev->exit_code >> 8) & 0xff, sig = ev->exit_code & 0x7f;
	char sigbuf[32], t[VIGIL_TIME_MAX];
	const char *signame = vigil_signal_name(sig, sigbuf, sizeof(sigbuf));
	struct vigil_proc p = ev->proc;
	struct jw w;

	if (e) {	/* the parent at exec, as Tetragon names it */
		p.ppid = e->proc.ppid;
		p.parent_exec_ktime = e->proc.parent_exec_ktime;
	}
	/* The record names the last thread, which need not be the leader (a
	 * leader that called pthread_exit first): Tetragon's exit has tid =
	 * pid, so that it matches the exec (pkg/grpc/exec/exec.go). */
	p.tid = p.pid;
	vigil_tg_begin(&w, json, "process_exit");
	vigil_json_process_form(f, &w, VIGIL_EXPORT_TETRAGON, "process", &p, e, NULL);
	vigil_json_parent(f, &w, VIGIL_EXPORT_TETRAGON, &p);
	if (signame)
		jw_cstr(&w, "signal", signame);
	if (status)
		jw_u64(&w, "status", status);
	vigil_rfc3339(t, sizeof(t), ev->hdr.ktime, f->realtime_offset_ns);
	jw_cstr(&w, "time", t);
	vigil_tg_end(f, &w, ev->hdr.ktime);
}

void vigil_tetragon_lost_line(struct vigil_formatter *f, struct vigil_buf *json, uint64_t ktime,
			      uint64_t n)
{
	struct jw w;

	vigil_tg_begin(&w, json, "rate_limit_info");
	vigil_tg_u64_str(&w, "number_of_dropped_process_events", n);
	vigil_tg_end(f, &w, ktime);
}

/* vigil_loss carries all-time counts: the line says what is new since the
 * last one this output wrote (the first: all so far). */
void vigil_tetragon_loss(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_loss *ev = rec;
	uint64_t total = ev->ring_full + ev->recursion_misses;

	if (total <= f->lost_said)
		return;
	vigil_tetragon_lost_line(f, json, ev->hdr.ktime, total - f->lost_said);
	f->lost_said = total;
}

/* The name of a throttled cgroup: the one its START wrote, else its path as
 * a process that exec'd there knows it, else its id in decimal. A START
 * keeps it for the STOP, which frees it. */
static struct vigil_throttle_name *throttle_name(struct vigil_formatter *f,
						 const struct vigil_throttle *ev)
{
	const size_t n = sizeof(f->throttle_names) / sizeof(*f->throttle_names);
	struct vigil_throttle_name *t = NULL;
	const struct vigil_proc_entry *e;

	for (size_t i = 0; i < n && !t; i++)
		if (f->throttle_names[i].cgroup_id == ev->cgroup_id)
			t = &f->throttle_names[i];
	if (t)
		return t;
	t = &f->throttle_names[f->throttle_next++ % n];
	t->cgroup_id = ev->cgroup_id;
	e = vigil_proc_cache_in_cgroup(&f->cache, ev->cgroup_id);
	if (e && e->cgroup_len <= sizeof(t->name)) {
		memcpy(t->name, e->cgroup, e->cgroup_len);
		t->len = e->cgroup_len;
	} else {
		t->len = vigil_u64_dec(t->name, ev->cgroup_id);
	}
	return t;
}

/* Tetragon's process_throttle: a storm's start and stop, per cgroup
 * (throttle_name). The counts between them have no Tetragon form (vigil's
 * vigil_throttle, and the proc_events_throttled counter, keep them); by
 * uid there is no cgroup to name. */
void vigil_tetragon_throttle(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_throttle *ev = rec;
	struct vigil_throttle_name *t;
	struct jw w;

	if (ev->phase != VIGIL_THROTTLE_START && ev->phase != VIGIL_THROTTLE_STOP)
		return;
	vigil_tg_begin(&w, json, "process_throttle");
	jw_cstr(&w, "type", ev->phase == VIGIL_THROTTLE_START ? "THROTTLE_START" : "THROTTLE_STOP");
	if (ev->by == VIGIL_BUDGET_BY_CGROUP) {
		t = throttle_name(f, ev);
		jw_str(&w, "cgroup", t->name, t->len);
		if (ev->phase == VIGIL_THROTTLE_STOP)
			t->cgroup_id = 0;
	}
	vigil_tg_end(f, &w, ev->hdr.ktime);
}

/* The owner of a socket; an unknown owner is still a process object, as
 * Tetragon's tools expect one in every process_kprobe. */
void vigil_tg_owner(struct vigil_formatter *f, struct jw *w, const struct vigil_proc *p,
		    uint32_t flags)
{
	if (!(flags & VIGIL_CONN_NO_OWNER)) {
		const struct vigil_proc_entry *e =
			vigil_proc_cache_find(&f->cache, p->pid, p->exec_ktime);

		vigil_json_process_form(f, w, VIGIL_EXPORT_TETRAGON, "process", p, e, NULL);
		vigil_json_parent(f, w, VIGIL_EXPORT_TETRAGON, p);
		return;
	}
	jw_obj(w, "process");
	jw_u64(w, "pid", 0);
	if (flags & VIGIL_CONN_PREEXISTING)
		jw_u64(w, "uid", p->uid);	/* the socket's, from the iterator */
	jw_cstr(w, "flags", "unknown");
	jw_bool(w, "in_init_tree", false);
	jw_end(w);
}

/* cookie: the kernel's socket cookie (0: no socket), never an address. */
static void sock_arg(struct jw *w, const struct vigil_tuple *t, uint64_t cookie, const char *state)
{
	char a[INET6_ADDRSTRLEN];

	jw_obj(w, NULL);
	jw_obj(w, "sock_arg");
	jw_cstr(w, "family", t->family == AF_INET6 ? "AF_INET6" : "AF_INET");
	jw_cstr(w, "type", "SOCK_STREAM");
	jw_cstr(w, "protocol", "IPPROTO_TCP");
	jw_cstr(w, "saddr", vigil_addr_text(a, t->family, t->saddr));
	jw_cstr(w, "daddr", vigil_addr_text(a, t->family, t->daddr));
	jw_u64(w, "sport", t->sport);
	jw_u64(w, "dport", t->dport);
	if (cookie)
		vigil_tg_u64_str(w, "cookie", cookie);
	if (state)
		jw_cstr(w, "state", state);
	jw_end(w);
	jw_end(w);
}

void vigil_tg_size_arg(struct jw *w, const char *label, uint64_t v)
{
	jw_obj(w, NULL);
	vigil_tg_u64_str(w, "size_arg", v);
	jw_cstr(w, "label", label);
	jw_end(w);
}

void vigil_tg_string_arg(struct jw *w, const char *label, const char *v)
{
	jw_obj(w, NULL);
	jw_cstr(w, "string_arg", v);
	jw_cstr(w, "label", label);
	jw_end(w);
}

/* Tetragon writes no error on success; strerrorname_np(0) is "0", not
 * NULL, so 0 is left out before it is asked. */
static void error_arg(struct jw *w, uint32_t err)
{
	const char *name;

	if (!err)
		return;
	name = err < 4096 ? strerrorname_np(err) : NULL;
	if (name)
		vigil_tg_string_arg(w, "error", name);
	else
		vigil_tg_size_arg(w, "error", err);
}

/* Opens a process_kprobe of the network policy, up to its first argument. */
static void kprobe_begin(struct vigil_formatter *f, struct jw *w, struct vigil_buf *json,
			 const struct vigil_proc *p, uint32_t flags, const char *function,
			 const struct vigil_tuple *t, uint64_t cookie, const char *state)
{
	vigil_tg_begin(w, json, "process_kprobe");
	vigil_tg_owner(f, w, p, flags);
	jw_cstr(w, "function_name", function);
	jw_arr(w, "args");
	sock_arg(w, t, cookie, state);
	vigil_tg_size_arg(w, "netns", t->netns);
	if (flags & VIGIL_CONN_PREEXISTING)
		vigil_tg_string_arg(w, "owner", "preexisting");
	if (flags & VIGIL_CONN_REFINED)
		vigil_tg_string_arg(w, "owner", "refined");
}

static void kprobe_end(struct vigil_formatter *f, struct jw *w, uint64_t ktime)
{
	jw_arr_end(w);
	jw_cstr(w, "action", "KPROBE_ACTION_POST");
	jw_cstr(w, "policy_name", VIGIL_TETRAGON_NET_POLICY);
	jw_cstr(w, "return_action", "KPROBE_ACTION_POST");
	vigil_tg_end(f, w, ktime);
}

void vigil_tetragon_conn(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_conn *ev = rec;
	static const char *const functions[] = {
		[VIGIL_EV_CONNECT - VIGIL_EV_NET_FIRST] = "tcp_connect",
		[VIGIL_EV_ACCEPT - VIGIL_EV_NET_FIRST] = "inet_csk_accept",
		[VIGIL_EV_LISTEN - VIGIL_EV_NET_FIRST] = "inet_listen",
	};
	const char *state = ev->hdr.type == VIGIL_EV_LISTEN ? "TCP_LISTEN" :
			    ev->error ? "TCP_CLOSE" : "TCP_ESTABLISHED";
	struct jw w;

	kprobe_begin(f, &w, json, &ev->proc, ev->flags, functions[ev->hdr.type - VIGIL_EV_NET_FIRST],
		     &ev->tuple, ev->cookie, state);
	if (ev->latency_ns)
		vigil_tg_size_arg(&w, "latency_ns", ev->latency_ns);
	error_arg(&w, ev->error);
	kprobe_end(f, &w, ev->hdr.ktime);
}

void vigil_tetragon_close(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_close *ev = rec;
	struct jw w;

	kprobe_begin(f, &w, json, &ev->proc, ev->flags, "tcp_close", &ev->tuple, ev->cookie,
		     vigil_tcp_state_name(ev->state));
	vigil_tg_string_arg(&w, "direction", vigil_conn_dir_name(ev->direction));
	vigil_tg_string_arg(&w, "closed_by", vigil_close_reason_name(ev->reason));
	vigil_tg_size_arg(&w, "bytes_sent", ev->bytes_sent);
	vigil_tg_size_arg(&w, "bytes_received", ev->bytes_received);
	vigil_tg_size_arg(&w, "retransmits", ev->retransmits);
	if (ev->duration_ns)
		vigil_tg_size_arg(&w, "duration_ns", ev->duration_ns);
	error_arg(&w, ev->error);
	kprobe_end(f, &w, ev->hdr.ktime);
}

/* A RST sent is tcp_send_reset's, one received tcp_reset's (the kernel
 * functions that handle them). */
void vigil_tetragon_reset(struct vigil_formatter *f, const void *rec, struct vigil_buf *json)
{
	const struct vigil_reset *ev = rec;
	bool sent = ev->direction == VIGIL_RESET_SENT;
	struct jw w;

	kprobe_begin(f, &w, json, &ev->proc, ev->flags, sent ? "tcp_send_reset" : "tcp_reset",
		     &ev->tuple, ev->cookie, ev->state ? vigil_tcp_state_name(ev->state) : NULL);
	vigil_tg_string_arg(&w, "direction", sent ? "sent" : "received");
	if (ev->reason)
		vigil_tg_size_arg(&w, "reason_code", ev->reason);
	kprobe_end(f, &w, ev->hdr.ktime);
}
