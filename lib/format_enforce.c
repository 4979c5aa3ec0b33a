// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Checks and formats the enforcement events (include/vigil/enforce_events.h):
 * one "network_enforce" object a line, in the style of the other kinds, and
 * a compact line each. Records may come from the network (the collector):
 * the size, family and every enum are checked or printed through bounded
 * tables before use.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "json.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

static const char *const actions[] = {
#define ACTION_NAME(id, value, name, cgroup, kinds) [id] = #name,
	VIGIL_POLICY_ACTIONS(ACTION_NAME)
#undef ACTION_NAME
};
static const char *const replies[] = {
	[VIGIL_REPLY_NONE] = "none",
	[VIGIL_REPLY_RST_SENDER] = "rst_to_sender",
	[VIGIL_REPLY_RST_BOTH] = "rst_to_both",
	[VIGIL_REPLY_ICMP_UNREACH] = "icmp_port_unreachable",
	[VIGIL_REPLY_SUPPRESSED] = "rate_limited",
	[VIGIL_REPLY_INELIGIBLE] = "not_answerable",
	[VIGIL_REPLY_INJECTED] = "rst_injected",
	[VIGIL_REPLY_SOCK_DESTROYED] = "socket_destroyed",
	[VIGIL_REPLY_CONNECT_REFUSED] = "connect_refused",
	[VIGIL_REPLY_UNPARSED] = "dropped_unparsed",
};
static const char *const dirs[] = {
	[VIGIL_DIR_INGRESS] = "ingress", [VIGIL_DIR_EGRESS] = "egress", [VIGIL_DIR_ANY] = "any",
};

static const char *name_of(const char *const *t, size_t n, unsigned v)
{
	return v < n && t[v] ? t[v] : "unknown";
}
#define NAME(t, v) name_of(t, N(t), v)

const char *vigil_ip_proto_name(uint8_t p)
{
	return p == IPPROTO_TCP ? "TCP" : p == IPPROTO_UDP ? "UDP" : p == IPPROTO_ICMP ? "ICMP" :
	       p == IPPROTO_ICMPV6 ? "ICMPv6" : "other";
}

/* "SA", "R", "FPA": tcpdump's letters for the flags byte. */
void vigil_tcp_flags_text(char *out, uint8_t f)
{
	static const char letters[] = "FSRPAUEC";
	int i, n = 0;

	for (i = 0; i < 8; i++)
		if (f & (1 << i))
			out[n++] = letters[i];
	out[n] = 0;
}

const char *vigil_enforce_action_name(unsigned action)
{
	return NAME(actions, action);
}

const char *vigil_enforce_reply_name(unsigned reply)
{
	return NAME(replies, reply);
}

const char *vigil_enforce_dir_name(unsigned dir)
{
	return NAME(dirs, dir);
}

int vigil_check_enforce(const void *rec, uint32_t len, const char **why)
{
	const struct vigil_enforce *ev = rec;

	(void)len;	/* type and size checked against the catalogue already */
	if (ev->family != AF_INET && ev->family != AF_INET6)
		return *why = "enforce event of an unknown address family", -EINVAL;
	if (ev->rule_id >= VIGIL_RULES_MAX)
		return *why = "enforce event of a rule id out of range", -EINVAL;
	return 0;
}

void vigil_format_enforce(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			  struct vigil_buf *compact)
{
	const struct vigil_enforce *ev = rec;
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?", flags[9] = "";
	bool tcp = ev->proto == IPPROTO_TCP;
	struct jw w;

	inet_ntop(ev->family, ev->saddr, s, sizeof(s));
	inet_ntop(ev->family, ev->daddr, d, sizeof(d));
	if (tcp)
		vigil_tcp_flags_text(flags, ev->tcp_flags);
	if (json) {
		jw_begin(&w, json);
		jw_obj(&w, NULL);
		jw_obj(&w, "network_enforce");
		if (ev->flags & VIGIL_ENF_HAS_PROC)
			vigil_json_process(f, &w, "process", &ev->proc);
		jw_u64(&w, "rule_id", ev->rule_id);
		jw_cstr(&w, "action", NAME(actions, ev->action));
		jw_cstr(&w, "reply", NAME(replies, ev->reply));
		jw_cstr(&w, "direction", NAME(dirs, ev->dir));
		jw_cstr(&w, "family", ev->family == AF_INET6 ? "AF_INET6" : "AF_INET");
		jw_cstr(&w, "protocol", vigil_ip_proto_name(ev->proto));
		jw_cstr(&w, "source_ip", s);
		jw_u64(&w, "source_port", ev->sport);
		jw_cstr(&w, "destination_ip", d);
		jw_u64(&w, "destination_port", ev->dport);
		if (tcp)
			jw_cstr(&w, "tcp_flags", flags);
		if (ev->ifindex)
			jw_u64(&w, "ifindex", ev->ifindex);
		if (ev->cookie)
			jw_u64(&w, "socket_cookie", ev->cookie);
		if (ev->suppressed)
			jw_u64(&w, "suppressed_before", ev->suppressed);
		jw_end(&w);
		vigil_json_envelope_end(f, &w, &ev->hdr);
	}
	if (compact) {
		vbuf_printf(compact, "%-8s %7u rule %u %s %s %s ", NAME(actions, ev->action),
			    (ev->flags & VIGIL_ENF_HAS_PROC) ? ev->proc.pid : 0, ev->rule_id,
			    NAME(dirs, ev->dir), vigil_ip_proto_name(ev->proto), flags);
		vbuf_printf(compact, ev->family == AF_INET6 ? "[%s]:%u -> [%s]:%u" : "%s:%u -> %s:%u",
			    s, ev->sport, d, ev->dport);
		vbuf_printf(compact, " %s", NAME(replies, ev->reply));
		if (ev->suppressed)
			vbuf_printf(compact, " (+%u suppressed)", ev->suppressed);
		vbuf_putc(compact, '\n');
	}
}
