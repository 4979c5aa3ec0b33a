/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Diagnostics on stderr, one line each, said once where the decision is
 * made. vlog_err returns its error so callers can `return vlog_err(...)`. */
#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

extern int vlog_verbose;
extern const char *vlog_prog;

int vlog_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vlog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vlog_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
