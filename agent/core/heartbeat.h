/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The heartbeat timer (bpf/heartbeat.bpf.c): loaded, armed and let go at
 * each start. Its timer, in a pinned map, holds its program, so it ticks
 * on after the agent is gone: that is its point.
 */
#ifndef VIGIL_HEARTBEAT_H
#define VIGIL_HEARTBEAT_H

#include <stdint.h>

#define VIGIL_HEARTBEAT_DEFAULT_S 5

/* Arms (or re-arms, with this interval; 0 stops it) the timer pinned in
 * pin_dir: 0 or a negative errno, logged. */
int vigil_heartbeat_start(const char *pin_dir, uint64_t ring_size, uint64_t interval_ns);

#endif
