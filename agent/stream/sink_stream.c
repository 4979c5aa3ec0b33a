// SPDX-License-Identifier: GPL-2.0
/* See sink_stream.h. Everything here is non-blocking: a slow or absent
 * collector never holds up the pump, the other sinks or BPF. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "log.h"
#include "stream/sink_stream.h"
#include "stream.h"

#define SEND_MAX (4u << 20)	/* bytes per send: many records, bounded */
#define SPOOL_READ (256u << 10)	/* bytes read back from the spool per send */
/* Fewer bytes than this wait a little for more: each send costs a syscall
 * and wakes the collector, each ack wakes us, and a tiny send per wakeup
 * would cost more than the events. Held at most HOLD_S, or until the pump's
 * next poll, whichever comes later (the poll bounds the latency anyway). */
#define SEND_MIN (64u << 10)
#define HOLD_S 0.005
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define HANDSHAKE_S 10		/* a TLS handshake that takes longer is cut */
/* A TLS 1.3 server refuses a client's certificate only after the client's
 * handshake is done. The hello, and so every record, waits until the
 * collector accepted us: it sent its ticket (a collector that accepts sends
 * one at once), or this long passed without a refusal. A collector that
 * refuses us sends its alert and closes; had our hello arrived, it would
 * close with our bytes unread, which resets the connection and can discard
 * the alert still queued: the log would say "reset" instead of why. */
#define TLS_PROVEN_S 2.0
/* A connection whose hello was refused (a name the certificate does not
 * carry, a stream bound elsewhere) ends at once, often with no ack: it is a
 * failure like a refused handshake, and backs off the same way. One that
 * got an ack, or stayed up this long, was a working connection. */
#define UP_PROVEN_S (BACKOFF_MAX_MS / 1000.0)

static void watch(struct vigil_sink_stream *s, int fd)
{
	/* Edge-triggered: a socket at EOF or a completion nobody waits for
	 * must not keep the pump awake; offer() reads both to the end. */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = fd };

	if (s->epfd >= 0 && fd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The collector takes our stream: a failure from now on starts a new
 * episode, with backoff from the start. */
static void proven(struct vigil_sink_stream *s)
{
	s->proven = true;
	s->failures = 0;
	s->backoff_ms = BACKOFF_MIN_MS;
	s->said_up = false;
}

static void down(struct vigil_sink_stream *s, int err, const char *what)
{
	char line[sizeof(s->said)];

	if (s->state == STREAM_UP && !s->proven && vigil_stream_now() - s->up_at >= UP_PROVEN_S)
		proven(s);
	/* Once per episode and reason: a retry that fails the same way says
	 * nothing, one that fails another way (the collector back, but with
	 * a certificate we refuse) says so. */
	snprintf(line, sizeof(line), "%s (%s)", what, strerror(-err));
	if (!s->failures++ || strcmp(line, s->said))
		vlog_info("stream %s: %s; retrying, events wait in the ring", s->o.url, line);
	snprintf(s->said, sizeof(s->said), "%s", line);
	if (s->tx.ssl)
		vigil_tls_close(&s->tx);
	if (s->fd >= 0) {
		/* Abortive: what the socket still queues is sent again from
		 * the acknowledged offset anyway, and an io_uring send blocked
		 * on a collector that does not read ends now, so the kernel
		 * lets go of the ring pages it was lent. */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		shutdown(s->fd, SHUT_RDWR);
		if (!vigil_tx_disconnect(&s->tx))
			close(s->fd);	/* also leaves the pump's epoll */
	}
	s->fd = -1;
	s->state = STREAM_DOWN;
	s->ack_len = 0;
	s->next_try = vigil_stream_now() + s->backoff_ms / 1000.0;
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

static bool in_spool(const struct vigil_sink_stream *s, uint64_t pos)
{
	return s->spool.nseg && pos >= vigil_spool_first(&s->spool) &&
	       pos < vigil_spool_end(&s->spool);
}

/* Where the stream restarts: the acknowledged offset, unless what follows it
 * was dropped (spool past its bound) or is gone from the ring. */
static uint64_t resume_at(struct vigil_sink_stream *s, const struct vigil_ring *r)
{
	uint64_t at = s->acked, tail = vigil_ring_consumer(r);

	if (s->spool.nseg && at < vigil_spool_first(&s->spool))
		at = vigil_spool_first(&s->spool);
	if (!in_spool(s, at) && at < tail && (!s->spool.nseg || at >= vigil_spool_end(&s->spool)))
		at = tail;
	if (s->spool.nseg && !in_spool(s, at) && at < vigil_spool_end(&s->spool))
		at = vigil_spool_end(&s->spool);
	if (at != s->acked) {
		s->skipped += at - s->acked;
		vlog_info("stream %s: %llu bytes after the acknowledged offset are gone (dropped by "
			  "the spool or released from the ring): resuming at %llu", s->o.url,
			  (unsigned long long)(at - s->acked), (unsigned long long)at);
	}
	return at;
}

/* The hello went out: the log says so once per episode, with the path
 * that runs. Backoff starts over only once the collector proves it takes
 * the stream (proven()). */
static void connected(struct vigil_sink_stream *s)
{
	char tls[128] = "";

	s->proven = false;
	s->up_at = vigil_stream_now();
	if (s->said_path && (!s->failures || s->said_up))
		return;
	if (s->tls_on)
		vigil_tls_describe(&s->tx, tls, sizeof(tls));
	vlog_info("stream %s: connected, sending from ring position %llu with %s%s%s%s", s->o.url,
		  (unsigned long long)s->acked,
		  !s->tls_on ? vigil_tx_path_name(s->tx.path)
		  : s->ktls ? "tls: kernel TLS (send from the ring)"
			    : "tls: user-space TLS (SSL_write from the ring)",
		  *tls ? " (" : "", tls, *tls ? ")" : "");
	s->said_path = true;
	s->said_up = true;
}

void vigil_sink_stream_describe(struct vigil_sink_stream *s, struct vigil_buf *out)
{
	static const char *const states[] = { "down", "connecting", "handshake",
					       "handshake (awaiting acceptance)", "up" };
	char tls[128] = "";

	if (s->socktype == SOCK_DGRAM) {
		vbuf_printf(out, "stream %s: datagrams, %llu send errors\n", s->o.url,
			    (unsigned long long)s->udp_errors);
		return;
	}
	if (s->tls_on && s->state == STREAM_UP)
		vigil_tls_describe(&s->tx, tls, sizeof(tls));
	vbuf_printf(out, "stream %s: %s, %s%s%s%s, acknowledged to ring position %llu, "
		    "%llu connects\n", s->o.url, states[s->state],
		    !s->tls_on ? vigil_tx_path_name(s->tx.path)
		    : s->ktls ? "kernel TLS (send from the ring)"
			      : "user-space TLS (SSL_write from the ring)",
		    *tls ? " (" : "", tls, *tls ? ")" : "", (unsigned long long)s->acked,
		    (unsigned long long)s->connects);
}

/* Say hello, starting where the collector last acknowledged. */
static void say_hello(struct vigil_sink_stream *s, const struct vigil_ring *r)
{
	uint64_t at = resume_at(s, r);
	ssize_t n;

	s->hello.len = 0;
	vigil_stream_hello_build(&s->hello, s->o.node_name, s->boot_id, s->ring_id,
				 s->ring_size, at, s->o.realtime_offset_ns);
	vigil_tx_connect(&s->tx, s->fd, at);
	if (s->tx.ssl) {
		/* Through the session, also under kernel TLS (OpenSSL knows
		 * the socket's mode). */
		uint64_t sends = s->tx.sends, bytes = s->tx.bytes;

		n = vigil_tls_send(&s->tx, s->hello.p, s->hello.len) ? -1 : (ssize_t)(s->tx.sent - at);
		s->tx.sent = at;	/* the hello is not ring bytes */
		s->tx.sends = sends;
		s->tx.bytes = bytes;
		if (n != (ssize_t)s->hello.len)
			errno = EAGAIN;
	} else {
		n = send(s->fd, s->hello.p, s->hello.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	if (n != (ssize_t)s->hello.len)
		return down(s, n < 0 ? -errno : -EAGAIN, "cannot send the hello");
	s->acked = at;
	s->state = STREAM_UP;
	s->connects++;
	watch(s, s->fd);
	connected(s);	/* TLS: accepted before the hello */
}

/* Connected: TLS first on tls://, else the hello. */
static void finish_connect(struct vigil_sink_stream *s, const struct vigil_ring *r)
{
	struct pollfd p = { .fd = s->fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	if (poll(&p, 1, 0) <= 0)
		return;	/* still connecting */
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err)
		return down(s, -(err ? err : errno), "cannot connect");
	if (s->tls_on) {
		if ((err = vigil_tls_start(&s->tls, &s->tx, s->fd)))
			return down(s, err, "cannot start TLS");
		s->state = STREAM_HANDSHAKE;
		s->deadline = vigil_stream_now() + HANDSHAKE_S;
		watch(s, s->fd);
		return;
	}
	/* io_uring sends on a blocking socket (its MSG_WAITALL retries);
	 * our own calls pass MSG_DONTWAIT. */
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
	say_hello(s, r);
}

/* tls://: the handshake, on the non-blocking socket; then the ring goes out
 * through kernel TLS when OpenSSL could hand it the keys, else SSL_write. */
static void handshake(struct vigil_sink_stream *s)
{
	int err = vigil_tls_handshake(&s->tls, &s->tx, s->why, sizeof(s->why));

	if (err < 0)
		return down(s, err, s->why);
	if (!err) {
		if (vigil_stream_now() > s->deadline)
			down(s, -ETIMEDOUT, "TLS handshake: the collector did not finish it in time");
		return;
	}
	s->ktls = vigil_tls_ktls_send(&s->tx);
	s->tx.path = s->ktls ? VIGIL_TX_SEND : VIGIL_TX_TLS;
	s->state = STREAM_ACCEPTANCE;
	s->deadline = vigil_stream_now() + TLS_PROVEN_S;
}

/* TLS: the hello once the collector accepted our certificate (TLS_PROVEN_S). */
static void await_acceptance(struct vigil_sink_stream *s, const struct vigil_ring *r)
{
	int err = vigil_tls_accepted(&s->tls, &s->tx, s->why, sizeof(s->why));

	if (err < 0)
		return down(s, err, s->why);
	if (err || vigil_stream_now() >= s->deadline)
		say_hello(s, r);
}

/* recv(), or SSL_read on tls://: bytes, 0 at the end, or -errno. */
static ssize_t receive(struct vigil_sink_stream *s, void *buf, size_t len)
{
	ssize_t n;

	if (s->tx.ssl)
		return vigil_tls_read(&s->tls, &s->tx, buf, len, s->why, sizeof(s->why));
	n = recv(s->fd, buf, len, MSG_DONTWAIT);
	return n < 0 ? -errno : n;
}

/* Acks from the collector: hostile bytes like any other. */
static int read_acks(struct vigil_sink_stream *s)
{
	for (;;) {
		struct vigil_stream_ack a;
		const char *refused;
		ssize_t n = receive(s, s->ack + s->ack_len, sizeof(s->ack) - s->ack_len);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return n == -EAGAIN || n == -EINTR ? 0 : n;
		s->ack_len += n;
		if (s->ack_len < sizeof(a))
			continue;
		s->ack_len = 0;
		memcpy(&a, s->ack, sizeof(a));
		if ((refused = vigil_stream_refusal_text(&a))) {
			snprintf(s->why, sizeof(s->why), "the collector refused our hello: %s",
				 refused);
			return -ECONNREFUSED;
		}
		/* The collector may read, and ack, part of a send whose
		 * completion we have not reaped yet. */
		if (vigil_stream_ack_check(&a) || a.offset < s->acked ||
		    a.offset > (s->tx.in_flight ? s->tx.in_flight_end : s->tx.sent))
			return -EPROTO;
		s->acked = a.offset;
		vigil_spool_trim(&s->spool, s->acked);
		if (!s->proven)
			proven(s);
	}
}

/* End of the committed records from pos: the range we may send as it lies. */
static uint64_t committed_end(const struct vigil_ring *r, uint64_t pos, uint64_t end,
			      uint64_t max)
{
	uint64_t start = pos;

	while (pos < end && pos - start < max) {
		uint32_t len = vigil_ring_rec_len(r, pos);

		if (len & VIGIL_RB_BUSY)
			break;
		pos += vigil_ring_rec_span(len);
	}
	return pos;
}

/* The ring position this sink still needs: what the collector may still
 * ask for, less what the spool holds. */
static uint64_t needed_from(const struct vigil_sink_stream *s)
{
	uint64_t need = s->acked, spooled = s->spool.nseg ? vigil_spool_end(&s->spool) : 0;

	return spooled > need ? spooled : need;
}

/* Never past a page the kernel may still read (a zero-copy send not yet
 * notified, of this connection or one already dropped), whatever the spool
 * holds: a page released to BPF would be overwritten under the send. */
static uint64_t held_from(const struct vigil_sink_stream *s, int64_t released)
{
	uint64_t need = needed_from(s);

	return (uint64_t)released < need ? (uint64_t)released : need;
}

/* Degraded mode: the backlog past the high-water mark goes to the spool so
 * the ring is free for the others and BPF never drops for this sink. */
static void spill(struct vigil_sink_stream *s, const struct vigil_ring *r, uint64_t end)
{
	uint64_t from = s->spool.nseg ? vigil_spool_end(&s->spool) : s->acked;
	uint64_t lost = s->spool.dropped_records;

	if (end - s->sink.pos <= s->o.high_water)
		return;
	if (from < vigil_ring_consumer(r))
		return;	/* cannot happen: the ring holds what we need */
	while (from < end) {
		uint64_t to = committed_end(r, from, end, SEND_MAX);

		if (to == from || vigil_spool_append(&s->spool, r, from, to))
			break;
		from = to;
	}
	if (s->spool.dropped_records != lost)
		vlog_info("stream %s: spool full, %llu records dropped so far (%llu bytes)",
			  s->o.url, (unsigned long long)s->spool.dropped_records,
			  (unsigned long long)s->spool.dropped_bytes);
}

/* Sends the next range: from the spool while the stream is behind its end,
 * then from the ring as it lies. */
static int send_next(struct vigil_sink_stream *s, const struct vigil_ring *r, uint64_t end)
{
	uint64_t cend;

	if (!in_spool(s, s->tx.sent) && s->tx.sent < vigil_ring_consumer(r))
		return -ESTALE;	/* the spool dropped what was due next: a new hello */
	if (in_spool(s, s->tx.sent)) {
		ssize_t n;

		if (s->tx.in_flight)
			return 0;
		n = vigil_spool_read(&s->spool, s->tx.sent, s->spool_buf, SPOOL_READ);
		if (n <= 0)
			return vlog_err(n < 0 ? (int)-errno : -EIO, "cannot read the spool");
		return vigil_tx_send_copy(&s->tx, s->spool_buf, n);
	}
	/* Records stay committed until released: the scan goes on from where
	 * it stopped instead of walking the held records again. */
	if (s->scan < s->tx.sent)
		s->scan = s->tx.sent;
	s->scan = committed_end(r, s->scan, end, SEND_MAX - (s->scan - s->tx.sent));
	cend = s->scan;
	if (cend == s->tx.sent)
		return 0;
	if (cend - s->tx.sent < SEND_MIN) {
		double now = vigil_stream_now();

		if (!s->hold_since)
			s->hold_since = now;
		if (now - s->hold_since < HOLD_S)
			return 0;
	}
	s->hold_since = 0;
	return vigil_tx_send(&s->tx, vigil_ring_at(r, s->tx.sent), cend - s->tx.sent);
}

static int offer(struct vigil_sink *sk, const struct vigil_ring *r, uint64_t end)
{
	struct vigil_sink_stream *s = (struct vigil_sink_stream *)sk;
	int64_t released;
	int err;

	if (!s->started) {
		s->started = true;
		s->acked = s->spool.nseg ? vigil_spool_first(&s->spool) : sk->pos;
	}
	if (s->tls_on && s->o.hups && *s->o.hups != s->hups_seen) {
		s->hups_seen = *s->o.hups;
		if (vigil_tls_reload(&s->tls, &s->o.tls, s->o.url))
			vlog_info("stream %s: SIGHUP: the TLS files are refused, the ones read before "
				  "stay in force", s->o.url);
		else
			vlog_info("stream %s: SIGHUP: --tls-cert, --tls-key and --tls-ca read again: "
				  "the next connection uses them", s->o.url);
	}
	if (s->state == STREAM_DOWN && vigil_stream_now() >= s->next_try &&
	    vigil_tx_can_connect(&s->tx))
		start_connect(s);
	if (s->state == STREAM_CONNECTING)
		finish_connect(s, r);
	if (s->state == STREAM_HANDSHAKE)
		handshake(s);
	if (s->state == STREAM_ACCEPTANCE)
		await_acceptance(s, r);
	if (s->state == STREAM_UP) {
		s->why[0] = 0;
		if ((err = read_acks(s)))
			down(s, err, s->why[0] ? s->why	/* TLS said why */
				     : err == -EPROTO ? "bad ack from the collector" : "connection lost");
		else if ((released = vigil_tx_poll(&s->tx)) < 0 || (err = send_next(s, r, end)) ||
			 (released = vigil_tx_poll(&s->tx)) < 0)
			down(s, released < 0 ? released : err,
			     err == -ESTALE ? "the spool dropped what was due next" : "send failed");
	}
	if (s->state == STREAM_UP && s->o.path == VIGIL_TX_AUTO && vigil_tx_copied_anyway(&s->tx))
		vlog_info("stream %s: the kernel copied every zero-copy send to this destination "
			  "(loopback does): sending with plain send() instead", s->o.url);
	/* Also while down: a dropped connection's zero-copy sends are
	 * notified late. Their errors are no longer ours. */
	if ((released = vigil_tx_poll(&s->tx)) < 0) {
		down(s, (int)released, "send failed");
		if ((released = vigil_tx_poll(&s->tx)) < 0)
			return 0;	/* unknown: release nothing more */
	}
	sk->pos = held_from(s, released);
	if (s->spooling) {
		spill(s, r, end);
		vigil_spool_tick(&s->spool);
		sk->pos = held_from(s, released);
		/* The spool has the backlog but a send to a collector that
		 * does not read still holds the ring's pages, and the ring
		 * fills: drop the connection so the kernel lets go of them;
		 * the next one sends from the spool, which is a copy. */
		if (s->state == STREAM_UP && sk->pos < needed_from(s) &&
		    end - sk->pos > s->o.high_water)
			down(s, -ETIMEDOUT, "the collector is not reading and a zero-copy send "
					    "holds the ring");
	}
	return 0;
}

/* The stream's summary, once, when it ends (a flush may run more than once
 * at stop: before and after the final loss record). */
static void log_summary(const struct vigil_sink_stream *s)
{
	if (s->socktype == SOCK_DGRAM)
		return vigil_sink_stream_udp_summary(s);
	vlog_info("stream %s: %llu sends, %llu bytes; zero-copy sends %llu, copied by the kernel %llu; "
		  "spooled %llu bytes, dropped %llu records (%llu bytes); spool syncs %llu (%.1f ms); "
		  "skipped %llu bytes gone before they were sent",
		  s->o.url, (unsigned long long)s->tx.sends, (unsigned long long)s->tx.bytes,
		  (unsigned long long)s->tx.zc_sends, (unsigned long long)s->tx.zc_copied,
		  (unsigned long long)s->spool.spilled, (unsigned long long)s->spool.dropped_records,
		  (unsigned long long)s->spool.dropped_bytes, (unsigned long long)s->spool.syncs,
		  s->spool.sync_s * 1000, (unsigned long long)s->skipped);
}

static const struct vigil_sink_ops stream_ops = { .offer = offer };

int vigil_sink_stream_init(struct vigil_sink_stream *s, const struct vigil_stream_opts *o,
			   int ring_fd, int epfd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	*s = (struct vigil_sink_stream){
		.sink = { .name = "stream", .ops = &stream_ops },
		.o = *o,
		.fd = -1,
		.epfd = epfd,
		.backoff_ms = BACKOFF_MIN_MS,
	};
	if ((err = vigil_stream_url(o->url, &s->socktype, &s->addr, &s->addrlen)))
		return err;
	if ((err = vigil_boot_id(s->boot_id)))
		return vlog_err(err, "cannot read the boot id");
	if (bpf_obj_get_info_by_fd(ring_fd, &info, &len))
		return vlog_err(-errno, "cannot read the ring's map id");
	s->ring_id = info.id;
	s->ring_size = info.max_entries;
	if (s->socktype == SOCK_DGRAM)
		return vigil_sink_stream_udp_init(s);
	if (vigil_tls_url(o->url)) {
		if ((err = vigil_tls_init(&s->tls, &o->tls, o->url)))
			return err;
		s->tls_on = true;
		s->hups_seen = o->hups ? *o->hups : 0;
	}
	if (!s->o.high_water || s->o.high_water > s->ring_size / 2)
		s->o.high_water = s->ring_size / 2;
	if (o->spool_dir) {
		if ((err = vigil_spool_open(&s->spool, o->spool_dir, s->ring_id, o->spool_max)))
			return err;
		s->spool_buf = malloc(SPOOL_READ);
		if (!s->spool_buf)
			return -ENOMEM;
		s->spooling = true;
	}
	/* tls://: the path is chosen after each handshake (kernel TLS or
	 * SSL_write); no io_uring. */
	if ((err = vigil_tx_init(&s->tx, s->tls_on ? VIGIL_TX_SEND : o->path)))
		return vlog_err(err, "--send %s: cannot set up %s", o->url, vigil_tx_path_name(o->path));
	watch(s, s->tx.uring_fd);
	return 0;
}

void vigil_sink_stream_free(struct vigil_sink_stream *s)
{
	log_summary(s);
	if (s->tx.ssl)
		vigil_tls_close(&s->tx);
	vigil_tls_free(&s->tls);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	vigil_tx_free(&s->tx);
	vigil_spool_close(&s->spool);
	free(s->spool_buf);
	vbuf_free(&s->hello);
}
