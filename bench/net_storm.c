// SPDX-License-Identifier: GPL-2.0
/*
 * A connect/transfer/close storm over loopback for bench/net.sh: N TCP
 * connections, one after another, each carrying BYTES from client to server,
 * then ROUND_TRIPS requests and responses of BYTES each way (a keep-alive
 * connection's I/O), and closed by the client. Both ends live in this one
 * thread (the kernel completes the handshake into the listen backlog), so
 * the storm uses one core at most and leaves the other free; MAX_PER_SECOND
 * caps it further.
 * Prints "wall_s cpu_s slept_s": the wall time, the process's own user+system
 * time, and how long the cap made it sleep (above 0: the storm ran at its
 * cap, and its wall time says how fast the cap is, not how fast the
 * machine is). Run it inside a network namespace.
 *
 *   net_storm CONNECTIONS BYTES [MAX_PER_SECOND [ROUND_TRIPS]]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int fail(const char *what)
{
	fprintf(stderr, "net_storm: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Sends bytes on from, reads them all on to. */
static int pass(int from, int to, char *buf, size_t bufsz, long bytes)
{
	long got = 0;
	ssize_t r;

	if (bytes && send(from, buf, bytes, 0) != bytes)
		return -1;
	while (got < bytes && (r = recv(to, buf, bufsz, 0)) > 0)
		got += r;
	return got == bytes ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	static char buf[65536];
	long n, bytes, rate, trips;
	double t0, c0, elapsed, slept = 0;
	int ls, one = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: net_storm CONNECTIONS BYTES [MAX_PER_SECOND [ROUND_TRIPS]]\n");
		return 2;
	}
	n = atol(argv[1]);
	bytes = atol(argv[2]);
	rate = argc > 3 ? atol(argv[3]) : 50000;
	trips = argc > 4 ? atol(argv[4]) : 0;
	if (n <= 0 || bytes < 0 || bytes > (long)sizeof(buf) || rate <= 0 || trips < 0) {
		fprintf(stderr, "net_storm: CONNECTIONS > 0, 0 <= BYTES <= %zu, MAX_PER_SECOND > 0,"
			" ROUND_TRIPS >= 0\n", sizeof(buf));
		return 2;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&sa, &salen))
		return fail("listen");
	memset(buf, 'x', sizeof(buf));
	t0 = now();
	c0 = cpu_self();
	for (long i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;
		ssize_t r;

		if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)))
			return fail("connect");
		s = accept(ls, NULL, NULL);
		if (s < 0)
			return fail("accept");
		if (pass(c, s, buf, sizeof(buf), bytes))
			return fail("transfer");
		for (long k = 0; k < trips; k++)
			if (pass(c, s, buf, sizeof(buf), bytes) || pass(s, c, buf, sizeof(buf), bytes))
				return fail("round trip");
		close(c);
		while ((r = recv(s, buf, sizeof(buf), 0)) > 0)
			;	/* until the client's FIN */
		close(s);
		/* The cap: never ahead of i connections in i / rate seconds. */
		elapsed = now() - t0;
		if (elapsed < (double)(i + 1) / rate) {
			double t = now();

			usleep(((double)(i + 1) / rate - elapsed) * 1e6);
			slept += now() - t;
		}
	}
	printf("%.6f %.6f %.6f\n", now() - t0, cpu_self() - c0, slept);
	close(ls);
	return 0;
}
