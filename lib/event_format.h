/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Turns ring records into what users read: Tetragon-style JSON lines and a
 * compact one-line view. The agent and the collector both use this file, so
 * a record reads the same wherever it is decoded. Every record is checked as
 * hostile input first (vigil_event_check): the collector gets them from the
 * network.
 */
#ifndef VIGIL_EVENT_FORMAT_H
#define VIGIL_EVENT_FORMAT_H

#include <stdint.h>
#include "buf.h"
#include "format_policy.h"
#include "format_process.h"
#include "format_tetragon.h"
#include "proc_cache.h"

/* A process object as this formatter last wrote it from a cache entry
 * alone (format_process.c): an exec's process, its exit's, and each
 * child's "parent" are the same bytes, written once. Only while the
 * formatter's memo is on (vigil_formatter_memo: the agent's; not the
 * collector's, whose memory per agent stream is budgeted), and only
 * objects whose buffer stays within VIGIL_PROCESS_MEMO_MAX bytes. */
#define VIGIL_PROCESS_MEMOS 32
#define VIGIL_PROCESS_MEMO_MAX 8192
struct vigil_process_memo {
	uint64_t serial;		/* the entry's (struct vigil_proc_entry); 0: empty */
	int64_t realtime_offset_ns;	/* what start_time was written with */
	struct vigil_format_opts opts;	/* and the form, ns and cred with */
	struct vigil_buf json;		/* the object, braces included */
};

struct vigil_formatter {
	char node_name[256];
	int64_t realtime_offset_ns;	/* the producing node's REALTIME - MONOTONIC */
	struct vigil_proc_cache cache;
	struct vigil_buf tmp;
	uint64_t counts[VIGIL_EV_TYPE_MAX + 1];	/* records formatted, by type */
	struct vigil_format_opts opts;	/* zero: vigil's own JSON */
	uint64_t lost_said;	/* Tetragon form: the losses rate_limit_info said */
	/* Tetragon form: the cgroup name a process_throttle START wrote, so
	 * that its STOP writes the same (the processes that named it may have
	 * left the cache by then); the oldest storms' are reused first. */
	struct vigil_throttle_name {
		uint64_t cgroup_id;	/* 0: free */
		uint16_t len;
		char name[VIGIL_CGROUP_MAX];
	} throttle_names[16];
	unsigned throttle_next;
	/* While a health event's record is formatted: the health event's
	 * header, whose seq is the line's (the record's own is health_seq). */
	const struct vigil_hdr *relay;
	bool memo;	/* memos[] used (vigil_formatter_memo) */
	struct vigil_process_memo memos[VIGIL_PROCESS_MEMOS];	/* by serial */
};

int vigil_formatter_init(struct vigil_formatter *f, const char *node_name, size_t cache_max);
void vigil_formatter_free(struct vigil_formatter *f);
/* Keeps process objects once written (struct vigil_process_memo), or
 * stops (and frees them). */
void vigil_formatter_memo(struct vigil_formatter *f, bool on);
/* The node name exec ids are made of, from now on. */
void vigil_formatter_node_name(struct vigil_formatter *f, const char *node_name);

/* 0 when rec is a well-formed event of len bytes; else -EINVAL and *why
 * names what is wrong. */
int vigil_event_check(const void *rec, uint32_t len, const char **why);

/* "exec 12, exit 10, connect 3": the records f formatted, by kind, those
 * it saw; "none" when it saw none. */
void vigil_event_counts_text(const struct vigil_formatter *f, struct vigil_buf *b);
/* The catalogue's name of event type type ("exec"), NULL for none. */
const char *vigil_event_kind_name(unsigned type);
/* The process a checked record is about (an exec's, a fork's child, a
 * socket's owner, who hit a rule, ...); NULL for a kind that names none,
 * or a record that knows none (pid 0: a socket without owner, a packet
 * seen at TC). */
const struct vigil_proc *vigil_event_proc(const void *rec);

/* Each part checks the content of its own kinds, whose type and size
 * vigil_event_check has checked against the catalogue (vigil/event_kinds.h),
 * and formats them (lib/format_<part>.c), one function per kind that the
 * catalogue names; the JSON writer and process lookups below are theirs to
 * use. */
struct jw;
typedef int vigil_event_check_fn(const void *rec, uint32_t len, const char **why);
typedef void vigil_event_format_fn(struct vigil_formatter *f, const void *rec,
				   struct vigil_buf *json, struct vigil_buf *compact);
vigil_event_check_fn vigil_check_exec, vigil_check_conn, vigil_check_report_remote,
	vigil_check_enforce, vigil_check_health;
vigil_event_format_fn vigil_format_exec, vigil_format_exit, vigil_format_fork,
	vigil_format_throttle, vigil_format_loss, vigil_format_conn, vigil_format_close,
	vigil_format_reset, vigil_format_report_proc, vigil_format_report_remote,
	vigil_format_report_end, vigil_format_enforce, vigil_format_heartbeat,
	vigil_format_blind, vigil_format_tamper, vigil_format_tamper_pin, vigil_format_prog_runs,
	vigil_format_health;
/* The JSON line's closing fields. */
void vigil_json_envelope_end(struct vigil_formatter *f, struct jw *w, const struct vigil_hdr *h);
/* Appends text to a compact line with what could drive a terminal escaped:
 * C0 controls and DEL (\e, \n, \r, \t, else \xHH), bytes that are not
 * valid UTF-8, and C1 controls even when validly encoded (\xHH a byte).
 * Every string from a process (binary, arguments) goes through it. */
void vigil_compact_text(struct vigil_buf *b, const char *text, size_t n);
/* argv[1..] as vigil's form writes "arguments" (see docs/events.md) into b. */
void vigil_args_text(struct vigil_buf *b, const char *args, size_t n);
/* Names from lib/format_net.c; out holds INET6_ADDRSTRLEN. */
const char *vigil_addr_text(char *out, uint16_t family, const uint8_t *a);
const char *vigil_tcp_state_name(unsigned state);
const char *vigil_close_reason_name(unsigned reason);
const char *vigil_conn_dir_name(unsigned dir);
/* Names from lib/format_enforce.c ("unknown" out of range); tcp_flags_text
 * writes tcpdump's letters ("SA") into out[9]. */
const char *vigil_enforce_action_name(unsigned action);
const char *vigil_enforce_reply_name(unsigned reply);
const char *vigil_enforce_dir_name(unsigned dir);
const char *vigil_ip_proto_name(uint8_t proto);
void vigil_tcp_flags_text(char *out, uint8_t flags);

/* Updates the process cache from a checked record and appends its JSON line
 * (with '\n') to json and its compact line to compact; either may be NULL.
 * Records that users do not see (fork) append nothing. */
void vigil_event_format(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			struct vigil_buf *compact);
/* The same, with both JSON forms at once (either may be NULL): f->opts
 * says the Tetragon form's options, not which form. */
void vigil_event_format_forms(struct vigil_formatter *f, const void *rec,
			      struct vigil_buf *vigil_json, struct vigil_buf *tetragon_json,
			      struct vigil_buf *compact);

#endif
