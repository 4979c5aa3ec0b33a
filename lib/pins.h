/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vigil's pin folder on bpffs: maps pinned by name, links as link_<prog>.
 * Shared by the agent (which pins) and the CLI (which reads and removes). */
#ifndef VIGIL_PINS_H
#define VIGIL_PINS_H

#include <stdint.h>

#define VIGIL_PIN_DIR_DEFAULT "/sys/fs/bpf/vigil"
#define VIGIL_LINK_PREFIX "link_"

/* Mounts bpffs at /sys/fs/bpf when it is not, and creates dir. */
int vigil_bpffs_prepare(const char *dir);
int vigil_pinned_fd(const char *dir, const char *name);
/* Sum of the kernel's recursion misses over the programs linked in dir. */
uint64_t vigil_recursion_misses(const char *dir);
/* Removes every pin under dir (detaching its links), then dir; returns how
 * many pins, or -errno. */
int vigil_unpin_all(const char *dir);

#endif
