// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "map_drop.h"

int vigil_map_drop_if(int fd, size_t key_size, bool (*stale)(const void *key, const void *arg),
		      const void *arg)
{
	_Alignas(8) unsigned char key[VIGIL_MAP_KEY_MAX], next[VIGIL_MAP_KEY_MAX];
	void *prev = NULL;

	if (key_size > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (stale(next, arg)) {
			/* A key that stays would be found again at each restart. */
			if (bpf_map_delete_elem(fd, next))
				return -errno;
			prev = NULL;	/* the walk restarts after a delete */
			continue;
		}
		memcpy(key, next, key_size);
		prev = key;
	}
	return errno == ENOENT ? 0 : -errno;
}
