// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include "core/iter_drain.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "pins.h"
#include "log.h"
#include "core/redact_maps.h"
#include "core/tamper.h"
#include "process.skel.h"
#include "inject.skel.h"

#define DEFAULT_RING_SIZE (16u << 20)

/* One of the two exit programs: the tracepoint's group_dead where it has
 * one, else the thread group's live count (bpf/process.bpf.c). */
static void choose_exit_hook(struct process_bpf *p)
{
	bool group_dead = vigil_kernel_tracepoint_args("sched_process_exit") != 1;

	bpf_program__set_autoload(p->progs.process_exit, group_dead);
	bpf_program__set_autoload(p->progs.process_exit_nogd, !group_dead);
	if (!group_dead)
		vigil_kernel_lacks("group_dead in sched_process_exit",
				   "a process's end is told by its thread group's live count");
}

int vigil_pinned_size(const char *dir, const struct bpf_map *like, unsigned per_entry,
		      uint64_t *size)
{
	const char *name = bpf_map__name(like);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = vigil_pinned_fd(dir, name), err;

	if (fd < 0)
		return 0;
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (err)
		return vlog_err(err, "cannot read pinned map %s/%s", dir, name);
	/* Another build's map: vigil_obj_prepare refuses it, by name. */
	if (info.type != bpf_map__type(like) || info.key_size != bpf_map__key_size(like) ||
	    info.value_size != bpf_map__value_size(like))
		return 0;
	if (*size && *size != (uint64_t)info.max_entries * per_entry)
		vlog_info("keeping the size of the pinned %s, %llu (asked for %llu)", name,
			  (unsigned long long)info.max_entries * per_entry, (unsigned long long)*size);
	*size = (uint64_t)info.max_entries * per_entry;
	return 0;
}

/* Refuses a pinned ring of another schema. */
static int check_schema(const char *dir)
{
	__u32 key = 0, version = 0;
	int fd = vigil_pinned_fd(dir, "vigil_schema");

	if (fd >= 0) {
		int err = bpf_map_lookup_elem(fd, &key, &version);

		close(fd);
		/* Same major and a minor not newer: every record in it is one
		 * this build reads. */
		if (!err && version && (VIGIL_SCHEMA_MAJOR_OF(version) != VIGIL_SCHEMA_MAJOR ||
					VIGIL_SCHEMA_MINOR_OF(version) > VIGIL_SCHEMA_MINOR))
			return vlog_refuse(-EPROTO,
					"%s holds a ring of event schema %u.%u; this vigild writes schema "
					"%u.%u. Drain it with 'vigil drain --pin-dir %s' or remove it with "
					"'vigil unpin --pin-dir %s'",
					dir, VIGIL_SCHEMA_MAJOR_OF(version), VIGIL_SCHEMA_MINOR_OF(version),
					VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR, dir, dir);
	}
	return 0;
}

/* Detaches the program an earlier agent pinned a link for at path, if any:
 * this agent's settings do not want it. */
static int detach_pinned(const char *path)
{
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return errno == ENOENT ? 0 : vlog_err(-errno, "cannot open pinned link %s", path);
	/* Tracepoint links cannot be detached (EOPNOTSUPP): they go with their
	 * last reference, the pin removed below and this fd. EINVAL: detached
	 * already. */
	if (bpf_link_detach(fd) && errno != EOPNOTSUPP && errno != EINVAL)
		vlog_err(-errno, "cannot detach pinned link %s", path);
	close(fd);
	if (unlink(path))
		return vlog_err(-errno, "cannot remove pinned link %s", path);
	vlog_info("detached %s: not wanted with these options", path);
	return 0;
}

/* Programs that run on demand (syscall, iterators) are never attached. */
static bool attachable(const struct bpf_program *prog)
{
	return bpf_program__type(prog) != BPF_PROG_TYPE_SYSCALL &&
	       bpf_program__expected_attach_type(prog) != BPF_TRACE_ITER;
}

/* Loaded (one of two forms of a hook the kernel decides between) and
 * asked to attach. */
static bool wanted(const struct bpf_program *prog)
{
	return bpf_program__autoload(prog) && bpf_program__autoattach(prog);
}

static void link_pin_path(char *path, size_t n, const char *dir, const struct bpf_program *prog)
{
	snprintf(path, n, "%s/" VIGIL_LINK_PREFIX "%s", dir, bpf_program__name(prog));
}

/* A program set not to attach (bpf_program__set_autoattach) is detached if
 * an earlier agent attached it: only once this start cannot fail, so that
 * an agent that cannot start leaves what an earlier one attached running. */
int vigil_obj_detach_unwanted(struct bpf_object *obj, const char *dir)
{
	struct bpf_program *prog;
	char path[512];
	int err;

	bpf_object__for_each_program(prog, obj) {
		if (!attachable(prog) || wanted(prog))
			continue;
		link_pin_path(path, sizeof(path), dir, prog);
		if ((err = detach_pinned(path)))
			return err;
	}
	return 0;
}

/* prog attached, its link pinned at path (the pin holds it). */
static int attach_and_pin(struct bpf_program *prog, const char *path, const char *alt_cat,
			  const char *alt_tp)
{
	struct bpf_link *link = bpf_program__attach(prog);
	int err;

	if (!link && alt_tp)
		link = bpf_program__attach_tracepoint(prog, alt_cat, alt_tp);
	if (!link)
		return vlog_err(-errno, "cannot attach BPF program %s", bpf_program__name(prog));
	err = bpf_link__pin(link, path);
	bpf_link__destroy(link);
	return err ? vlog_err(err, "cannot pin link %s", path) : 0;
}

/* The link pinned at path runs another build's program (an upgrade, or a
 * downgrade): this build's is attached and pinned beside it, then renamed
 * over it, so the hook is never unwatched; the old link goes with its
 * pin. For that moment both run: an event may be written twice, a rule
 * act twice. A tracepoint link cannot be updated in place. */
static int replace_pinned(struct bpf_program *prog, const char *path, const char *alt_cat,
			  const char *alt_tp)
{
	char next[520];
	int err;

	snprintf(next, sizeof(next), "%s__next", path);	/* bpffs refuses dots */
	unlink(next);	/* a replacement that died half way */
	if ((err = attach_and_pin(prog, next, alt_cat, alt_tp)))
		return err;
	if (rename(next, path)) {
		err = vlog_err(-errno, "cannot put link %s in place of %s", next, path);
		unlink(next);
		return err;
	}
	return 0;
}

int vigil_prog_attach_pinned(struct bpf_program *prog, const char *dir, const char *alt_cat,
			     const char *alt_tp)
{
	char path[512];
	int err;

	link_pin_path(path, sizeof(path), dir, prog);
	if (access(path, F_OK))
		return attach_and_pin(prog, path, alt_cat, alt_tp);
	if (vigil_pinned_link_runs(prog, dir))
		return VIGIL_PINNED_KEPT;
	err = replace_pinned(prog, path, alt_cat, alt_tp);
	return err ? err : VIGIL_PINNED_REPLACED;
}

static bool prog_tag(int fd, __u8 tag[BPF_TAG_SIZE])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	memcpy(tag, info.tag, BPF_TAG_SIZE);
	return true;
}

bool vigil_pinned_link_runs(struct bpf_program *prog, const char *dir)
{
	__u8 mine[BPF_TAG_SIZE], theirs[BPF_TAG_SIZE];
	char name[256];
	bool same;
	int pfd;

	snprintf(name, sizeof(name), VIGIL_LINK_PREFIX "%s", bpf_program__name(prog));
	if ((pfd = vigil_linked_prog_fd(dir, name)) < 0)
		return false;
	same = prog_tag(pfd, theirs) && prog_tag(bpf_program__fd(prog), mine) &&
	       !memcmp(mine, theirs, BPF_TAG_SIZE);
	close(pfd);
	return same;
}

int vigil_prog_unpin(struct bpf_program *prog, const char *dir)
{
	char path[512];

	link_pin_path(path, sizeof(path), dir, prog);
	return unlink(path) ? -errno : 0;
}

/* Attaches each tracing program of obj once: a program whose link is pinned
 * already keeps running as it is (it was attached by an earlier agent of
 * this build), or is replaced by this build's. */
int vigil_obj_attach(struct bpf_object *obj, const char *dir, bool *resumed)
{
	struct bpf_program *prog;
	unsigned replaced = 0;
	int r;

	bpf_object__for_each_program(prog, obj) {
		if (!attachable(prog) || !wanted(prog))
			continue;
		if ((r = vigil_prog_attach_pinned(prog, dir, NULL, NULL)) < 0)
			return r;
		if (r)
			*resumed = true;
		if (r == VIGIL_PINNED_REPLACED)
			replaced++;
	}
	if (replaced)
		vlog_info("%s: %u pinned program%s of another build replaced by this build's",
			  bpf_object__name(obj), replaced, replaced == 1 ? "" : "s");
	return 0;
}

/* A pinned map this build defines otherwise (an agent of another version
 * pinned it) is named, with the way out: libbpf alone fails the load with
 * EINVAL, which reads like a verifier refusal. Compares what libbpf's reuse
 * check compares. */
static int check_pinned_map(const struct bpf_map *map)
{
	const char *path = bpf_map__pin_path(map);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	if (!path)
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : vlog_err(-errno, "cannot open pinned map %s", path);
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (err)
		return vlog_err(err, "cannot read pinned map %s", path);
	if (info.type == bpf_map__type(map) && info.key_size == bpf_map__key_size(map) &&
	    info.value_size == bpf_map__value_size(map) &&
	    info.max_entries == bpf_map__max_entries(map) &&
	    info.map_flags == bpf_map__map_flags(map) && info.map_extra == bpf_map__map_extra(map))
		return 0;
	return vlog_refuse(-EPROTO,
			"pinned map %s was made by another version of vigild: pinned type %u, key %u, "
			"value %u bytes, %u entries, flags %#x; this one needs type %u, key %u, value %u "
			"bytes, %u entries, flags %#x. Remove the pins with 'vigil unpin' and the same "
			"--pin-dir ('vigil drain' first keeps the events waiting in the ring)",
			path, info.type, info.key_size, info.value_size, info.max_entries,
			info.map_flags, bpf_map__type(map), bpf_map__key_size(map),
			bpf_map__value_size(map), bpf_map__max_entries(map), bpf_map__map_flags(map));
}

int vigil_obj_prepare(struct bpf_object *obj, uint64_t ring_size)
{
	struct bpf_map *ring = bpf_object__find_map_by_name(obj, "vigil_ring");
	struct bpf_map *map;
	int err;

	if (!ring)
		return vlog_refuse(-ENOENT, "BPF object %s has no vigil_ring", bpf_object__name(obj));
	err = bpf_map__set_max_entries(ring, ring_size);
	if (err)
		return vlog_err(err, "ring size %llu refused (a power of two, at least a page)",
				(unsigned long long)ring_size);
	bpf_object__for_each_map(map, obj) {
		err = check_pinned_map(map);
		if (err)
			return err;
	}
	return 0;
}

int vigil_skel_load(struct bpf_object_skeleton *s)
{
	int err = bpf_object__load_skeleton(s);

	if (err)
		return vlog_err(err, "cannot load BPF object %s (run with -v for the verifier log)",
				s->name);
	return 0;
}

int vigil_bpf_load(struct vigil_bpf *b, const struct vigil_loader_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = o->pin_dir);
	uint64_t ring_size = o->ring_size;
	__u32 key = 0, version = VIGIL_SCHEMA_VERSION;
	int err;

	memset(b, 0, sizeof(*b));
	b->lock_fd = -1;
	snprintf(b->pin_dir, sizeof(b->pin_dir), "%s", o->pin_dir);
	vigil_pins_note_dir(o->pin_dir, &b->before);
	err = vigil_bpffs_prepare(o->pin_dir);
	if (err)
		return err;
	/* One agent per pin folder: two would each move the ring's consumer
	 * position and lose each other's events. The lock goes with the
	 * process, also when it is killed. */
	b->lock_fd = vigil_pins_lock(o->pin_dir);
	if (b->lock_fd == -EBUSY)
		return vlog_err(-EBUSY, "another vigild is running on %s (or a vigil drain)",
				o->pin_dir);
	if (b->lock_fd < 0)
		return vlog_err(b->lock_fd, "cannot lock pin folder %s", o->pin_dir);
	/* The folder is ours now: what it holds is what a failed start must
	 * leave (before the lock, another agent may still be adding pins). */
	if ((err = vigil_pins_snapshot(o->pin_dir, &b->before)))
		return vlog_err(err, "cannot list pin folder %s", o->pin_dir);
	b->can_roll_back = true;
	if ((err = vigil_tamper_claim(o->pin_dir)))
		return err;
	err = check_schema(o->pin_dir);
	if (err)
		return err;
	b->process = process_bpf__open_opts(&oo);
	b->inject = inject_bpf__open_opts(&oo);
	if (!b->process || !b->inject)
		return vlog_err(-errno, "cannot open BPF objects");
	err = vigil_pinned_size(o->pin_dir, b->process->maps.vigil_ring, 1, &ring_size);
	if (err)
		return err;
	if (!ring_size)
		ring_size = DEFAULT_RING_SIZE;
	b->ring_size = ring_size;
	b->wakeup_bytes = o->wakeup_bytes;
	if ((err = vigil_obj_prepare(b->process->obj, ring_size)) ||
	    (err = vigil_obj_prepare(b->inject->obj, ring_size)))
		return err;
	b->process->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	b->inject->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	choose_exit_hook(b->process);
	if ((err = process_bpf__load(b->process)))
		return vlog_err(err, "cannot load BPF object process (run with -v for the verifier log)");
	if ((err = inject_bpf__load(b->inject)))
		return vlog_err(err, "cannot load BPF object inject");
	err = bpf_map_update_elem(bpf_map__fd(b->process->maps.vigil_schema), &key, &version, 0);
	if (err)
		return vlog_err(err, "cannot record the schema version");
	/* Every start sets the budget (a restart without the option lifts
	 * it): the programs of an earlier agent read this pinned map too. */
	err = bpf_map_update_elem(bpf_map__fd(b->process->maps.vigil_proc_budget_cfg), &key,
				  &o->proc_budget, 0);
	if (err)
		return vlog_err(-errno, "cannot set the process event budget");
	/* The default secret words before any program runs, on new pins
	 * only: those an earlier agent's policy set stay until a policy is
	 * applied (a failed start changes nothing). The snapshot below is
	 * masked with them too. */
	err = vigil_redact_init(bpf_map__fd(b->process->maps.vigil_redact_conf),
				bpf_map__fd(b->process->maps.vigil_redact_keys));
	if (err)
		return err;
	/* The snapshot first, so that it precedes live events in the ring and
	 * their parents are known when they are read; vigild runs a second
	 * pass after the attach for processes started in between. */
	if (o->procfs && (err = vigil_bpf_scan_procfs(b, false)))
		return err;
	err = vigil_obj_attach(b->process->obj, o->pin_dir, &b->resumed);
	if (err)
		return err;
	b->ring_fd = bpf_map__fd(b->process->maps.vigil_ring);
	b->counters_fd = bpf_map__fd(b->process->maps.vigil_counters);
	b->seq_fd = bpf_map__fd(b->process->maps.vigil_seq);
	return 0;
}

int vigil_bpf_scan_procfs(struct vigil_bpf *b, bool new_only)
{
	int err;

	b->process->bss->procfs_new_only = new_only;
	err = vigil_iter_drain(b->process->progs.process_procfs);

	return err ? vlog_err(err, "cannot run the task iterator") : 0;
}

int vigil_bpf_inject_loss(struct vigil_bpf *b, uint64_t ring_full, uint64_t recursion_misses,
			  uint64_t threads_exited)
{
	struct vigil_loss in = {
		.ring_full = ring_full,
		.recursion_misses = recursion_misses,
		.threads_exited = threads_exited,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &in, .ctx_size_in = sizeof(in));
	int err = bpf_prog_test_run_opts(bpf_program__fd(b->inject->progs.inject_loss), &opts);

	return err ? -errno : (opts.retval ? 0 : -ENOSPC);
}

int vigil_bpf_inject_health(struct vigil_bpf *b, struct vigil_health_inject *in)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = in, .ctx_size_in = sizeof(*in));
	int err = bpf_prog_test_run_opts(bpf_program__fd(b->inject->progs.inject_health), &opts);

	if (err)
		return -errno;
	return opts.retval == 1 ? 0 : opts.retval == 0 ? -ENOSPC : (int)opts.retval;
}

int vigil_bpf_detach_unwanted(struct vigil_bpf *b)
{
	return vigil_obj_detach_unwanted(b->process->obj, b->pin_dir);
}

void vigil_bpf_roll_back(struct vigil_bpf *b)
{
	int n;

	process_bpf__destroy(b->process);
	inject_bpf__destroy(b->inject);
	b->process = NULL;
	b->inject = NULL;
	if (b->can_roll_back) {
		n = vigil_pins_rollback(b->pin_dir, &b->before);
		if (n)
			vlog_info("the start failed: removed the %d pins it made in %s", n, b->pin_dir);
	} else {
		/* refused before the folder was ours: only the folders made */
		vigil_pins_remove_made_dirs(b->pin_dir, &b->before);
	}
	b->can_roll_back = false;
	vigil_bpf_close(b, false);
}

void vigil_bpf_close(struct vigil_bpf *b, bool unpin)
{
	process_bpf__destroy(b->process);
	inject_bpf__destroy(b->inject);
	b->process = NULL;
	b->inject = NULL;
	if (unpin)
		vigil_unpin_all(b->pin_dir);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	b->lock_fd = -1;
	vigil_pin_set_free(&b->before);
}
