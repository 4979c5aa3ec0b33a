// SPDX-License-Identifier: GPL-2.0
/* Lists vigil's map ids for the tamper records (tamper_maps.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/tamper_maps.h"
#include "log.h"
#include "pins.h"

#define IDS_MAX 4096	/* vigil_tamper_maps's size (bpf/tamper.bpf.c) */
#define TAMPER_MAPS_PIN "vigil_tamper_maps"

struct ids {
	uint32_t id[IDS_MAX];
	unsigned n;
};

static void ids_add(struct ids *s, uint32_t id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return;
	if (s->n < IDS_MAX)
		s->id[s->n++] = id;
}

static bool ids_has(const struct ids *s, uint32_t id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return true;
	return false;
}

/* A pinned map, and for a map of maps the inner maps it holds (a lookup
 * through the syscall gives an inner map's id). */
static void add_map(struct ids *s, int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return;
	ids_add(s, mi.id);
	if (mi.type != BPF_MAP_TYPE_ARRAY_OF_MAPS)
		return;
	for (uint32_t k = 0; k < mi.max_entries; k++) {
		uint32_t inner;

		if (!bpf_map_lookup_elem(fd, &k, &inner))
			ids_add(s, inner);
	}
}

/* The maps of a pinned link's program. */
static void add_link(struct ids *s, int fd)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	uint32_t map_ids[64];
	__u32 len = sizeof(li);
	int pfd;

	if (bpf_obj_get_info_by_fd(fd, &li, &len) || (pfd = bpf_prog_get_fd_by_id(li.prog_id)) < 0)
		return;
	pi.nr_map_ids = sizeof(map_ids) / sizeof(map_ids[0]);
	pi.map_ids = (uintptr_t)map_ids;
	len = sizeof(pi);
	if (!bpf_obj_get_info_by_fd(pfd, &pi, &len))
		for (uint32_t i = 0; i < pi.nr_map_ids && i < sizeof(map_ids) / sizeof(map_ids[0]); i++)
			ids_add(s, map_ids[i]);
	close(pfd);
}

int vigil_tamper_maps_sync(const char *pin_dir)
{
	struct ids *s = calloc(1, sizeof(*s));
	int mfd = vigil_pinned_fd(pin_dir, TAMPER_MAPS_PIN), err = 0;
	uint32_t key, next, one = 1;
	struct dirent *de;
	DIR *d = NULL;

	if (!s || mfd < 0) {
		err = vlog_err(s ? -errno : -ENOMEM, "cannot open %s/%s", pin_dir, TAMPER_MAPS_PIN);
		goto out;
	}
	if (!(d = opendir(pin_dir))) {
		err = vlog_err(-errno, "cannot list %s", pin_dir);
		goto out;
	}
	while ((de = readdir(d))) {
		bool map = !strncmp(de->d_name, VIGIL_MAP_PREFIX, strlen(VIGIL_MAP_PREFIX));
		int fd;

		if (!vigil_pin_is_ours(de->d_name) || (fd = vigil_pinned_fd(pin_dir, de->d_name)) < 0)
			continue;
		if (map)
			add_map(s, fd);
		else
			add_link(s, fd);
		close(fd);
	}
	for (unsigned i = 0; i < s->n && !err; i++)
		if (bpf_map_update_elem(mfd, &s->id[i], &one, BPF_ANY))
			err = vlog_err(-errno, "cannot list map %u as vigil's", s->id[i]);
	/* Then the ids of maps gone (a policy load's old tries): a key is
	 * deleted only after the walk has gone past it. */
	for (int more = !bpf_map_get_next_key(mfd, NULL, &key); more && !err; key = next) {
		more = !bpf_map_get_next_key(mfd, &key, &next);
		if (!ids_has(s, key))
			bpf_map_delete_elem(mfd, &key);
	}
out:
	if (d)
		closedir(d);
	if (mfd >= 0)
		close(mfd);
	free(s);
	return err;
}
