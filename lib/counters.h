/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reads the pinned per-CPU loss counters and the sequence counter. */
#ifndef VIGIL_COUNTERS_H
#define VIGIL_COUNTERS_H

#include <stdint.h>
#include <vigil/events.h>

/* Sums each counter over CPUs into out[VIGIL_CNT_MAX]. */
int vigil_counters_read(int counters_fd, uint64_t out[VIGIL_CNT_MAX]);
/* The last sequence number handed out. */
int vigil_seq_read(int seq_fd, uint64_t *seq);
/* Adds n to a slot user space keeps (VIGIL_CNT_OUTPUT_LOST). */
int vigil_counter_add(int counters_fd, unsigned slot, uint64_t n);
/* A counter slot's name as vigil status prints it; NULL for a slot no part
 * uses. */
const char *vigil_counter_name(unsigned slot);

#endif
