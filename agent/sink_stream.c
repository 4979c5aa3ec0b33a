// SPDX-License-Identifier: GPL-2.0
/* See sink_stream.h. Everything here is non-blocking: a slow or absent
 * collector never holds up the pump, the other sinks or BPF. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "log.h"
#include "sink_stream.h"
#include "stream.h"

#define SEND_MAX (4u << 20)	/* bytes per send: many records, bounded */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void arm(struct vigil_sink_stream *s, int fd, int op)
{
	/* One-shot: a socket at EOF or a completion nobody waits for must not
	 * keep the pump awake; offer() re-arms both each time it has read. */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = fd };

	if (s->epfd >= 0 && fd >= 0)
		epoll_ctl(s->epfd, op, fd, &ev);
}

static void down(struct vigil_sink_stream *s, int err, const char *what)
{
	if (s->state == STREAM_UP || !s->failures++)
		vlog_info("stream %s: %s (%s); retrying, events wait in the ring", s->url, what,
			  strerror(-err));
	if (s->fd >= 0)
		close(s->fd);	/* also leaves the pump's epoll */
	s->fd = -1;
	vigil_tx_disconnect(&s->tx);
	s->state = STREAM_DOWN;
	s->ack_len = 0;
	s->next_try = now_s() + s->backoff_ms / 1000.0;
	s->backoff_ms = s->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s->backoff_ms * 2;
}

static void start_connect(struct vigil_sink_stream *s)
{
	s->fd = socket(s->addr.ss_family, s->socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return down(s, -errno, "cannot create a socket");
	if (connect(s->fd, (struct sockaddr *)&s->addr, s->addrlen) && errno != EINPROGRESS)
		return down(s, -errno, "cannot connect");
	s->state = STREAM_CONNECTING;
}

/* Connected: say hello, starting where the collector last acknowledged. */
static void finish_connect(struct vigil_sink_stream *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);
	ssize_t n;

	if (poll(&p, 1, 0) <= 0)
		return;	/* still connecting */
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		return down(s, -(err ? err : errno), "cannot connect");
	/* io_uring sends on a blocking socket (its MSG_WAITALL retries);
	 * our own calls pass MSG_DONTWAIT. */
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
	s->hello.len = 0;
	vigil_stream_hello_build(&s->hello, s->node_name, s->boot_id, s->ring_id,
				 s->ring_size, s->sink.pos, s->realtime_offset_ns);
	n = send(s->fd, s->hello.p, s->hello.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)s->hello.len)
		return down(s, n < 0 ? -errno : -EAGAIN, "cannot send the hello");
	s->acked = s->sink.pos;
	vigil_tx_connect(&s->tx, s->fd, s->sink.pos);
	s->state = STREAM_UP;
	s->connects++;
	s->backoff_ms = BACKOFF_MIN_MS;
	arm(s, s->fd, EPOLL_CTL_ADD);
	if (!s->said_path || s->failures) {
		vlog_info("stream %s: connected, sending from ring position %llu with %s", s->url,
			  (unsigned long long)s->sink.pos, vigil_tx_path_name(s->tx.path));
		s->said_path = true;
		s->failures = 0;
	}
}

/* Acks from the collector: hostile bytes like any other. */
static int read_acks(struct vigil_sink_stream *s)
{
	for (;;) {
		struct vigil_stream_ack a;
		ssize_t n = recv(s->fd, s->ack + s->ack_len, sizeof(s->ack) - s->ack_len, MSG_DONTWAIT);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		s->ack_len += n;
		if (s->ack_len < sizeof(a))
			continue;
		s->ack_len = 0;
		memcpy(&a, s->ack, sizeof(a));
		if (vigil_stream_ack_check(&a) || a.offset < s->acked || a.offset > s->tx.sent)
			return -EPROTO;
		s->acked = a.offset;
	}
}

/* End of the committed records from pos: the range we may send as it lies. */
static uint64_t committed_end(const struct vigil_ring *r, uint64_t pos, uint64_t end)
{
	uint64_t start = pos;

	while (pos < end && pos - start < SEND_MAX) {
		uint32_t len = vigil_ring_rec_len(r, pos);

		if (len & VIGIL_RB_BUSY)
			break;
		pos += vigil_ring_rec_span(len);
	}
	return pos;
}

static int offer(struct vigil_sink *sk, const struct vigil_ring *r, uint64_t end)
{
	struct vigil_sink_stream *s = (struct vigil_sink_stream *)sk;
	int64_t released;
	uint64_t cend;
	int err;

	if (s->state == STREAM_DOWN && now_s() >= s->next_try)
		start_connect(s);
	if (s->state == STREAM_CONNECTING)
		finish_connect(s);
	if (s->state != STREAM_UP)
		return 0;
	if ((err = read_acks(s)))
		return down(s, err, err == -EPROTO ? "bad ack from the collector" : "connection lost"), 0;
	released = vigil_tx_poll(&s->tx);
	if (released < 0)
		return down(s, released, "send failed"), 0;
	cend = committed_end(r, s->tx.sent, end);
	if (cend > s->tx.sent) {
		err = vigil_tx_send(&s->tx, vigil_ring_at(r, s->tx.sent), cend - s->tx.sent);
		if (err)
			return down(s, err, "send failed"), 0;
		released = vigil_tx_poll(&s->tx);
		if (released < 0)
			return down(s, released, "send failed"), 0;
	}
	if (s->want == VIGIL_TX_AUTO && vigil_tx_copied_anyway(&s->tx))
		vlog_info("stream %s: the kernel copied every zero-copy send to this destination "
			  "(loopback does): sending with plain send() instead", s->url);
	sk->pos = (uint64_t)released < s->acked ? (uint64_t)released : s->acked;
	arm(s, s->fd, EPOLL_CTL_MOD);
	arm(s, s->tx.uring_fd, EPOLL_CTL_MOD);
	return 0;
}

static void flush(struct vigil_sink *sk, const struct vigil_ring *r)
{
	struct vigil_sink_stream *s = (struct vigil_sink_stream *)sk;

	(void)r;
	if (s->said_path)
		vlog_info("stream %s: %llu sends, %llu bytes; zero-copy sends %llu, copied by the kernel %llu",
			  s->url, (unsigned long long)s->tx.sends, (unsigned long long)s->tx.bytes,
			  (unsigned long long)s->tx.zc_sends, (unsigned long long)s->tx.zc_copied);
}

static const struct vigil_sink_ops stream_ops = { .offer = offer, .flush = flush };

int vigil_sink_stream_init(struct vigil_sink_stream *s, const char *url, const char *node_name,
			   int64_t realtime_offset_ns, int ring_fd, int epfd,
			   enum vigil_tx_path want)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	*s = (struct vigil_sink_stream){
		.sink = { .name = "stream", .ops = &stream_ops },
		.url = url,
		.fd = -1,
		.epfd = epfd,
		.backoff_ms = BACKOFF_MIN_MS,
		.realtime_offset_ns = realtime_offset_ns,
		.want = want,
	};
	snprintf(s->node_name, sizeof(s->node_name), "%s", node_name);
	if ((err = vigil_stream_url(url, &s->socktype, &s->addr, &s->addrlen)))
		return err;
	if (s->socktype != SOCK_STREAM)
		return vlog_err(-EOPNOTSUPP, "--send %s: only tcp:// is supported yet", url);
	if ((err = vigil_boot_id(s->boot_id)))
		return vlog_err(err, "cannot read the boot id");
	if (bpf_obj_get_info_by_fd(ring_fd, &info, &len))
		return vlog_err(-errno, "cannot read the ring's map id");
	s->ring_id = info.id;
	s->ring_size = info.max_entries;
	if ((err = vigil_tx_init(&s->tx, want)))
		return vlog_err(err, "--send %s: cannot set up %s", url, vigil_tx_path_name(want));
	arm(s, s->tx.uring_fd, EPOLL_CTL_ADD);
	return 0;
}

void vigil_sink_stream_free(struct vigil_sink_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	vigil_tx_free(&s->tx);
	vbuf_free(&s->hello);
}
