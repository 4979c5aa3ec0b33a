/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Enforcement events (drops, rejects, resets vigil made) and the policy map
 * keys and values shared by the agent and the enforcement programs: type ids
 * VIGIL_EV_ENFORCE_FIRST..LAST, counters from VIGIL_CNT_ENFORCE_FIRST.
 * Included by events.h; do not include directly.
 */
#ifndef VIGIL_ENFORCE_EVENTS_H
#define VIGIL_ENFORCE_EVENTS_H

#endif
