/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef VIGIL_PERCPU_H
#define VIGIL_PERCPU_H

#include <stddef.h>

/*
 * The value at key of a per-CPU map whose values are counters only (a
 * struct of uint64_t, or one uint64_t: value_size a multiple of 8), summed
 * over the possible CPUs into sum (value_size bytes). sum is zeroed first,
 * so it reads 0 on error. 0, or -errno of the lookup (-ENOENT for a key the
 * map does not hold), -ENOMEM.
 */
int vigil_percpu_sum(int fd, const void *key, void *sum, size_t value_size);

#endif
