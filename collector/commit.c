// SPDX-License-Identifier: GPL-2.0
/* See commit.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "commit.h"
#include "log.h"

#define STATE_MAGIC 0x54534c4756ull	/* "VGLST" */

struct slot_hdr {
	__u64 magic;
	__u64 gen;
	__u64 export_size;
	__u32 n;
	__u32 sum;	/* FNV-1a over the header (sum 0) and the entries */
};

static size_t slot_size(unsigned max)
{
	return sizeof(struct slot_hdr) + (size_t)max * sizeof(struct vigil_commit_entry);
}

static uint32_t fnv(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 16777619u;
	return h;
}

static uint32_t slot_sum(const struct slot_hdr *h, const struct vigil_commit_entry *e)
{
	struct slot_hdr z = *h;

	z.sum = 0;
	return fnv(e, (size_t)h->n * sizeof(*e), fnv(&z, sizeof(z), 2166136261u));
}

/* Reads slot i; 0 when valid. */
static int read_slot(struct vigil_commit *c, unsigned i, struct slot_hdr *h)
{
	size_t sz = slot_size(c->max);
	ssize_t n = pread(c->fd, c->slot, sz, (off_t)i * sz);

	if (n < (ssize_t)sizeof(*h))
		return -ENOENT;
	memcpy(h, c->slot, sizeof(*h));
	if (h->magic != STATE_MAGIC || h->n > c->max ||
	    (size_t)n < sizeof(*h) + (size_t)h->n * sizeof(struct vigil_commit_entry) ||
	    slot_sum(h, (const void *)((char *)c->slot + sizeof(*h))) != h->sum)
		return -EBADMSG;
	return 0;
}

int vigil_commit_open(struct vigil_commit *c, const char *export_path, int export_fd,
		      unsigned max)
{
	struct slot_hdr h[2];
	int ok[2], best;
	size_t len = strlen(export_path) + sizeof(".state");
	char path[len];
	struct stat st;

	*c = (struct vigil_commit){ .fd = -1, .max = max };
	snprintf(path, len, "%s.state", export_path);
	c->e = calloc(max, sizeof(*c->e));
	c->slot = malloc(slot_size(max));
	if (!c->e || !c->slot)
		return -ENOMEM;
	c->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (c->fd < 0)
		return vlog_err(-errno, "cannot open %s", path);
	ok[0] = !read_slot(c, 0, &h[0]);
	ok[1] = !read_slot(c, 1, &h[1]);
	if (!ok[0] && !ok[1])
		return 0;	/* a first start */
	best = ok[0] && ok[1] ? h[1].gen > h[0].gen : ok[1];
	read_slot(c, best, &h[best]);
	c->gen = h[best].gen;
	c->n = h[best].n;
	c->export_size = h[best].export_size;
	memcpy(c->e, (char *)c->slot + sizeof(struct slot_hdr), c->n * sizeof(*c->e));
	if (!fstat(export_fd, &st) && (uint64_t)st.st_size > c->export_size) {
		/* Written, never acknowledged: the agents send it again. */
		vlog_info("%s: dropping %llu bytes written after the last acknowledgement",
			  export_path, (unsigned long long)(st.st_size - c->export_size));
		if (ftruncate(export_fd, c->export_size))
			return vlog_err(-errno, "cannot cut %s back", export_path);
	}
	return 0;
}

int64_t vigil_commit_get(const struct vigil_commit *c, const __u8 boot_id[16], uint32_t ring_id)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].ring_id == ring_id && !memcmp(c->e[i].boot_id, boot_id, 16))
			return c->e[i].offset;
	return -1;
}

int vigil_commit_set(struct vigil_commit *c, const __u8 boot_id[16], uint32_t ring_id,
		     uint64_t offset)
{
	unsigned i;

	for (i = 0; i < c->n; i++)
		if (c->e[i].ring_id == ring_id && !memcmp(c->e[i].boot_id, boot_id, 16))
			break;
	if (i == c->n) {
		if (c->n == c->max)
			return -ENOSPC;
		c->n++;
		memcpy(c->e[i].boot_id, boot_id, 16);
		c->e[i].ring_id = ring_id;
	}
	c->e[i].offset = offset;
	return 0;
}

int vigil_commit_write(struct vigil_commit *c, uint64_t export_size)
{
	struct slot_hdr h = {
		.magic = STATE_MAGIC,
		.gen = ++c->gen,
		.export_size = export_size,
		.n = c->n,
	};
	size_t n = sizeof(h) + (size_t)c->n * sizeof(*c->e);

	if (c->fd < 0)
		return 0;
	h.sum = slot_sum(&h, c->e);
	memcpy(c->slot, &h, sizeof(h));
	memcpy((char *)c->slot + sizeof(h), c->e, (size_t)c->n * sizeof(*c->e));
	if (pwrite(c->fd, c->slot, n, (off_t)(c->gen & 1) * slot_size(c->max)) != (ssize_t)n)
		return vlog_err(-errno, "cannot record what was written out");
	c->export_size = export_size;
	return 0;
}

void vigil_commit_close(struct vigil_commit *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->e);
	free(c->slot);
	c->fd = -1;
	c->e = NULL;
	c->slot = NULL;
}
