// SPDX-License-Identifier: GPL-2.0
/*
 * The stream benchmark's harness (run by bench/stream.sh, built there: it
 * links the agent's own pump and stream sink, which the programs in bench/ do
 * not). One BPF producer (bench/bpf/producer.bpf.c) for every consumer:
 *
 *   a  ceiling: walks record headers and advances the consumer position
 *   b  libbpf ring_buffer__poll, a callback that write()s each event to a socket
 *   c  libbpf ring_buffer__poll, per-event decode and JSON encode, buffered
 *      write to a socket (the usual agent path)
 *   d  vigil's pump and stream sink, io_uring SEND_ZC from the ring's pages,
 *      to a reader that acknowledges what it read as the collector does
 *   e  the same sink with plain send() of the same ranges
 *   f  the same sink with its default path (auto)
 *   g  f with another wait policy for the pump: the ring registered
 *      edge-triggered (vigild's pump registers it level-triggered, so a ring
 *      holding unacknowledged records keeps epoll ready and the pump spins),
 *      and a sleep until a wakeup or the poll timer unless a batch (256 KiB)
 *      was waiting
 *   t  f over tls:// (mutual TLS 1.3): kernel TLS where the kernel has it,
 *      else SSL_write from the ring's pages; the reader is a TLS server
 *      (certificates in $BENCH_TLS_DIR: ca.pem, server.pem/key, client.pem/key)
 *
 * Usage: consumers MODE SIZE SECONDS [RATE [WAKEUP]]
 *   SIZE 64 or 512; RATE events/s offered (0: as fast as the consumer
 *   takes them: the producer waits while the ring is half full, so the
 *   figure is the consumer's lossless rate); WAKEUP "nowake" (BPF_RB_NO_WAKEUP
 *   with a forced wakeup past 1 MiB, vigil's policy) or "default".
 * Prints one line of key=value figures. Loss is proven, not assumed: the
 * BPF side counts failed reserves, and the events taken (or, for d-f, read
 * and checked in sequence by the reader) must equal the events produced.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <openssl/ssl.h>
#include <vigil/events.h>
#include "bench_producer.skel.h"
#include "json.h"
#include "core/pump.h"
#include "ring.h"
#include "stream/sink_stream.h"
#include "stream.h"

#define BURST 128
#define RING_SIZE (16u << 20)

static struct {
	char mode;
	int big;
	double secs, rate, until;	/* the producer stops at until */
	struct bench_producer_bpf *skel;
	struct vigil_ring ring;
	int port, lfd;
	atomic_int stop_producer, stop_reader, producer_done;
	int poll_ms;			/* as vigild's --poll-ms, for every consumer */
	atomic_ullong taken;		/* events the consumer took (a-c) */
	atomic_ullong read_events, read_bytes, seq_errors;	/* by the reader */
	uint64_t calls;
	SSL_CTX *tls;			/* t: the reader's server context */
	char tls_dir[200];
} B;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *producer(void *arg)
{
	double start = vigil_stream_now();

	(void)arg;
	while (!B.stop_producer && vigil_stream_now() < B.until) {
		if (B.rate > 0) {
			double due = start + (double)B.calls * BURST / B.rate;
			double now = vigil_stream_now();

			if (due > now) {
				struct timespec d = { 0, (long)((due - now) * 1e9) };

				nanosleep(&d, NULL);
			}
		} else if (vigil_ring_producer(&B.ring) - vigil_ring_consumer(&B.ring) > RING_SIZE / 2) {
			sched_yield();	/* backpressure: the figure is the lossless rate */
			continue;
		}
		syscall(SYS_getppid);
		B.calls++;
	}
	B.producer_done = 1;
	return NULL;
}

/* The loopback peer: drains the socket; for d-f reads the stream as a
 * collector does (hello, records, sequence check) and acknowledges. */
static void *reader(void *arg)
{
	size_t cap = 4u << 20, len = 0, hello = 0;
	uint8_t *buf = malloc(cap);
	uint64_t offset = 0, last_seq = 0;
	bool stream = (intptr_t)arg;
	int fd = accept(B.lfd, NULL, NULL);
	struct timeval tv = { 0, 100000 };
	SSL *ssl = NULL;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (B.tls && fd >= 0) {
		ssl = SSL_new(B.tls);
		SSL_set_fd(ssl, fd);
		while (SSL_accept(ssl) != 1) {
			if (SSL_get_error(ssl, -1) != SSL_ERROR_WANT_READ || B.stop_reader) {
				fprintf(stderr, "reader: TLS handshake failed\n");
				close(fd);
				fd = -1;
				break;
			}
		}
	}
	while (fd >= 0) {
		ssize_t n;
		size_t p = 0;

		if (ssl) {
			/* Take every record that is there before acknowledging,
			 * as the collector does (it reads until WANT_READ): one
			 * ack per drain, not per 16 KiB record. */
			char c;

			n = 0;
			do {
				int r = SSL_read(ssl, buf + len + n, cap - len - n);

				if (r <= 0) {
					if (!n && SSL_get_error(ssl, r) == SSL_ERROR_WANT_READ)
						n = -1, errno = EAGAIN;
					break;
				}
				n += r;
			} while (cap - len - n > 0 && (SSL_has_pending(ssl) ||
				 recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0));
		} else {
			n = recv(fd, buf + len, cap - len, 0);
		}
		if (n <= 0) {
			if (n < 0 && errno == EAGAIN && !B.stop_reader)
				continue;
			break;
		}
		B.read_bytes += n;
		if (!stream)
			continue;
		len += n;
		if (!hello) {
			struct vigil_stream_hello h;

			if (len < sizeof(h))
				continue;
			memcpy(&h, buf, sizeof(h));
			hello = h.hello_len;
			offset = h.start_offset;
			p = hello;
		}
		while (len - p >= 8) {
			uint32_t l;
			uint64_t span;
			struct vigil_hdr hd;

			memcpy(&l, buf + p, 4);
			span = vigil_ring_rec_span(l);
			if (len - p < span)
				break;
			if (!(l & VIGIL_RB_DISCARD)) {
				memcpy(&hd, buf + p + 8, sizeof(hd));
				if (hd.seq != last_seq + 1)
					B.seq_errors++;
				last_seq = hd.seq;
				B.read_events++;
			}
			p += span;
			offset += span;
		}
		memmove(buf, buf + p, len - p);
		len -= p;
		if (p) {
			struct vigil_stream_ack a;

			vigil_stream_ack_build(&a, offset);
			if (ssl)
				SSL_write(ssl, &a, sizeof(a));
			else
				send(fd, &a, sizeof(a), MSG_NOSIGNAL);
		}
	}
	SSL_free(ssl);
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int connect_peer(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(B.port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	return fd;
}

/* a: only advances the consumer position, stopping at the first record
 * still being written. It releases in batches of CEILING_BATCH bytes, as
 * vigil's sinks do: a release per record would make the producer's CPU
 * fetch the consumer position's cache line at every reserve, and the
 * ceiling would measure that ping-pong, not the ring. */
#define CEILING_BATCH (256u << 10)

static void run_ceiling(double until)
{
	while (!B.producer_done || B.taken < B.skel->bss->bench_seq) {
		uint64_t start = vigil_ring_consumer(&B.ring), pos = start;
		uint64_t end = vigil_ring_producer(&B.ring), n = 0;

		while (pos < end) {
			uint32_t l = vigil_ring_rec_len(&B.ring, pos);

			if (l & VIGIL_RB_BUSY)
				break;
			pos += vigil_ring_rec_span(l);
			n++;
		}
		if (!n || (pos - start < CEILING_BATCH && !B.producer_done)) {
			/* A short sleep, not a spin: a spinning vCPU slows
			 * the producer's (hypervisor siblings). */
			usleep(20);
			if (vigil_stream_now() > until + 5)
				break;
			continue;
		}
		vigil_ring_release(&B.ring, pos);
		B.taken += n;
	}
}

struct cb_ctx {
	int fd;
	struct vigil_buf out;
};

static int cb_write(void *ctx, void *data, size_t len)
{
	struct cb_ctx *c = ctx;

	B.taken++;
	return write(c->fd, data, len) < 0 ? -errno : 0;
}

static int cb_json(void *ctx, void *data, size_t len)
{
	struct cb_ctx *c = ctx;
	const struct vigil_hdr *h = data;
	struct jw w;

	B.taken++;
	jw_begin(&w, &c->out);
	jw_obj(&w, NULL);
	jw_obj(&w, "bench");
	jw_u64(&w, "type", h->type);
	jw_u64(&w, "size", h->size);
	jw_u64(&w, "cpu", h->cpu);
	/* The payload (text), as the agent writes arguments: c ships what
	 * the event holds, as vigil's paths do. */
	if (len > sizeof(*h))
		jw_str(&w, "data", (const char *)(h + 1), len - sizeof(*h));
	jw_end(&w);
	jw_u64(&w, "seq", h->seq);
	jw_u64(&w, "ktime", h->ktime);
	jw_end(&w);
	vbuf_putc(&c->out, '\n');
	if (c->out.len >= 65536) {
		if (write(c->fd, c->out.p, c->out.len) < 0)
			return -errno;
		c->out.len = 0;
	}
	return 0;
}

static void run_libbpf(double until, ring_buffer_sample_fn fn)
{
	struct cb_ctx c = { .fd = connect_peer() };
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(B.skel->maps.bench_ring), fn, &c, NULL);

	while (rb && c.fd >= 0 && (!B.producer_done || B.taken < B.skel->bss->bench_seq)) {
		/* Under BPF_RB_NO_WAKEUP epoll reports the ring only past the
		 * forced-wakeup threshold: on the poll timer, take what is
		 * there, as vigil's pump does. */
		if (ring_buffer__poll(rb, B.poll_ms) == 0)
			ring_buffer__consume(rb);
		if (vigil_stream_now() > until + 5)
			break;
	}
	if (c.out.len && write(c.fd, c.out.p, c.out.len) < 0)
		perror("write");
	ring_buffer__free(rb);
	vbuf_free(&c.out);
	close(c.fd);
}

#define BATCH_WAIT_BYTES (256u << 10)

static void run_vigil(double until, enum vigil_tx_path path, bool batch_wait)
{
	char url[64];
	struct vigil_pump pump;
	struct vigil_sink_stream s;
	struct vigil_stream_opts o = { .url = url, .node_name = "bench", .path = path };
	int ring_fd = bpf_map__fd(B.skel->maps.bench_ring);
	char cert[256], key[256], ca[256];

	snprintf(url, sizeof(url), "%s://127.0.0.1:%d", B.tls ? "tls" : "tcp", B.port);
	if (B.tls) {
		snprintf(cert, sizeof(cert), "%s/client.pem", B.tls_dir);
		snprintf(key, sizeof(key), "%s/client.key", B.tls_dir);
		snprintf(ca, sizeof(ca), "%s/ca.pem", B.tls_dir);
		o.tls = (struct vigil_tls_opts){ .cert = cert, .key = key, .ca = ca };
	}
	int ep;

	if (vigil_pump_init(&pump, ring_fd, B.poll_ms))
		exit(1);
	ep = pump.epfd;
	if (batch_wait) {
		/* g: the ring edge-triggered, so a ring that holds records a
		 * sink waits on (unacknowledged) does not keep epoll ready. */
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

		ep = epoll_create1(EPOLL_CLOEXEC);
		epoll_ctl(ep, EPOLL_CTL_ADD, ring_fd, &ev);
	}
	if (vigil_sink_stream_init(&s, &o, ring_fd, ep))
		exit(1);
	vigil_pump_add(&pump, &s.sink);
	while (!B.producer_done || B.read_events < B.skel->bss->bench_seq) {
		int64_t released = vigil_pump_once(&pump);

		if (vigil_stream_now() > until + 5)
			break;
		if (!batch_wait) {
			vigil_pump_wait(&pump, released > 0);
		} else if (released < BATCH_WAIT_BYTES) {
			/* g: a policy for the pump, measured here: sleep unless a
			 * batch's worth was there, so events gather between polls. */
			struct epoll_event ev;

			epoll_wait(ep, &ev, 1, B.poll_ms);
		}
	}
	vigil_pump_flush(&pump);
	fprintf(stderr, "path %s%s: sends %llu, zero-copy %llu, copied by the kernel %llu\n",
		vigil_tx_path_name(s.tx.path), s.tls_on ? (s.ktls ? " (kernel TLS)" : " (user-space TLS)") : "", (unsigned long long)s.tx.sends,
		(unsigned long long)s.tx.zc_sends, (unsigned long long)s.tx.zc_copied);
	vigil_sink_stream_free(&s);
	vigil_pump_close(&pump);
	if (ep != pump.epfd)
		close(ep);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	pthread_t prod, rd;
	bool nowake = argc < 6 || strcmp(argv[5], "default");
	double t0, c0, wall, cpu;
	uint64_t produced, got, full;
	int one = 1;

	if (argc < 4) {
		fprintf(stderr, "usage: %s a|b|c|d|e|f|g|t 64|512 SECONDS [RATE [nowake|default]]\n", argv[0]);
		return 2;
	}
	B.mode = argv[1][0];
	B.big = atoi(argv[2]) == 512;
	B.secs = atof(argv[3]);
	B.rate = argc > 4 ? atof(argv[4]) : 0;
	B.poll_ms = getenv("BENCH_POLL_MS") ? atoi(getenv("BENCH_POLL_MS")) : 50;
	signal(SIGPIPE, SIG_IGN);

	B.skel = bench_producer_bpf__open();
	if (!B.skel)
		return 1;
	B.skel->rodata->bench_pid = getpid();
	B.skel->rodata->bench_big = B.big;
	B.skel->rodata->bench_burst = BURST;
	B.skel->rodata->bench_no_wakeup = nowake;
	bpf_map__set_max_entries(B.skel->maps.bench_ring, RING_SIZE);
	if (bench_producer_bpf__load(B.skel) || bench_producer_bpf__attach(B.skel)) {
		fprintf(stderr, "cannot load the producer\n");
		return 1;
	}
	if (vigil_ring_open(&B.ring, bpf_map__fd(B.skel->maps.bench_ring)))
		return 1;

	B.lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(B.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(B.lfd, (struct sockaddr *)&a, sizeof(a)) || listen(B.lfd, 1) ||
	    getsockname(B.lfd, (struct sockaddr *)&a, &al))
		return 1;
	B.port = ntohs(a.sin_port);
	if (B.mode == 't') {
		char cert[256], key[256], ca[256];

		snprintf(B.tls_dir, sizeof(B.tls_dir), "%s",
			 getenv("BENCH_TLS_DIR") ? getenv("BENCH_TLS_DIR") : ".");
		snprintf(cert, sizeof(cert), "%s/server.pem", B.tls_dir);
		snprintf(key, sizeof(key), "%s/server.key", B.tls_dir);
		snprintf(ca, sizeof(ca), "%s/ca.pem", B.tls_dir);
		B.tls = SSL_CTX_new(TLS_server_method());
		if (!B.tls || SSL_CTX_use_certificate_chain_file(B.tls, cert) != 1 ||
		    SSL_CTX_use_PrivateKey_file(B.tls, key, SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_load_verify_locations(B.tls, ca, NULL) != 1) {
			fprintf(stderr, "cannot load the TLS certificates from %s\n", B.tls_dir);
			return 1;
		}
		SSL_CTX_set_verify(B.tls, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	}
	if (B.mode != 'a')
		pthread_create(&rd, NULL, reader, (void *)(intptr_t)(B.mode >= 'd'));

	t0 = vigil_stream_now();
	B.until = t0 + B.secs;
	c0 = thread_cpu();
	pthread_create(&prod, NULL, producer, NULL);
	{
		/* The producer stops at `until`; the consumer then takes what is
		 * left, which is part of its work (and of its time). */
		double until = B.until;

		switch (B.mode) {
		case 'a': run_ceiling(until); break;
		case 'b': run_libbpf(until, cb_write); break;
		case 'c': run_libbpf(until, cb_json); break;
		case 'd': run_vigil(until, VIGIL_TX_URING_ZC, false); break;
		case 'e': run_vigil(until, VIGIL_TX_SEND, false); break;
		case 'g': run_vigil(until, VIGIL_TX_AUTO, true); break;
		default: run_vigil(until, VIGIL_TX_AUTO, false); break;
		}
	}
	cpu = thread_cpu() - c0;
	wall = vigil_stream_now() - t0;
	B.stop_producer = 1;
	pthread_join(prod, NULL);
	B.stop_reader = 1;
	if (B.mode != 'a')
		pthread_join(rd, NULL);
	produced = B.skel->bss->bench_seq;
	full = B.skel->bss->bench_full;
	got = B.mode >= 'd' ? B.read_events : B.taken;
	printf("mode=%c size=%d wakeup=%s offered=%.0f produced=%llu taken=%llu ring_full=%llu "
	       "seq_errors=%llu eps=%.0f lossless=%s cpu_pct=%.1f ns_per_event=%.1f\n",
	       B.mode, B.big ? 512 : 64, nowake ? "nowake" : "default", B.rate,
	       (unsigned long long)produced, (unsigned long long)got, (unsigned long long)full,
	       (unsigned long long)B.seq_errors, got / wall,
	       (!full && got >= produced && !B.seq_errors) ? "yes" : "no", 100 * cpu / wall,
	       got ? cpu * 1e9 / got : 0);
	vigil_ring_close(&B.ring);
	bench_producer_bpf__destroy(B.skel);
	return 0;
}
