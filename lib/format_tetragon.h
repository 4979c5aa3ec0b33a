/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The export formats: vigil's own JSON (every field vigil has: seq, ppid,
 * cgroups, its network kinds and reports) and Tetragon's, exactly its
 * schema (api/v1/tetragon: GetEventsResponse as protojson), for consumers
 * built for Tetragon. docs/events.md lists what the Tetragon form leaves
 * out. The process object of both forms is format_process.c's.
 */
#ifndef VIGIL_FORMAT_TETRAGON_H
#define VIGIL_FORMAT_TETRAGON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "opts.h"

enum vigil_export_format {
	VIGIL_EXPORT_VIGIL = 0,		/* the default: vigil's own superset */
	VIGIL_EXPORT_TETRAGON,
};

struct vigil_format_opts {
	enum vigil_export_format format;
	bool process_ns;	/* --enable-process-ns: "ns" in process objects */
	bool process_cred;	/* --enable-process-cred: saved and fs ids, capabilities */
};

/* Tetragon's policy_name for vigil's built-in network observation, for
 * decisions of vigil's policies, and for its periodic reports. */
#define VIGIL_TETRAGON_NET_POLICY "vigil-network"
#define VIGIL_TETRAGON_ENFORCE_POLICY "vigil-policy"
#define VIGIL_TETRAGON_REPORT_POLICY "vigil-report"

/* The three options (--export-format, --enable-process-ns,
 * --enable-process-cred) for an option table (opts.h), storing into the
 * struct vigil_format_opts at offset at in the options struct (vigil_opts_parse).
 * A program with its own getopt switch gives codes base to base + 2 and
 * calls vigil_format_option, which logs and returns -EINVAL for a bad value. */
#define VIGIL_FORMAT_OPTS(base, at)							\
	{ "export-format", 0, (base), "FORMAT",						\
	  "JSON as vigil (default: every field vigil has) or\n"			\
	  "tetragon (exactly Tetragon's schema; docs/events.md)",			\
	  .set = vigil_format_opt_form, .off = (at) },					\
	{ "enable-process-ns", 0, (base) ? (base) + 1 : 0, NULL,			\
	  "namespaces (\"ns\") in process objects",					\
	  .set = vigil_opt_flag, .off = (at) + offsetof(struct vigil_format_opts, process_ns) }, \
	{ "enable-process-cred", 0, (base) ? (base) + 2 : 0, NULL,			\
	  "saved and fs ids and capabilities in process objects",			\
	  .set = vigil_opt_flag, .off = (at) + offsetof(struct vigil_format_opts, process_cred) }
vigil_opt_set_fn vigil_format_opt_form;
int vigil_format_option(int code, int base, const char *arg, struct vigil_format_opts *o);

struct vigil_formatter;
struct vigil_proc;
struct vigil_exec;
struct vigil_proc_entry;
struct jw;

/* The JSON line of a checked record in Tetragon's form, one function per
 * kind that has one (the catalogue, vigil/event_kinds.h, names them), run
 * after the native formatter, which keeps the process cache. */
void vigil_tetragon_exec(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_exit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_loss(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_throttle(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_conn(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_close(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_reset(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
/* format_tetragon_tp.c: kinds Tetragon has none for, as process_tracepoint */
void vigil_tetragon_enforce(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_report_proc(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
void vigil_tetragon_report_remote(struct vigil_formatter *f, const void *rec,
				  struct vigil_buf *json);
void vigil_tetragon_report_end(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);
/* A rate_limit_info line: n records this output lost, stamped at ktime. */
void vigil_tetragon_lost_line(struct vigil_formatter *f, struct vigil_buf *json, uint64_t ktime,
			      uint64_t n);

#endif
