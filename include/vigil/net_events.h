/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Network observation events (TCP lifecycle, resets seen) and the periodic
 * reports built in BPF: type ids VIGIL_EV_NET_FIRST..LAST and
 * VIGIL_EV_REPORT_FIRST..LAST, counters from VIGIL_CNT_NET_FIRST.
 * Included by events.h; do not include directly.
 */
#ifndef VIGIL_NET_EVENTS_H
#define VIGIL_NET_EVENTS_H

#endif
