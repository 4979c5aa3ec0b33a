// SPDX-License-Identifier: GPL-2.0
/* See spool.h. Plain files and pread/write: this path runs only while a
 * collector is away, never on the normal path. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <vigil/events.h>
#include "log.h"
#include "stream/spool.h"

static void seg_path(const struct vigil_spool *sp, uint64_t start, char *out, size_t n)
{
	snprintf(out, n, "%s/ring%u-%016" PRIx64 ".spool", sp->dir, sp->ring_id, start);
}

static int seg_cmp(const void *a, const void *b)
{
	const struct vigil_spool_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Bytes of whole records at the start of a segment file: an agent killed
 * inside a write leaves half a record at the end, which must not be sent. */
static uint64_t whole_records(int fd, uint64_t size)
{
	uint8_t buf[65536];
	uint64_t pos = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), pos);
		size_t p = 0;

		while (n >= 8 && p + 8 <= (size_t)n) {
			uint32_t len;
			uint64_t span;

			memcpy(&len, buf + p, sizeof(len));
			span = vigil_ring_rec_span(len);
			/* A power cut may also leave zeros past what was
			 * synced: a record is at least its header. */
			if ((len & VIGIL_RB_BUSY) || (len & ~VIGIL_RB_DISCARD) > VIGIL_EVENT_MAX_SIZE ||
			    (len & ~VIGIL_RB_DISCARD) < sizeof(struct vigil_hdr) ||
			    pos + p + span > size)
				return pos + p;
			if (p + span > (size_t)n)
				break;	/* read on from this record */
			p += span;
		}
		if (!p)
			return pos;
		pos += p;
	}
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* fd's data (fdatasync) or, for a folder, its entries (fsync); timed. A
 * failure is logged: the spool goes on, only the power-cut promise is
 * weaker, and the log says so. */
static void sync_fd(struct vigil_spool *sp, int fd, bool folder)
{
	double t = mono_s();

	if (folder ? fsync(fd) : fdatasync(fd))
		vlog_err(-errno, "spool %s: cannot sync to disk", sp->dir);
	sp->syncs++;
	sp->sync_s += mono_s() - t;
}

static void sync_newest(struct vigil_spool *sp)
{
	if (sp->unsynced_since && sp->nseg)
		sync_fd(sp, sp->seg[sp->nseg - 1].fd, false);
	sp->unsynced_since = 0;
}

void vigil_spool_tick(struct vigil_spool *sp)
{
	if (sp->unsynced_since && mono_s() - sp->unsynced_since >= VIGIL_SPOOL_SYNC_S)
		sync_newest(sp);
}

/* Segments a previous agent left for this ring, if they join up. */
static void take_up(struct vigil_spool *sp)
{
	char prefix[32], path[512];
	DIR *d = opendir(sp->dir);
	struct dirent *e;

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "ring%u-", sp->ring_id);
	while ((e = readdir(d)) && sp->nseg < VIGIL_SPOOL_SEGS) {
		struct vigil_spool_seg *g = &sp->seg[sp->nseg];
		struct stat st;
		char *end;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		g->start = strtoull(e->d_name + strlen(prefix), &end, 16);
		if (strcmp(end, ".spool"))
			continue;
		seg_path(sp, g->start, path, sizeof(path));
		g->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
		if (g->fd < 0 || fstat(g->fd, &st)) {
			if (g->fd >= 0)
				close(g->fd);
			continue;
		}
		g->end = g->start + whole_records(g->fd, st.st_size);
		if (g->end - g->start < (uint64_t)st.st_size) {
			vlog_info("spool %s: cutting a half-written record off the end", path);
			if (ftruncate(g->fd, g->end - g->start))
				vlog_err(-errno, "cannot cut %s", path);
		}
		sp->nseg++;
	}
	closedir(d);
	qsort(sp->seg, sp->nseg, sizeof(sp->seg[0]), seg_cmp);
	for (unsigned i = 1; i < sp->nseg; i++)
		if (sp->seg[i].start != sp->seg[i - 1].end) {
			vlog_info("spool %s: segments of ring %u do not join up; keeping the newest",
				  sp->dir, sp->ring_id);
			vigil_spool_trim(sp, sp->seg[i].start);
			i = 0;
		}
	if (sp->nseg)
		vlog_info("spool %s: %llu bytes of ring %u left by an earlier agent, sent first",
			  sp->dir, (unsigned long long)(vigil_spool_end(sp) - vigil_spool_first(sp)),
			  sp->ring_id);
}

int vigil_spool_open(struct vigil_spool *sp, const char *dir, uint32_t ring_id, uint64_t max_bytes)
{
	*sp = (struct vigil_spool){ .ring_id = ring_id, .max_bytes = max_bytes };
	if (strlen(dir) >= sizeof(sp->dir))
		return vlog_refuse(-ENAMETOOLONG, "spool folder name too long");
	snprintf(sp->dir, sizeof(sp->dir), "%s", dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return vlog_err(-errno, "cannot create spool folder %s", dir);
	sp->seg_bytes = max_bytes / (VIGIL_SPOOL_SEGS / 2);
	if (sp->seg_bytes < 4096)
		sp->seg_bytes = 4096;
	take_up(sp);
	return 0;
}

void vigil_spool_close(struct vigil_spool *sp)
{
	sync_newest(sp);
	for (unsigned i = 0; i < sp->nseg; i++)
		close(sp->seg[i].fd);
	sp->nseg = 0;
}

static void drop_oldest(struct vigil_spool *sp)
{
	char path[512];

	seg_path(sp, sp->seg[0].start, path, sizeof(path));
	unlink(path);
	close(sp->seg[0].fd);
	memmove(sp->seg, sp->seg + 1, --sp->nseg * sizeof(sp->seg[0]));
}

static int new_seg(struct vigil_spool *sp, uint64_t start)
{
	char path[512];
	int fd, dfd;

	if (sp->nseg == VIGIL_SPOOL_SEGS)
		return -ENOSPC;
	sync_newest(sp);	/* a segment is closed: on disk before the next */
	seg_path(sp, start, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return vlog_err(-errno, "cannot create spool file %s", path);
	/* The new name on disk too: the segment files are the spool's index. */
	dfd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		sync_fd(sp, dfd, true);
		close(dfd);
	}
	sp->seg[sp->nseg++] = (struct vigil_spool_seg){ .start = start, .end = start, .fd = fd };
	return 0;
}

static uint64_t count_records(const struct vigil_ring *r, uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	for (; from < to; from += vigil_ring_rec_span(vigil_ring_rec_len(r, from)))
		n++;
	return n;
}

int vigil_spool_append(struct vigil_spool *sp, const struct vigil_ring *r, uint64_t from,
		       uint64_t to)
{
	struct vigil_spool_seg *g;
	int err;

	if (from >= to)
		return 0;
	if (sp->nseg && from != vigil_spool_end(sp))
		return -EINVAL;
	g = sp->nseg ? &sp->seg[sp->nseg - 1] : NULL;
	if (!g || g->end - g->start >= sp->seg_bytes) {
		/* Full: the oldest goes, and what it held is lost. */
		while (sp->nseg && (vigil_spool_end(sp) - vigil_spool_first(sp) + sp->seg_bytes >
				    sp->max_bytes || sp->nseg == VIGIL_SPOOL_SEGS)) {
			sp->dropped_bytes += sp->seg[0].end - sp->seg[0].start;
			sp->dropped_records += sp->seg[0].records;
			drop_oldest(sp);
		}
		if ((err = new_seg(sp, from)))
			return err;
		g = &sp->seg[sp->nseg - 1];
	}
	uint64_t was = g->end;

	g->records += count_records(r, from, to);
	sp->spilled += to - from;
	while (from < to) {
		ssize_t n = write(g->fd, vigil_ring_at(r, from), to - from);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Never leave half a record: the file ends where it did. */
			err = n < 0 ? -errno : -EIO;
			if (ftruncate(g->fd, was - g->start))
				vlog_err(-errno, "cannot cut the spool back");
			g->end = was;
			return vlog_err(err, "cannot write the spool");
		}
		from += n;
		g->end += n;
	}
	if (!sp->unsynced_since)
		sp->unsynced_since = mono_s();
	return 0;
}

void vigil_spool_trim(struct vigil_spool *sp, uint64_t pos)
{
	while (sp->nseg && sp->seg[0].end <= pos)
		drop_oldest(sp);
}

ssize_t vigil_spool_read(const struct vigil_spool *sp, uint64_t pos, void *buf, size_t n)
{
	for (unsigned i = 0; i < sp->nseg; i++) {
		const struct vigil_spool_seg *g = &sp->seg[i];

		if (pos < g->start || pos >= g->end)
			continue;
		if (n > g->end - pos)
			n = g->end - pos;
		return pread(g->fd, buf, n, pos - g->start);
	}
	return -ENOENT;
}
