/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writes a secret set (lib/redact.h) into the pinned maps the exec
 * programs mask arguments with (vigil/redact.h): the generation not in
 * force, then the flip, then the old generation's keys go.
 */
#ifndef VIGIL_REDACT_MAPS_H
#define VIGIL_REDACT_MAPS_H

#include "redact.h"

/* 0, or a negative errno (logged) with the set in force unchanged. */
int vigil_redact_write(int conf_fd, int keys_fd, const struct vigil_redact_set *set);
/* Writes the defaults when no agent has written a set into these maps. */
int vigil_redact_init(int conf_fd, int keys_fd);

#endif
