// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "export_file.h"

int vigil_export_open(struct vigil_export_file *x, const char *path, uint64_t max_size,
		      unsigned max_backups)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	memset(x, 0, sizeof(*x));
	x->path = strdup(path);
	if (!x->path) {
		close(fd);
		return -ENOMEM;
	}
	x->fd = fd;
	x->size = fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
	x->max_size = max_size;
	x->max_backups = max_backups;
	return 0;
}

void vigil_export_fd(struct vigil_export_file *x, int fd)
{
	memset(x, 0, sizeof(*x));
	x->fd = fd;
}

static void sync_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	char dir[n + 1];
	int fd;

	if (!slash)
		strcpy(dir, ".");
	else
		snprintf(dir, n + 1, "%s", slash == path ? "/" : path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int vigil_export_sync(struct vigil_export_file *x)
{
	return fdatasync(x->fd) ? -errno : 0;
}

static int64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

static int rotate(struct vigil_export_file *x)
{
	size_t n = strlen(x->path) + 16;
	char from[n], to[n];
	int fd;

	/* The lines already acknowledged go to disk under their old name. */
	if (x->sync && fdatasync(x->fd))
		return -errno;
	for (unsigned i = x->max_backups; i > 0; i--) {
		snprintf(to, n, "%s.%u", x->path, i);
		if (i == 1)
			snprintf(from, n, "%s", x->path);
		else
			snprintf(from, n, "%s.%u", x->path, i - 1);
		if (rename(from, to) && errno != ENOENT)
			return -errno;
	}
	if (!x->max_backups && ftruncate(x->fd, 0))
		return -errno;
	fd = open(x->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	close(x->fd);
	x->fd = fd;
	x->size = 0;
	x->first_line = 0;
	x->rotations++;
	if (x->sync)
		sync_folder(x->path);	/* the renames and the new name */
	return 0;
}

/* Removes rotated files whose last line is max_age old. Their numbers are
 * left as holes: rotation renames over them. */
static void remove_aged(struct vigil_export_file *x, int64_t now)
{
	size_t n = strlen(x->path) + 16;
	char name[n];
	struct stat st;

	for (unsigned i = 1; i <= x->max_backups; i++) {
		snprintf(name, n, "%s.%u", x->path, i);
		if (stat(name, &st) || now - st.st_mtime < (int64_t)x->max_age)
			continue;
		if (unlink(name))
			x->errors++;
		else
			x->expired++;
	}
}

void vigil_export_expire(struct vigil_export_file *x)
{
	int64_t now;

	if (!x->path || !x->max_age)
		return;
	now = wall_now();
	if (x->first_line && (uint64_t)(now - x->first_line) * 2 >= x->max_age && rotate(x))
		x->errors++;
	if (now >= x->next_expiry) {
		x->next_expiry = now + 1;
		remove_aged(x, now);
	}
}

void vigil_export_max_age(struct vigil_export_file *x, uint64_t seconds)
{
	x->max_age = seconds;
	if (x->size && !x->first_line)
		x->first_line = wall_now();
	x->next_expiry = 0;
	vigil_export_expire(x);
}

int vigil_export_write(struct vigil_export_file *x, const void *data, size_t len)
{
	size_t written;

	return vigil_export_write_some(x, data, len, &written);
}

int vigil_export_write_some(struct vigil_export_file *x, const void *data, size_t len,
			    size_t *written)
{
	const char *p = data;
	uint64_t before;

	*written = 0;

	if (x->path && x->max_size && x->size && x->size + len > x->max_size && rotate(x))
		x->errors++;	/* keep appending to the current file */
	vigil_export_expire(x);
	if (x->path && x->max_age && !x->first_line)
		x->first_line = wall_now();
	before = x->size;
	while (len) {
		ssize_t n = write(x->fd, p, len);

		if (n < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			x->errors++;
			/* A batch is whole or absent: a file cut back leaves no
			 * torn line for the next batch to follow. */
			if (x->path && x->size != before && !ftruncate(x->fd, (off_t)before)) {
				x->bytes -= x->size - before;
				x->size = before;
				*written = 0;
			}
			return err;
		}
		*written += n;
		p += n;
		len -= n;
		x->size += n;
		x->bytes += n;
	}
	return 0;
}

void vigil_export_close(struct vigil_export_file *x)
{
	if (x->path && x->fd >= 0)
		close(x->fd);
	free(x->path);
	x->path = NULL;
	x->fd = -1;
}
