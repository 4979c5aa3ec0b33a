/* SPDX-License-Identifier: GPL-2.0 */
/* Watches the loss counters (failed reserves counted in BPF, programs the
 * kernel skipped by recursion protection) and puts a loss event into the
 * ring whenever they moved: no loss is silent. */
#ifndef VIGIL_LOSS_H
#define VIGIL_LOSS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/loader.h"
#include "pins.h"

struct vigil_loss_monitor {
	uint64_t ring_full, recursion_misses, threads_exited;
	uint64_t reported_ring_full, reported_recursion;
	struct vigil_linked_progs progs;	/* held open for their recursion misses */
};

/* Returns 1 when a loss event was injected. */
int vigil_loss_check(struct vigil_loss_monitor *m, struct vigil_bpf *b);
/* At stop, once the ring is drained: reads the counters and always injects
 * the event, whose sequence number is then above every loss it counts, so
 * the reader sees each of them as a gap below it. */
int vigil_loss_final(struct vigil_loss_monitor *m, struct vigil_bpf *b);
void vigil_loss_close(struct vigil_loss_monitor *m);

#endif
