/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef VIGIL_MAP_DROP_H
#define VIGIL_MAP_DROP_H

#include <stdbool.h>
#include <stddef.h>

/* The largest key vigil_map_drop_if walks (an LPM key of a path is 260). */
#define VIGIL_MAP_KEY_MAX 512

/*
 * Deletes every key of the map fd (a hash or an LPM trie, of key_size
 * bytes) for which stale(key, arg) holds: the old generation of a map that
 * holds two (redaction keys, filter keys and binaries). The walk restarts
 * after each delete, as a deleted key cannot lead it on. 0, or -errno: a
 * key larger than VIGIL_MAP_KEY_MAX (-EINVAL), a delete or the walk that
 * failed.
 */
int vigil_map_drop_if(int fd, size_t key_size, bool (*stale)(const void *key, const void *arg),
		      const void *arg);

#endif
