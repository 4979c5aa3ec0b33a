/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* FNV-1a: a small hash for tables in memory and checksums that need no
 * defence against a chosen input (the collector's state file, handshake
 * buckets; the agent's metric label values). */
#ifndef VIGIL_FNV_H
#define VIGIL_FNV_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a of n bytes at p, going on from h (VIGIL_FNV_START to begin). */
#define VIGIL_FNV_START 2166136261u
uint32_t vigil_fnv1a(const void *p, size_t n, uint32_t h);

#endif
