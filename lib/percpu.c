// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "percpu.h"

int vigil_percpu_sum(int fd, const void *key, void *sum, size_t value_size)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t words = value_size / sizeof(uint64_t);
	uint64_t *per, *s = sum;
	int err = 0;

	memset(sum, 0, value_size);
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	/* The kernel hands each CPU's value rounded up to 8 bytes: these are
	 * multiples of 8 already. */
	per = calloc((size_t)ncpu, value_size);
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, key, per))
		err = -errno;
	for (int c = 0; c < ncpu && !err; c++)
		for (size_t w = 0; w < words; w++)
			s[w] += per[(size_t)c * words + w];
	free(per);
	return err;
}
