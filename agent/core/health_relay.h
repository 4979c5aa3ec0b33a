/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copies the health ring's records (vigil_health_ring: heartbeats, blind,
 * run counts, tamper; bpf/lib/health.bpf.h) into the main ring, each as a
 * health event with a main sequence number (inject_health). They are rare,
 * so a copy costs nothing that matters, and it keeps the main ring the one
 * stream every sink reads: zero-copy sending, the spool, the sequence
 * windows and resuming after a restart see ordinary records. A record
 * leaves the health ring only once the main ring took it: while the main
 * ring is full the health ring holds it, which is the point.
 */
#ifndef VIGIL_HEALTH_RELAY_H
#define VIGIL_HEALTH_RELAY_H

#include <stdint.h>
#include "ring.h"
#include "core/loader.h"

struct vigil_health_relay {
	struct vigil_ring ring;
	int fd;			/* -1: no health ring pinned (closed) */
	uint64_t relayed;	/* records copied, this start */
	uint64_t bad;		/* records skipped: larger than a health record */
	uint64_t lost;		/* VIGIL_CNT_HEALTH_FULL, as last read */
};

/* Maps the health ring pinned in pin_dir (made by vigil_heartbeat_start). */
int vigil_health_relay_open(struct vigil_health_relay *r, const char *pin_dir);
/* Copies what waits in the health ring into the main ring, in order, up
 * to the first record the main ring refuses (full: the next call tries
 * again). Returns the records copied, or a negative errno. */
int vigil_health_relay_run(struct vigil_health_relay *r, struct vigil_bpf *b);
void vigil_health_relay_close(struct vigil_health_relay *r);

#endif
