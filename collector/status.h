/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --status-file PATH: what the collector accepted from whom, for operators
 * and monitoring, rewritten once a second (a new file renamed over PATH, so
 * a reader never sees half of one). One line for the collector, one per
 * listener, one per agent stream it holds in memory: connected or not, from
 * where, over TLS with which certificate or in clear text, written up to
 * which offset, and its counts of records, duplicates and losses.
 */
#ifndef VIGIL_COLLECTOR_STATUS_H
#define VIGIL_COLLECTOR_STATUS_H

struct collector;
struct listener;

/* Writes the status to path; -errno (logged once per episode). */
int collector_status_write(const struct collector *c, const struct listener *ls, int nls,
			   const char *path);

#endif
