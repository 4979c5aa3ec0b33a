// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "control.h"

int vigil_control_path(const char *pin_dir, char *out, size_t len)
{
	const char *base = strrchr(pin_dir, '/');
	int n;

	base = base ? base + 1 : pin_dir;
	if (!*base)
		return -EINVAL;
	n = snprintf(out, len, VIGIL_CONTROL_DIR "/%s.sock", base);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
