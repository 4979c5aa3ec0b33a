/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vigil's pin folder on bpffs: maps pinned by name, links as link_<prog>.
 * Shared by the agent (which pins) and the CLI (which reads and removes). */
#ifndef VIGIL_PINS_H
#define VIGIL_PINS_H

#include <stdbool.h>
#include <stdint.h>

#define VIGIL_PIN_DIR_DEFAULT "/sys/fs/bpf/vigil"
/* The names vigil pins, and only these are vigil's (vigil unpin removes
 * nothing else): maps by their BPF name, all VIGIL_MAP_PREFIX; tracing
 * links as VIGIL_LINK_PREFIX "PROG"; enforcement links as
 * VIGIL_ENFORCE_LINK_PREFIX "COOKIE_IFINDEX_HOOK" (the network namespace's
 * cookie in hex, the interface's index there, tc_ingress, tc_egress or
 * xdp); cgroup policy links as VIGIL_CGROUP_LINK_PREFIX "CGID_PROG" (the
 * CG_PIN_PREFIX of agent/policy_cgroup.c). The schema map marks a folder
 * as vigil's. */
#define VIGIL_MAP_PREFIX "vigil_"
#define VIGIL_LINK_PREFIX "link_"
#define VIGIL_ENFORCE_LINK_PREFIX "enforce_link_"
#define VIGIL_CGROUP_LINK_PREFIX "cgroup_"
#define VIGIL_SCHEMA_PIN "vigil_schema"

/* Mounts bpffs at /sys/fs/bpf when it is not, and creates dir. */
int vigil_bpffs_prepare(const char *dir);
int vigil_pinned_fd(const char *dir, const char *name);
/* Sum of the kernel's recursion misses over the programs linked in dir. */
uint64_t vigil_recursion_misses(const char *dir);
/* True for a name vigil pins (see above). */
bool vigil_pin_is_ours(const char *name);
/* Removes vigil's pins under dir (detaching its links), then dir if that
 * leaves it empty; returns how many pins, or -errno: -ENOENT no folder,
 * -ENOTDIR not a folder, -ENOMSG no schema map in it (not vigil's: nothing
 * removed). Other pins are left where they are. */
int vigil_unpin_all(const char *dir);

#endif
