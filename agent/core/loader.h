/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loads vigil's BPF objects, pins maps and links under one folder, and
 * re-attaches to what is pinned when restarted: the ring and the programs
 * outlive the agent, so events wait in the kernel while it restarts.
 */
#ifndef VIGIL_LOADER_H
#define VIGIL_LOADER_H

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include "log.h"
#include "pins.h"

struct process_bpf;
struct inject_bpf;

struct vigil_loader_opts {
	const char *pin_dir;
	uint64_t ring_size;	/* bytes; 0: the pinned ring's, or the default */
	uint64_t wakeup_bytes;
	struct vigil_proc_budget_cfg proc_budget;	/* rate 0: none */
	bool procfs;		/* report live processes before attaching */
	bool verbose;
};

struct vigil_bpf {
	char pin_dir[256];
	struct process_bpf *process;
	struct inject_bpf *inject;
	int ring_fd;
	int counters_fd;
	int seq_fd;
	uint64_t ring_size;
	uint64_t wakeup_bytes;
	int lock_fd;	/* the pin folder, flock()ed: one agent per folder */
	bool resumed;	/* links were pinned already: a restart */
	struct vigil_pin_set before;	/* the folder before this start */
	bool can_roll_back;		/* before is known: the folder is ours */
};

struct bpf_object;
struct bpf_map;

/* A pinned map's size, which a map cannot change: *size (0: none asked
 * for), counted in units of which each map entry holds PER_ENTRY, becomes
 * the size of the map pinned in DIR under LIKE's name, if it has LIKE's
 * type, key and value; said when it differs from what was asked for. A
 * pin of another shape is left to vigil_obj_prepare, which refuses it. */
int vigil_pinned_size(const char *dir, const struct bpf_map *like, unsigned per_entry,
		      uint64_t *size);
/* For every part's BPF object, between open (with pin_root_path set to the
 * pin folder, so the ring and counters are shared) and load: sizes its
 * vigil_ring like the pinned one, and refuses, by name, a pinned map this
 * build defines otherwise. */
int vigil_obj_prepare(struct bpf_object *obj, uint64_t ring_size);
/* Opens skeleton NAME (NAME##_bpf, from bpf/NAME.bpf.c) into *out with its
 * maps pinned by name under pin_dir, and prepares it (vigil_obj_prepare):
 * 0, or an error that names the object. Then set its read-only data and
 * call vigil_skel_load. */
#define vigil_skel_open(NAME, out, pin_dir, ring_size)					\
	({										\
		LIBBPF_OPTS(bpf_object_open_opts, _oo, .pin_root_path = (pin_dir));	\
		*(out) = NAME##_bpf__open_opts(&_oo);					\
		*(out) ? vigil_obj_prepare((*(out))->obj, (ring_size))			\
		       : vlog_err(-errno, "cannot open BPF object " #NAME);		\
	})
struct bpf_object_skeleton;
/* Loads an opened skeleton (its ->skeleton): 0, or an error that names the
 * object (the verifier's log is libbpf's, under -v). */
int vigil_skel_load(struct bpf_object_skeleton *s);
/* After load: attaches each tracing program (not iterators or syscall
 * programs) and pins its link as link_<prog>; where a link is pinned
 * already, *resumed is set, and it is left as it runs when its program is
 * this build's, else replaced (vigil_prog_attach_pinned). */
int vigil_obj_attach(struct bpf_object *obj, const char *dir, bool *resumed);
/* prog attached and its link pinned as dir/link_<prog>. One pinned there
 * by an earlier agent is left as it runs when its program is this build's
 * (the same tag), else replaced with no moment unwatched: this build's is
 * attached before the old link's pin is renamed over. 0 attached, or
 * VIGIL_PINNED_KEPT, VIGIL_PINNED_REPLACED, or a negative errno, logged.
 * alt_cat/alt_tp (or NULL): a tracepoint to attach to where prog's own
 * is not in this kernel. */
enum { VIGIL_PINNED_KEPT = 1, VIGIL_PINNED_REPLACED = 2 };
int vigil_prog_attach_pinned(struct bpf_program *prog, const char *dir, const char *alt_cat,
			     const char *alt_tp);
/* The link pinned as dir/link_<prog> runs prog as this build loaded it
 * (the same tag): not an earlier agent's of another build. */
bool vigil_pinned_link_runs(struct bpf_program *prog, const char *dir);
/* The pin dir/link_<prog> removed (the link goes with it unless something
 * else holds it): 0 or a negative errno (-ENOENT: none was pinned). */
int vigil_prog_unpin(struct bpf_program *prog, const char *dir);
/* Once the start cannot fail: detaches the programs an earlier agent
 * attached that this one's options do not want (set not to autoattach). A
 * start that fails before leaves them running. */
int vigil_obj_detach_unwanted(struct bpf_object *obj, const char *dir);

int vigil_bpf_load(struct vigil_bpf *b, const struct vigil_loader_opts *o);
/* A start that failed: closes like vigil_bpf_close, then removes every pin
 * (and the folder) this start made, so the folder holds what it held;
 * what an earlier agent pinned stays as it was. Call after every other
 * part is closed. */
void vigil_bpf_roll_back(struct vigil_bpf *b);
/* vigil_obj_detach_unwanted for the process part. */
int vigil_bpf_detach_unwanted(struct vigil_bpf *b);
/* Reports live processes into the ring (flag procFS): with new_only,
 * those no record named yet (the pass after the attach; vigil_bpf_load
 * made the first with opts procfs). */
int vigil_bpf_scan_procfs(struct vigil_bpf *b, bool new_only);
int vigil_bpf_inject_loss(struct vigil_bpf *b, uint64_t ring_full, uint64_t recursion_misses,
			  uint64_t threads_exited);
/* Writes a health ring record, wrapped (in->rec: struct vigil_health and
 * the record), into the main ring: 0, -ENOSPC when the ring is full. */
int vigil_bpf_inject_health(struct vigil_bpf *b, struct vigil_health_inject *in);
/* Frees what was loaded; with unpin, also removes every pin (detaching). */
void vigil_bpf_close(struct vigil_bpf *b, bool unpin);

#endif
