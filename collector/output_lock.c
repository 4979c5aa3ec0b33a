// SPDX-License-Identifier: GPL-2.0
/* One collector per export file (output_lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "log.h"
#include "output_lock.h"

int collector_output_lock(const char *export_path)
{
	char path[PATH_MAX], pid[24] = "";
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s.lock", export_path) >= (int)sizeof(path))
		return vlog_refuse(-ENAMETOOLONG, "export file name too long: %s", export_path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vlog_err(-errno, "cannot open %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? strcspn(pid, "\n") : 0] = 0;
		close(fd);
		if (err == EWOULDBLOCK)
			return vlog_refuse(-EBUSY, "another vigil-collector (pid %s) writes %s and its "
					"state file: refused", pid[0] ? pid : "unknown", export_path);
		return vlog_err(-err, "cannot lock %s", path);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n) {
		close(fd);
		return vlog_err(-errno, "cannot write %s", path);
	}
	return fd;
}
