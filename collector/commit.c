// SPDX-License-Identifier: GPL-2.0
/* See commit.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "commit.h"
#include "fnv.h"
#include "log.h"
#include "stream.h"

#define SLOT_MAGIC 0x54534c4756ull	/* "VGLST", each slot's, in both formats */
#define FILE_MAGIC "VIGLSTAT"
#define FORMAT 2
#define V1_ENTRY 32			/* format 1: boot id, ring id, pad, offset */
#define ENTRY_MAX 4096			/* a later format's entries, read in part */

struct file_hdr {
	char magic[8];		/* FILE_MAGIC */
	__u32 format;		/* FORMAT */
	__u32 entry_size;	/* bytes of an entry */
	__u32 max;		/* entries a slot holds */
	__u32 pad[2];
	__u32 sum;		/* FNV-1a of the bytes before it */
};

struct slot_hdr {
	__u64 magic;
	__u64 gen;
	__u64 export_size;
	__u32 n;
	__u32 sum;	/* FNV-1a over the header (sum 0) and the entries */
};

/* Where a file's slots are. */
struct layout {
	off_t base;	/* slot 0 */
	size_t esz;	/* bytes of an entry */
	unsigned max;	/* entries a slot holds */
};

_Static_assert(sizeof(struct file_hdr) == 32 && sizeof(struct slot_hdr) == 32, "file layout");

static size_t slot_size(const struct layout *l)
{
	return sizeof(struct slot_hdr) + (size_t)l->max * l->esz;
}

static struct layout our_layout(const struct vigil_commit *c)
{
	return (struct layout){ sizeof(struct file_hdr), sizeof(struct vigil_commit_entry), c->max };
}

static uint32_t slot_sum(const struct slot_hdr *h, const void *entries, size_t bytes)
{
	struct slot_hdr z = *h;

	z.sum = 0;
	return vigil_fnv1a(entries, bytes, vigil_fnv1a(&z, sizeof(z), VIGIL_FNV_START));
}

/* Reads slot i of layout l into buf (slot_size(l) bytes); 0 when valid. */
static int read_slot(int fd, const struct layout *l, unsigned i, struct slot_hdr *h, void *buf)
{
	size_t sz = slot_size(l);
	ssize_t n = pread(fd, buf, sz, l->base + (off_t)i * sz);

	if (n < (ssize_t)sizeof(*h))
		return -ENOENT;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != SLOT_MAGIC || h->n > l->max ||
	    (size_t)n < sizeof(*h) + (size_t)h->n * l->esz ||
	    slot_sum(h, (char *)buf + sizeof(*h), (size_t)h->n * l->esz) != h->sum)
		return -EBADMSG;
	return 0;
}

static double now_s(void)
{
	return (double)time(NULL);
}

static bool live(const struct vigil_commit *c, const struct vigil_commit_entry *e)
{
	return c->live && c->live(c->live_ctx, e->boot_id, e->ring_id);
}

static void forget(struct vigil_commit *c, unsigned i, const char *why)
{
	struct vigil_commit_entry *e = &c->e[i];
	char boot[33];

	vigil_boot_id_str(e->boot_id, boot);
	vlog_info("forgetting stream boot %s ring %u (written to offset %llu, last heard %.0f s "
		  "ago): %s", boot, e->ring_id, (unsigned long long)e->offset,
		  now_s() - (double)e->last_seen, why);
	c->e[i] = c->e[--c->n];
}

static bool unbound(const struct vigil_commit_entry *e)
{
	static const __u8 none[32];

	return !memcmp(e->cert_sha256, none, 32);
}

/* May e go to make room for a stream bound to certificate hash `cert`
 * (NULL: any entry may, as at load)? An entry bound to a certificate goes
 * only for a stream of that same certificate: another node's streams, and
 * clear-text ones, never push a binding out, so none can free another
 * node's stream for the taking (docs/stream.md, "Streams are bound"). */
static bool may_evict(const struct vigil_commit *c, const struct vigil_commit_entry *e,
		      const __u8 *cert)
{
	if (live(c, e))
		return false;
	return !cert || unbound(e) || !memcmp(e->cert_sha256, cert, 32);
}

/* Room for one more entry: the one least recently heard with no live
 * connection goes, among those may_evict allows. */
static int make_room(struct vigil_commit *c, const __u8 *cert)
{
	int victim = -1;
	char why[64];

	for (unsigned i = 0; i < c->n; i++)
		if ((victim < 0 || c->e[i].last_seen < c->e[victim].last_seen) &&
		    may_evict(c, &c->e[i], cert))
			victim = i;
	if (victim < 0) {
		c->full++;
		return vlog_refuse(-ENOSPC, "stream table full (%u entries), every one with a live "
				   "connection or bound to another certificate", c->n);
	}
	snprintf(why, sizeof(why), "the table of %u is full", c->max);
	forget(c, victim, why);
	c->evicted++;
	return 0;
}

/* Appends e, making room if need be (cert: as make_room). */
static int add(struct vigil_commit *c, const struct vigil_commit_entry *e, const __u8 *cert)
{
	int err;

	if (c->n == c->max && (err = make_room(c, cert)))
		return err;
	c->e[c->n++] = *e;
	return 0;
}

/* Reads the file into the table. *fresh: nothing was loaded; *convert: the
 * file is to be written anew in our layout. */
static int load(struct vigil_commit *c, const char *path, unsigned v1_max, bool *fresh,
		bool *convert)
{
	struct file_hdr fh;
	struct slot_hdr h[2];
	struct layout l;
	ssize_t got = pread(c->fd, &fh, sizeof(fh), 0);
	int ok[2], best, err = 0;
	void *buf;

	*fresh = *convert = true;
	if (got < 0)
		return vlog_err(-errno, "cannot read %s", path);
	if (got == 0)
		return 0;	/* a first start */
	if (got == sizeof(fh) && !memcmp(fh.magic, FILE_MAGIC, 8)) {
		if (vigil_fnv1a(&fh, offsetof(struct file_hdr, sum), VIGIL_FNV_START) != fh.sum ||
		    fh.format != FORMAT || fh.entry_size < V1_ENTRY || fh.entry_size > ENTRY_MAX ||
		    fh.entry_size % 8 || !fh.max || fh.max > 1u << 20)
			return vlog_refuse(-EBADMSG, "%s: a state file this collector cannot read "
					"(format %u, entry size %u, %u entries)", path, fh.format,
					fh.entry_size, fh.max);
		l = (struct layout){ sizeof(fh), fh.entry_size, fh.max };
	} else {
		/* Format 1: slots placed by --max-agents, which must be the one
		 * that wrote them. */
		l = (struct layout){ 0, V1_ENTRY, v1_max };
	}
	*convert = l.base != sizeof(fh) || l.esz != sizeof(*c->e) || l.max != c->max;
	if (!(buf = malloc(slot_size(&l))))
		return -ENOMEM;
	ok[0] = !read_slot(c->fd, &l, 0, &h[0], buf);
	ok[1] = !read_slot(c->fd, &l, 1, &h[1], buf);
	if (!ok[0] && !ok[1]) {
		vlog_info("%s holds no valid record: starting without one", path);
		goto out;
	}
	best = ok[0] && ok[1] ? h[1].gen > h[0].gen : ok[1];
	read_slot(c->fd, &l, best, &h[best], buf);
	c->gen = h[best].gen;
	c->export_size = h[best].export_size;
	*fresh = false;
	for (unsigned i = 0; i < h[best].n && !err; i++) {
		struct vigil_commit_entry e = {};

		memcpy(&e, (char *)buf + sizeof(struct slot_hdr) + i * l.esz,
		       l.esz < sizeof(e) ? l.esz : sizeof(e));
		if (!e.last_seen)	/* format 1: heard now, as far as we know */
			e.last_seen = now_s();
		err = add(c, &e, NULL);	/* a smaller table: the least recently heard go */
	}
	if (*convert)
		vlog_info("%s: format %u, %u entries a slot: rewritten as format %u, %u (entries "
			  "of %zu bytes, now %zu)", path, l.base ? FORMAT : 1, l.max, FORMAT, c->max,
			  l.esz, sizeof(*c->e));
out:
	free(buf);
	return err;
}

/* Writes the table to a new file in our layout and renames it over path:
 * the file header is never written in place. */
static int convert(struct vigil_commit *c, const char *path)
{
	size_t len = strlen(path) + sizeof(".tmp");
	char tmp[len], dir[len];
	struct file_hdr fh = { .magic = FILE_MAGIC, .format = FORMAT,
			       .entry_size = sizeof(*c->e), .max = c->max };
	int fd, old = c->fd, dfd, err;

	snprintf(tmp, len, "%s.tmp", path);
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return vlog_err(-errno, "cannot create %s", tmp);
	fh.sum = vigil_fnv1a(&fh, offsetof(struct file_hdr, sum), VIGIL_FNV_START);
	c->fd = fd;
	if (pwrite(fd, &fh, sizeof(fh), 0) != sizeof(fh))
		err = vlog_err(errno ? -errno : -EIO, "cannot write %s", tmp);
	else if (!(err = vigil_commit_write(c, c->export_size)) && (fsync(fd) || rename(tmp, path)))
		err = vlog_err(-errno, "cannot put %s in place", tmp);
	if (err) {
		c->fd = old;
		close(fd);
		unlink(tmp);
		return err;
	}
	close(old);
	snprintf(dir, len, "%s", path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);	/* the new name */
		close(dfd);
	}
	return 0;
}

int vigil_commit_init(struct vigil_commit *c, unsigned max, double forget_after)
{
	*c = (struct vigil_commit){ .fd = -1, .max = max, .forget_after = forget_after };
	c->e = calloc(max, sizeof(*c->e));
	return c->e ? 0 : -ENOMEM;
}

int vigil_commit_open(struct vigil_commit *c, const char *export_path, int export_fd,
		      unsigned max, unsigned v1_max, double forget_after)
{
	size_t len = strlen(export_path) + sizeof(".state");
	char path[len];
	struct layout l;
	bool fresh, conv;
	struct stat st;
	int err;

	if ((err = vigil_commit_init(c, max, forget_after)))
		return err;
	snprintf(path, len, "%s.state", export_path);
	l = our_layout(c);
	c->slot = malloc(slot_size(&l));
	if (!c->slot)
		return -ENOMEM;
	c->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (c->fd < 0)
		return vlog_err(-errno, "cannot open %s", path);
	if ((err = load(c, path, v1_max, &fresh, &conv)))
		return err;
	if (fstat(export_fd, &st))
		return vlog_err(-errno, "cannot stat %s", export_path);
	if (fresh) {
		c->export_size = st.st_size;	/* nothing recorded: all of it stays */
	} else if ((uint64_t)st.st_size > c->export_size) {
		/* Written, never acknowledged: the agents send it again. */
		vlog_info("%s: dropping %llu bytes written after the last acknowledgement",
			  export_path, (unsigned long long)(st.st_size - c->export_size));
		if (ftruncate(export_fd, c->export_size))
			return vlog_err(-errno, "cannot cut %s back", export_path);
	}
	vigil_commit_retire(c);
	return conv ? convert(c, path) : 0;
}

static int find(const struct vigil_commit *c, const __u8 boot_id[16], uint32_t ring_id)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].ring_id == ring_id && !memcmp(c->e[i].boot_id, boot_id, 16))
			return i;
	return -1;
}

const struct vigil_commit_entry *vigil_commit_find(const struct vigil_commit *c,
						   const __u8 boot_id[16], uint32_t ring_id)
{
	int i = find(c, boot_id, ring_id);

	return i < 0 ? NULL : &c->e[i];
}

int vigil_commit_put(struct vigil_commit *c, const struct vigil_commit_entry *e)
{
	struct vigil_commit_entry x = *e;
	int i = find(c, e->boot_id, e->ring_id);

	x.pad = 0;
	x.last_seen = now_s();
	if (i >= 0) {
		c->e[i] = x;
		return 0;
	}
	return add(c, &x, x.cert_sha256);
}

void vigil_commit_retire(struct vigil_commit *c)
{
	double now = now_s();
	char why[64];

	if (!c->forget_after)
		return;
	snprintf(why, sizeof(why), "not heard for --forget-after %.0f s", c->forget_after);
	for (unsigned i = 0; i < c->n;) {
		struct vigil_commit_entry *e = &c->e[i];

		if (now - (double)e->last_seen <= c->forget_after) {
			i++;
		} else if (live(c, e)) {
			e->last_seen = now;	/* connected is heard */
			i++;
		} else {
			forget(c, i, why);
			c->retired++;
		}
	}
}

int vigil_commit_write(struct vigil_commit *c, uint64_t export_size)
{
	struct layout l = our_layout(c);
	struct slot_hdr h = {
		.magic = SLOT_MAGIC,
		.gen = ++c->gen,
		.export_size = export_size,
		.n = c->n,
	};
	size_t bytes = (size_t)c->n * sizeof(*c->e), n = sizeof(h) + bytes;

	if (c->fd < 0)
		return 0;
	h.sum = slot_sum(&h, c->e, bytes);
	memcpy(c->slot, &h, sizeof(h));
	memcpy((char *)c->slot + sizeof(h), c->e, bytes);
	if (pwrite(c->fd, c->slot, n, l.base + (off_t)(c->gen & 1) * slot_size(&l)) != (ssize_t)n)
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
