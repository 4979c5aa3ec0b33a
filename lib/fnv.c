// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* FNV-1a (fnv.h). */
#include "fnv.h"

uint32_t vigil_fnv1a(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}
