/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Diagnostics on stderr, one line each, said once where the decision is
 * made. The functions that take an error return it, so callers can
 * `return vlog_err(...)`.
 *
 * vlog_err says what failed and appends the system's error (a syscall's
 * errno, libbpf's): "cannot open X: Permission denied". vlog_refuse says a
 * complete sentence of vigil's own judgment and appends nothing: the error
 * it returns is a code for the caller, not news for the user. vlog_usage
 * is vlog_refuse for a bad command line: it returns -VIGIL_EUSAGE, which
 * vigil_exit_status turns into exit 2.
 *
 * Lines have a level (--log-level: error, warn, info, debug; -v is debug).
 * A daemon (vlog_daemon) stamps each line with the time; --log-format json
 * writes one JSON object a line; under systemd (JOURNAL_STREAM set, and
 * stderr that stream) a line starts with the <N> priority journald reads,
 * and carries no time of its own (journald adds it).
 */
#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

#include <stdbool.h>

enum vlog_level { VLOG_ERROR, VLOG_WARN, VLOG_INFO, VLOG_DEBUG };

/* The exit status of all three programs: 0 done, 1 failed while running
 * (or refused what it was given to load), 2 a bad command line. */
#define VIGIL_EXIT_OK 0
#define VIGIL_EXIT_FAIL 1
#define VIGIL_EXIT_USAGE 2
#define VIGIL_EUSAGE 4096	/* past every errno: the command line is wrong */

extern int vlog_verbose;	/* level is debug: callers that pass libbpf's */
extern const char *vlog_prog;

/* "error", "warn", "info" or "debug"; -EINVAL otherwise. */
int vlog_set_level(const char *name);
/* "text" or "json"; -EINVAL otherwise. */
int vlog_set_format(const char *name);
/* Timestamps on text lines (vigild, vigil-collector); the journal check. */
void vlog_daemon(void);
bool vlog_enabled(enum vlog_level level);

int vlog_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vlog_refuse(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int vlog_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vlog_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vlog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vlog_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line at level that is already formatted (libbpf's, the verifier's):
 * its trailing newline is dropped. */
void vlog_line(enum vlog_level level, const char *line);

/* 0, 1 or 2 (above) for a main's final error. */
int vigil_exit_status(int err);

#endif
