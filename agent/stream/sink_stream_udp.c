// SPDX-License-Identifier: GPL-2.0
/*
 * The UDP variant of the stream sink (--send udp://HOST:PORT), for sites
 * that accept loss: one datagram per batch of whole records, sent with
 * sendmsg straight from the ring's pages (the kernel copies them into the
 * datagram), no acknowledgement, so the ring is released as soon as a
 * datagram is sent. A hello datagram goes out first and every second, so a
 * collector that starts late learns who the agent is.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "log.h"
#include "stream/sink_stream.h"
#include "stream.h"

#define HELLO_EVERY_S 1.0

static void send_hello(struct vigil_sink_stream *s, uint64_t pos)
{
	s->hello.len = 0;
	vigil_stream_hello_build(&s->hello, s->o.node_name, s->boot_id, s->ring_id,
				 s->ring_size, pos, s->o.realtime_offset_ns);
	if (send(s->fd, s->hello.p, s->hello.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		s->udp_errors++;
	s->next_try = vigil_stream_now() + HELLO_EVERY_S;
}

/* Whole records from pos that fit one datagram. */
static uint64_t batch_end(const struct vigil_ring *r, uint64_t pos, uint64_t end)
{
	uint64_t start = pos;

	while (pos < end) {
		uint32_t len = vigil_ring_rec_len(r, pos);
		uint64_t span = vigil_ring_rec_span(len);

		if ((len & VIGIL_RB_BUSY) ||
		    pos - start + span > VIGIL_STREAM_DGRAM_MAX - sizeof(struct vigil_stream_dgram))
			break;
		pos += span;
	}
	return pos;
}

static int offer_udp(struct vigil_sink *sk, const struct vigil_ring *r, uint64_t end)
{
	struct vigil_sink_stream *s = (struct vigil_sink_stream *)sk;

	if (vigil_stream_now() >= s->next_try)
		send_hello(s, sk->pos);
	while (sk->pos < end) {
		uint64_t bend = batch_end(r, sk->pos, end);
		struct vigil_stream_dgram h = {
			.magic = VIGIL_STREAM_DGRAM_MAGIC,
			.version = VIGIL_STREAM_VERSION,
			.ring_id = s->ring_id,
			.len = bend - sk->pos,
			.offset = sk->pos,
		};
		struct iovec iov[2] = {
			{ &h, sizeof(h) },
			{ (void *)vigil_ring_at(r, sk->pos), bend - sk->pos },
		};
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };

		if (bend == sk->pos)
			break;	/* an uncommitted record */
		memcpy(h.boot_id, s->boot_id, sizeof(h.boot_id));
		if (sendmsg(s->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS)
				break;	/* socket full: the ring holds it meanwhile */
			/* Refused (no listener) or unreachable: UDP accepts the
			 * loss, the collector sees it in the offsets. */
			s->udp_errors++;
		}
		s->tx.sends++;
		s->tx.bytes += bend - sk->pos;
		sk->pos = bend;
	}
	return 0;
}

void vigil_sink_stream_udp_summary(const struct vigil_sink_stream *s)
{
	vlog_info("stream %s: %llu datagrams, %llu bytes, %llu not sent", s->o.url,
		  (unsigned long long)s->tx.sends, (unsigned long long)s->tx.bytes,
		  (unsigned long long)s->udp_errors);
}

static const struct vigil_sink_ops udp_ops = { .offer = offer_udp };

int vigil_sink_stream_udp_init(struct vigil_sink_stream *s)
{
	s->fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return vlog_err(-errno, "--send %s: socket", s->o.url);
	if (connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen))
		return vlog_err(-errno, "--send %s: connect", s->o.url);
	s->sink.ops = &udp_ops;
	s->state = STREAM_UP;
	vlog_info("stream %s: sending datagrams with sendmsg from the ring (no acknowledgement)",
		  s->o.url);
	return 0;
}
