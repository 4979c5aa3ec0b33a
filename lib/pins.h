/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vigil's pin folder on bpffs: maps pinned by name, links as link_<prog>.
 * Shared by the agent (which pins) and the CLI (which reads and removes). */
#ifndef VIGIL_PINS_H
#define VIGIL_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIGIL_PIN_DIR_DEFAULT "/sys/fs/bpf/vigil"
/* The names vigil pins, and only these are vigil's (vigil unpin removes
 * nothing else): maps by their BPF name, all VIGIL_MAP_PREFIX; tracing
 * links as VIGIL_LINK_PREFIX "PROG"; enforcement links as
 * VIGIL_ENFORCE_LINK_PREFIX "COOKIE_IFINDEX_HOOK" (the network namespace's
 * cookie in hex, the interface's index there, tc_ingress, tc_egress or
 * xdp); cgroup policy links as VIGIL_CGROUP_LINK_PREFIX "CGID_PROG" (the
 * CG_PIN_PREFIX of agent/enforce/enforce_cgroup.c). The schema map marks a folder
 * as vigil's. */
#define VIGIL_MAP_PREFIX "vigil_"
#define VIGIL_LINK_PREFIX "link_"
#define VIGIL_ENFORCE_LINK_PREFIX "enforce_link_"
#define VIGIL_CGROUP_LINK_PREFIX "cgroup_"
#define VIGIL_SCHEMA_PIN "vigil_schema"

/* Mounts bpffs at /sys/fs/bpf when it is not, and creates dir. */
int vigil_bpffs_prepare(const char *dir);
int vigil_pinned_fd(const char *dir, const char *name);
/* The program of the link pinned at dir/name: its fd, or -1. */
int vigil_linked_prog_fd(const char *dir, const char *name);
/* Takes dir for this process alone (flock; the lock goes with the process,
 * also when it is killed): whoever holds it is the only reader of the
 * ring pinned there, vigild or vigil drain. Two readers would each move the
 * ring's consumer position and take records from each other. Returns the
 * locked fd to keep open, -EBUSY when another process holds it, -errno. */
int vigil_pins_lock(const char *dir);
/* The programs linked in a pin folder, held open by their link pin's
 * inode: a second's read of their recursion misses then costs one call a
 * program, not five (the pin's path, two infos, an id, a close). A link
 * pinned anew under the same name has a new inode. */
struct vigil_linked_progs {
	struct vigil_linked_prog {
		uint64_t ino;
		int fd;
		bool seen;
	} *p;
	unsigned n, cap;
};
/* Sum of the kernel's recursion misses over the programs linked in dir;
 * held (zeroed at first) keeps them open from call to call. */
uint64_t vigil_recursion_misses(const char *dir, struct vigil_linked_progs *held);
void vigil_linked_progs_free(struct vigil_linked_progs *held);
/* What a pin folder held before a start, so that a start that fails leaves
 * it so: the names of the pins then, and from where on the folder's path
 * did not exist (the start creates it). */
struct vigil_pin_set {
	char **names;
	unsigned n;
	size_t made_from;	/* path length of the first folder made, 0: none */
};

/* Before anything is created in dir: which of its folders are missing. */
void vigil_pins_note_dir(const char *dir, struct vigil_pin_set *s);
/* Once dir is ours (flocked): the pins it holds. */
int vigil_pins_snapshot(const char *dir, struct vigil_pin_set *s);
/* Takes back a failed start: removes vigil's pins in dir that s does not
 * name (unpinning a link detaches its program once nothing else holds it)
 * and the folders the start made, if empty; never anything s names. Frees
 * s. Returns how many pins it removed. */
int vigil_pins_rollback(const char *dir, struct vigil_pin_set *s);
void vigil_pin_set_free(struct vigil_pin_set *s);
/* Only the folders s says the start made, if empty (a start refused before
 * the folder was ours). */
void vigil_pins_remove_made_dirs(const char *dir, const struct vigil_pin_set *s);

/* True for a name vigil pins (see above). */
bool vigil_pin_is_ours(const char *name);
/* Removes vigil's pins under dir (detaching its links), then dir if that
 * leaves it empty; returns how many pins, or -errno: -ENOENT no folder,
 * -ENOTDIR not a folder, -ENOMSG no schema map in it (not vigil's: nothing
 * removed). Other pins are left where they are. */
int vigil_unpin_all(const char *dir);

#endif
