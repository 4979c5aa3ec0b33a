// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP socket carried into a cgroup and kept where no file table shows it
 * (tests/deny_carried_hidden.t, issue 32): the parent connects to
 * 127.0.0.1:PORT from where it runs (outside CGROUP), forks, and passes the
 * descriptor by SCM_RIGHTS to the child, which moved itself into CGROUP
 * first ("-": it stays where it is). The parent closes its copy and waits.
 * The child hides the socket and closes its descriptor:
 *
 *   uring     registered as an io_uring fixed file, sent on with
 *             IOSQE_FIXED_FILE;
 *   inflight  kept in flight in a unix socketpair, taken out for each send
 *             and put back at once.
 *
 * Then it sends "TAG N\n" every INTERVAL ms, COUNT times, and appends one
 * line per send to DIR/TAG.log: "N MS RESULT" (MS: CLOCK_REALTIME ms;
 * RESULT: bytes sent, or the errno name). DIR/TAG.up (its pid) says the
 * socket is hidden.
 *
 *   carried_hide uring|inflight PORT CGROUP DIR TAG [COUNT [INTERVAL]]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>
#include <sys/socket.h>
#include <sys/wait.h>

static const char *dir, *tag;

static void die(const char *what)
{
	fprintf(stderr, "carried_hide %s: %s: %s\n", tag ? tag : "", what, strerror(errno));
	exit(2);
}

static int send_fd(int via, int fd)
{
	char c = 'f', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(via, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int via)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h;
	int fd;

	if (recvmsg(via, &m, 0) != 1 || !(h = CMSG_FIRSTHDR(&m)) || h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

/* DIR/TAG.up, holding the pid: the socket is hidden. */
static void hidden(void)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.up", dir, tag);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || fprintf(f, "%d", getpid()) < 0 || fclose(f) || rename(tmp, path))
		die(path);
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void log_send(FILE *log, int n, int res)
{
	if (res >= 0)
		fprintf(log, "%d %lld %d\n", n, now_ms(), res);
	else
		fprintf(log, "%d %lld %s\n", n, now_ms(), strerrorname_np(-res));
	fflush(log);
}

/* The socket as an io_uring fixed file (index 0); its descriptor closed. */
static void run_uring(int fd, FILE *log, int count, int interval)
{
	struct io_uring ring;
	char msg[64];
	int err;

	if ((err = io_uring_queue_init(4, &ring, 0)) < 0 ||
	    (err = io_uring_register_files(&ring, &fd, 1)) < 0) {
		errno = -err;
		die("io_uring");
	}
	close(fd);
	hidden();
	for (int n = 1; n <= count; n++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;
		int len = snprintf(msg, sizeof(msg), "%s %d\n", tag, n);

		io_uring_prep_send(sqe, 0, msg, len, MSG_NOSIGNAL);
		sqe->flags |= IOSQE_FIXED_FILE;
		if ((err = io_uring_submit_and_wait(&ring, 1)) < 0 ||
		    (err = io_uring_wait_cqe(&ring, &cqe)) < 0) {
			errno = -err;
			die("io_uring send");
		}
		log_send(log, n, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		usleep(interval * 1000);
	}
	io_uring_queue_exit(&ring);
}

/* The socket in flight in a unix socketpair, out only to send. */
static void run_inflight(int fd, FILE *log, int count, int interval)
{
	char msg[64];
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sp) || send_fd(sp[0], fd))
		die("socketpair");
	close(fd);
	hidden();
	for (int n = 1; n <= count; n++) {
		int len = snprintf(msg, sizeof(msg), "%s %d\n", tag, n), res;

		if ((fd = recv_fd(sp[1])) < 0)
			die("take the socket out of flight");
		res = send(fd, msg, len, MSG_NOSIGNAL);
		if (res < 0)
			res = -errno;
		if (send_fd(sp[0], fd))
			die("put the socket back in flight");
		close(fd);
		log_send(log, n, res);
		usleep(interval * 1000);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int count, interval, sp[2], fd, status;
	const char *mode, *cgroup;
	char path[512];
	FILE *log;
	pid_t pid;

	if (argc < 6) {
		fprintf(stderr, "usage: carried_hide uring|inflight PORT CGROUP DIR TAG [COUNT [INTERVAL_MS]]\n");
		return 2;
	}
	mode = argv[1];
	to.sin_port = htons(atoi(argv[2]));
	cgroup = argv[3];
	dir = argv[4];
	tag = argv[5];
	count = argc > 6 ? atoi(argv[6]) : 20;
	interval = argc > 7 ? atoi(argv[7]) : 1000;
	if (strcmp(mode, "uring") && strcmp(mode, "inflight"))
		return fprintf(stderr, "carried_hide: unknown mode %s\n", mode), 2;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || connect(fd, (void *)&to, sizeof(to)))
		die("connect");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid) {	/* outside: hands the socket over, keeps no copy */
		close(sp[1]);
		if (send_fd(sp[0], fd))
			die("pass the socket");
		close(fd);
		if (waitpid(pid, &status, 0) < 0)
			die("wait");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
	}
	close(fd);
	close(sp[0]);
	if (strcmp(cgroup, "-")) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		FILE *f = fopen(path, "w");

		if (!f || fprintf(f, "0\n") < 0 || fclose(f))
			die(path);
	}
	if ((fd = recv_fd(sp[1])) < 0)
		die("receive the socket");
	close(sp[1]);
	snprintf(path, sizeof(path), "%s/%s.log", dir, tag);
	if (!(log = fopen(path, "a")))
		die(path);
	if (!strcmp(mode, "uring"))
		run_uring(fd, log, count, interval);
	else
		run_inflight(fd, log, count, interval);
	return 0;
}
