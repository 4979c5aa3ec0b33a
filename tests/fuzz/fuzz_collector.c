// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the collector's whole receive path (collector/conn.c,
 * collector/udp.c, collector/agents.c) without its epoll loop. A collector
 * with no output (no file, no JetStream) gets the input through a socket
 * pair, as from an agent:
 *   byte 0 even: TCP. The rest is one connection's byte stream, written in
 *                chunks whose sizes follow from byte 0, and read by
 *                collector_conn_readable after each, so records are
 *                reassembled across reads as on a real connection.
 *   byte 0 odd:  UDP. The rest is datagrams, each a u16 length (little-
 *                endian) then its bytes, read by collector_udp_readable.
 * Hello, records, acks, de-duplication, gap events and formatting all run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "collector.h"

static void tcp(struct collector *c, const uint8_t *p, size_t n, unsigned seed)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		abort();
	if (collector_conn_open(c, sv[1], &sa, NULL)) {	/* clear text */
		close(sv[0]);
		return;
	}
	for (size_t off = 0; off < n && c->nconns;) {
		size_t chunk = 1 + seed % 4096;
		char acks[4096];

		seed = seed * 1103515245u + 12345u;
		if (chunk > n - off)
			chunk = n - off;
		if (write(sv[0], p + off, chunk) != (ssize_t)chunk)
			abort();
		off += chunk;
		collector_conn_readable(c, c->conns[0]);
		while (read(sv[0], acks, sizeof(acks)) > 0)
			;	/* the acks, so the pair never fills */
		collector_conn_reap(c);
	}
	close(sv[0]);	/* end of stream: the collector sees it closed */
	if (c->nconns)
		collector_conn_readable(c, c->conns[0]);
	while (c->nconns)
		collector_conn_close(c, c->conns[0], NULL);
	collector_conn_reap(c);
}

static void udp(struct collector *c, const uint8_t *p, size_t n)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv))
		abort();
	for (size_t off = 0; n - off >= 2;) {
		size_t len = p[off] | p[off + 1] << 8;

		off += 2;
		if (len > n - off)
			len = n - off;
		/* One at a time: the pair's queue is short. */
		if (send(sv[0], p + off, len, 0) != (ssize_t)len)
			abort();
		collector_udp_readable(c, sv[1]);
		off += len;
	}
	close(sv[0]);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct collector c = { .epfd = -1, .out = { .fd = -1 }, .commit = { .fd = -1 } };
	struct conn *conns[2], *dead[2];
	struct agent agents[2];

	if (!size)
		return 0;
	memset(agents, 0, sizeof(agents));
	c.agents = agents;
	c.max_agents = 2;
	c.proc_bytes = AGENT_PROC_BYTES;
	c.conns = conns;
	c.dead = dead;
	c.max_conns = 1;
	c.hello_timeout = c.frame_timeout = 1e9;
	c.udp_buf = malloc(VIGIL_STREAM_DGRAM_MAX + 1);
	c.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c.epfd < 0 || !c.udp_buf || vigil_commit_init(&c.commit, 2, 0))
		abort();
	if (data[0] & 1)
		udp(&c, data + 1, size - 1);
	else
		tcp(&c, data + 1, size - 1, data[0] >> 1);
	collector_agents_free(&c);
	vigil_commit_close(&c.commit);
	vbuf_free(&c.batch);
	free(c.udp_buf);
	close(c.epfd);
	return 0;
}
