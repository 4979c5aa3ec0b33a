// SPDX-License-Identifier: GPL-2.0
/*
 * vigil-collector: receives the streams of many agents (docs/stream.md),
 * checks every byte, writes JSON lines with the agent's own encoder
 * (lib/event_format.c), publishes them to NATS JetStream if asked
 * (publish.h), and acknowledges what it has written.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "collector.h"
#include "conn_tls.h"
#include "http_health.h"
#include "listen.h"
#include "metrics.h"
#include "log.h"
#include "opts.h"
#include "sd_notify.h"
#include "options.h"
#include "output_lock.h"
#include "status.h"
#include "version.h"

static volatile sig_atomic_t stop, hup;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

/* SIGHUP: the TLS files are read again (a certificate, key or CA rotated
 * on disk); new connections use them, connections open keep their session
 * (each holds a reference to the context it began with). Files that cannot
 * be read leave the ones in use, and the log says why. */
static void tls_reload(const struct options *o, struct listener *ls, int nls,
		       struct ssl_ctx_st **tls)
{
	struct ssl_ctx_st *ctx;

	if (!*tls)
		return vlog_info("SIGHUP: no tls:// listener, nothing to read again");
	if (!(ctx = conn_tls_ctx(o->tls_cert, o->tls_key, o->tls_ca)))
		return vlog_info("SIGHUP: keeping the TLS certificate, key and CA read before");
	for (int i = 0; i < nls; i++)
		if (ls[i].tls)
			ls[i].tls = ctx;
	conn_tls_ctx_free(*tls);
	*tls = ctx;
	vlog_info("SIGHUP: TLS certificate %s, key %s and CA %s read again: new connections "
		  "use them", o->tls_cert, o->tls_key, o->tls_ca);
}

/* What --metrics serves, rendered on this loop: the HTTP thread only
 * copies it out. */
static void publish_health(const struct collector *c, struct vigil_http *http)
{
	static struct vigil_buf metrics, ready;
	bool ok;

	if (!http)
		return;
	collector_metrics(&metrics, c);
	ok = collector_readiness(&ready, c);
	if (!metrics.oom && !ready.oom)
		vigil_http_publish(http, metrics.p, metrics.len, ok, ready.p);
}

/* While JetStream holds the agents (one message per event), or the batch
 * layout's pipeline is full, the loop waits in vigil_pub_send: health goes
 * on from there (live, not ready), once a second. */
struct hold_ctx {
	const struct collector *c;
	struct vigil_http *http;
	double last;
};

static void on_hold(void *ctx)
{
	struct hold_ctx *h = ctx;
	double now = vigil_stream_now();

	vigil_http_alive(h->http);
	if (now - h->last >= 1) {
		h->last = now;
		publish_health(h->c, h->http);
	}
}

/* Stopping: the lines in JetStream's pipeline get up to --publish-wait for
 * their acks, so that their agents are acknowledged and do not send them
 * again to the next collector. */
static void drain(struct collector *c, double wait)
{
	double end = vigil_stream_now() + wait;
	struct vigil_pub_counts n;

	if (vigil_pub_fd(c->pub) < 0)
		return;
	for (;;) {
		vigil_pub_pump(c->pub);
		collector_acks(c);
		vigil_pub_counts(c->pub, &n);
		if (!n.pending || n.holding || vigil_stream_now() >= end)
			break;
		poll(&(struct pollfd){ .fd = vigil_pub_fd(c->pub), .events = POLLIN }, 1, 50);
	}
}

static void run(struct collector *c, struct listener *ls, int nls, const struct options *o,
		struct ssl_ctx_st **tls, struct vigil_http *http)
{
	struct epoll_event evs[64];
	double last = 0, last_retire = 0;

	while (!stop) {
		if (hup) {
			hup = 0;
			tls_reload(o, ls, nls, tls);
		}
		int n = epoll_wait(c->epfd, evs, 64, collector_listen_resume(c, ls, nls, 500));
		double now;

		for (int i = 0; i < n && !stop; i++) {	/* stopping: no new batch */
			int kind = *(int *)evs[i].data.ptr;

			if (kind == EP_PUB) {
				vigil_pub_pump(c->pub);
				collector_acks(c);
			} else if (kind == EP_LISTEN_TCP) {
				collector_accept(c, evs[i].data.ptr);
			} else if (kind == EP_LISTEN_UDP) {
				collector_udp_readable(c, ((struct listener *)evs[i].data.ptr)->fd);
			} else {
				struct conn *k = evs[i].data.ptr;

				if (k->fd >= 0)
					collector_conn_readable(c, k);
			}
		}
		vigil_pub_pump(c->pub);	/* retries after a backoff */
		collector_acks(c);
		collector_conn_reap(c);
		vigil_http_alive(http);
		now = vigil_stream_now();
		if (now - last >= 0.25) {
			last = now;
			collector_conn_timeouts(c, now);
			collector_conn_reap(c);
		}
		if (now - last_retire >= 1) {
			last_retire = now;
			vigil_commit_retire(&c->commit);
			if (o->status_file)
				collector_status_write(c, ls, nls, o->status_file);
			publish_health(c, http);
		}
	}
}

/* The tables, sized by the options. */
static int alloc_tables(struct collector *c, const struct options *o, bool tls)
{
	c->format = o->format;
	c->max_agents = o->max_agents;
	c->proc_bytes = o->proc_cache_mb << 20;
	c->max_conns = o->max_conns;
	c->hello_timeout = o->hello_timeout;
	c->frame_timeout = o->frame_timeout;
	c->rebind_after = o->rebind_after;
	c->peer_timeout = o->peer_timeout;
	c->max_per_addr = o->max_per_addr;
	c->max_handshakes = o->max_handshakes;
	c->max_handshakes_all = o->max_handshakes_all;
	c->tls = tls;
	c->agents = calloc(c->max_agents, sizeof(*c->agents));
	c->conns = calloc(c->max_conns, sizeof(*c->conns));
	c->dead = calloc(2 * c->max_conns, sizeof(*c->dead));
	c->udp_buf = malloc(VIGIL_STREAM_DGRAM_MAX + 1);
	if (!c->agents || !c->conns || !c->dead || !c->udp_buf)
		return vlog_refuse(-ENOMEM, "cannot allocate tables");
	return 0;
}

/* The export file and its state file (what was written, so that a restart
 * neither loses nor doubles), stdout, or JetStream alone. */
static int open_output(struct collector *c, const struct options *o)
{
	/* At least --max-conns entries: then a new stream always finds one
	 * with no live connection to take the place of. */
	unsigned streams = c->max_agents > c->max_conns ? c->max_agents : c->max_conns;
	int err;

	if (!o->export_file) {
		if (!o->pub.urls)
			vigil_export_fd(&c->out, STDOUT_FILENO);
		/* No state file, but the same table: it holds the bindings. */
		err = vigil_commit_init(&c->commit, streams, o->forget_after);
		if (err)
			return vlog_err(err, "cannot allocate tables");
		goto live;
	}
	if ((err = collector_output_lock(o->export_file)) < 0)
		return err;	/* its descriptor stays open, and locked, until exit */
	err = vigil_export_open(&c->out, o->export_file, o->max_mb << 20, o->backups);
	if (err)
		return vlog_err(err, "cannot open export file %s", o->export_file);
	c->out.sync = o->fsync;
	err = vigil_commit_open(&c->commit, o->export_file, c->out.fd, streams, c->max_agents,
				o->forget_after);
	if (err)
		return err;
	if (c->commit.gen && c->out.size > c->commit.export_size)
		c->out.size = c->commit.export_size;	/* cut back at open */
live:
	c->commit.live = collector_conn_live;
	c->commit.live_ctx = c;
	return 0;
}

static int start(struct collector *c, const struct options *o, struct listener *ls,
		 struct ssl_ctx_st *tls)
{
	int err;

	if ((err = alloc_tables(c, o, tls != NULL)) || (err = open_output(c, o)))
		return err;
	if (o->pub.urls && (err = vigil_pub_open(&c->pub, &o->pub)))
		return err;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return vlog_err(-errno, "epoll");
	c->pub_kind = EP_PUB;
	if (vigil_pub_fd(c->pub) >= 0 &&
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, vigil_pub_fd(c->pub),
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &c->pub_kind }))
		return vlog_err(-errno, "epoll");
	for (unsigned i = 0; i < o->nlisten; i++)
		if ((err = collector_listen(c, o->listen[i], tls, &ls[i])))
			return err;
	return 0;
}

/* Every refusal and eviction, counted, for the operator. */
static void summarise(const struct collector *c, const struct listener *ls, unsigned nls)
{
	uint64_t pauses = 0, accept_refused = 0;

	for (unsigned i = 0; i < nls; i++) {
		pauses += ls[i].pauses;
		accept_refused += ls[i].refused;
	}
	vlog_info("stopping: %llu connections closed for bad input, %llu refused (%llu TLS "
		  "handshakes past --max-handshakes-per-addr, %llu past --max-handshakes; %llu "
		  "started, %llu of them by addresses seen before); "
		  "accept paused %llu times (%llu attempts out of descriptors or memory); "
		  "%llu datagrams, %llu bad, %llu from agents not yet known",
		  (unsigned long long)c->closed_hostile, (unsigned long long)c->refused,
		  (unsigned long long)c->handshakes_refused,
		  (unsigned long long)c->handshakes_refused_all,
		  (unsigned long long)c->handshakes_started,
		  (unsigned long long)c->handshakes_known,
		  (unsigned long long)pauses, (unsigned long long)accept_refused,
		  (unsigned long long)c->udp_datagrams, (unsigned long long)c->udp_bad,
		  (unsigned long long)c->udp_unknown);
	vlog_info("%llu connections evicted to make room; %llu stream offsets forgotten after "
		  "--forget-after, %llu to make room in the table, %llu new streams refused for "
		  "want of room (every entry live or bound to another certificate)",
		  (unsigned long long)c->evicted, (unsigned long long)c->commit.retired,
		  (unsigned long long)c->commit.evicted, (unsigned long long)c->commit.full);
}

static void stop_all(struct collector *c, struct listener *ls)
{
	while (c->nconns)
		collector_conn_close(c, c->conns[0], NULL);
	collector_conn_reap(c);
	if (c->agents)
		collector_agents_free(c);
	for (int i = 0; i < MAX_LISTEN; i++)
		if (ls[i].kind)
			close(ls[i].fd);
	if (c->epfd >= 0)
		close(c->epfd);
	vigil_commit_close(&c->commit);
	vigil_export_close(&c->out);
	vigil_pub_close(c->pub);
	vbuf_free(&c->batch);
	free(c->agents);
	free(c->conns);
	free(c->dead);
	free(c->udp_buf);
}

int main(int argc, char **argv)
{
	static struct listener listeners[MAX_LISTEN];
	static struct collector c = { .epfd = -1, .out = { .fd = -1 }, .commit = { .fd = -1 } };
	struct options o;
	struct ssl_ctx_st *tls = NULL;
	struct vigil_http *http = NULL;
	int err;

	vlog_prog = "vigil-collector";
	vlog_daemon();
	setvbuf(stderr, NULL, _IOLBF, 0);
	err = collector_options_parse(argc, argv, &o, &stop);
	if (err)
		return err == VIGIL_OPTS_DONE ? VIGIL_EXIT_OK : VIGIL_EXIT_USAGE;
	if (o.tls_cert && !(tls = conn_tls_ctx(o.tls_cert, o.tls_key, o.tls_ca)))
		return VIGIL_EXIT_USAGE;	/* docs/stream.md: named files refused at start */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, on_hup);
	if (o.metrics && !(http = vigil_http_start(o.metrics, "vigil-collector"))) {
		err = -EADDRINUSE;
	} else {
		static struct hold_ctx hold;

		hold = (struct hold_ctx){ .c = &c, .http = http };
		o.pub.holding = on_hold;
		o.pub.holding_ctx = &hold;
		err = start(&c, &o, listeners, tls);
	}
	if (!err) {
		vigil_sd_notify("READY=1");	/* systemd (Type=notify): listening */
		run(&c, listeners, o.nlisten, &o, &tls, http);
		drain(&c, o.pub.wait);
		vigil_sd_notify("STOPPING=1");
		summarise(&c, listeners, o.nlisten);
	}
	stop_all(&c, listeners);
	vigil_http_stop(http);
	conn_tls_ctx_free(tls);
	return vigil_exit_status(err);
}
