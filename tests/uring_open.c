// SPDX-License-Identifier: GPL-2.0
/*
 * Opens PATH through io_uring (IORING_OP_OPENAT: no open syscall), reads
 * it with read(2) and prints what it read (tests/proc_uring.t: file rules'
 * syscall hooks never see this open).
 *   uring_open PATH
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[256];
	ssize_t n;
	int err, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: uring_open PATH\n");
		return 2;
	}
	if ((err = io_uring_queue_init(4, &ring, 0))) {
		fprintf(stderr, "uring_open: io_uring_queue_init: %s\n", strerror(-err));
		return 1;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, argv[1], O_RDONLY, 0);
	if ((err = io_uring_submit(&ring)) != 1 || (err = io_uring_wait_cqe(&ring, &cqe))) {
		fprintf(stderr, "uring_open: submit: %s\n", strerror(err < 0 ? -err : EIO));
		return 1;
	}
	fd = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	if (fd < 0) {
		fprintf(stderr, "uring_open: %s: %s\n", argv[1], strerror(-fd));
		return 1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return 1;
	fwrite(buf, 1, n, stdout);
	return 0;
}
