// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The metrics and health endpoint (http_health.h). */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include "buf.h"
#include "host_port.h"
#include "http_health.h"
#include "log.h"
#include "opts.h"

#define CONNS_MAX 32		/* at once */
#define CONNS_PER_ADDR 8
#define CONN_TIMEOUT_S 5	/* a request not complete by then is cut */
#define CONN_MEMORY (32 << 10)	/* per connection: a request's headers fit */
/* /livez: the loop turned this recently. Generous: a loop that waits on
 * purpose (a collector holding its agents while JetStream does not answer,
 * each attempt up to --publish-wait) is alive. */
#define LIVE_S 30.0

struct vigil_http {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	struct vigil_buf metrics, ready_json;
	bool ready;
	_Atomic double alive_at;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve(void *ctx, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_len, void **state)
{
	struct vigil_http *h = ctx;
	enum MHD_Result ret;
	char body[128];

	(void)version, (void)upload;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, 405, "text/plain", "GET only\n", 9);
	if (*upload_len)	/* a GET with a body: refused */
		return MHD_NO;
	*state = NULL;
	if (!strcmp(url, "/livez")) {
		double ago = now_s() - atomic_load(&h->alive_at);
		int n = ago < LIVE_S ? snprintf(body, sizeof(body), "{\"status\":\"live\"}\n")
				     : snprintf(body, sizeof(body),
						"{\"status\":\"stalled\",\"loop_idle_s\":%.1f}\n", ago);

		return reply(c, ago < LIVE_S ? 200 : 503, "application/json", body, n);
	}
	pthread_mutex_lock(&h->lock);
	if (!strcmp(url, "/metrics"))
		ret = reply(c, 200, "text/plain; version=0.0.4; charset=utf-8",
			    h->metrics.p ? h->metrics.p : "", h->metrics.len);
	else if (!strcmp(url, "/readyz"))
		ret = reply(c, h->ready ? 200 : 503, "application/json",
			    h->ready_json.p ? h->ready_json.p : "{\"status\":\"starting\"}\n",
			    h->ready_json.p ? h->ready_json.len : 22);
	else
		ret = reply(c, 404, "text/plain", "/metrics, /livez or /readyz\n", 28);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static int parse(const char *addr_port, struct addrinfo **ai)
{
	char host[128];
	const char *port;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };

	if (vigil_host_port_split(addr_port, host, sizeof(host), &port, NULL))
		return -EINVAL;
	return getaddrinfo(host, port, &hints, ai) ? -EINVAL : 0;
}

int vigil_http_addr_check(const char *addr_port, const char *opt)
{
	struct addrinfo *ai;

	if (parse(addr_port, &ai))
		return vlog_refuse(-EINVAL, "invalid value '%s' for %s: want ADDR:PORT with a numeric "
				"address (127.0.0.1:9400, [::1]:9400)", addr_port, opt);
	freeaddrinfo(ai);
	return 0;
}

int vigil_http_opt_addr(const struct vigil_opt *opt, void *base, const char *arg)
{
	if (vigil_http_addr_check(arg, "--metrics"))
		return -EINVAL;
	return vigil_opt_str(opt, base, arg);
}

struct vigil_http *vigil_http_start(const char *addr_port, const char *prog)
{
	struct vigil_http *h = calloc(1, sizeof(*h));
	const union MHD_DaemonInfo *info;
	struct addrinfo *ai = NULL;
	char host[64] = "?";

	if (!h || parse(addr_port, &ai)) {
		vlog_refuse(-EINVAL, "--metrics %s: cannot listen there", addr_port);
		goto fail;
	}
	pthread_mutex_init(&h->lock, NULL);
	atomic_store(&h->alive_at, now_s());
	h->d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, serve, h,
				MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNS_MAX,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONNS_PER_ADDR,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
				MHD_OPTION_END);
	getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(ai);
	if (!h->d) {
		vlog_err(-errno ? -errno : -EADDRINUSE, "--metrics %s: cannot listen there", addr_port);
		goto fail;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "%s: metrics on http://%s%s%s:%u\n", prog, strchr(host, ':') ? "[" : "",
		host, strchr(host, ':') ? "]" : "", info ? info->port : 0);
	return h;
fail:
	free(h);
	return NULL;
}

void vigil_http_publish(struct vigil_http *h, const char *metrics, size_t len, bool ready,
			const char *reason_json)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->metrics.len = 0;
	vbuf_put(&h->metrics, metrics, len);
	h->ready_json.len = 0;
	vbuf_puts(&h->ready_json, reason_json);
	h->ready = ready;
	pthread_mutex_unlock(&h->lock);
}

void vigil_http_alive(struct vigil_http *h)
{
	if (h)
		atomic_store(&h->alive_at, now_s());
}

void vigil_http_stop(struct vigil_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	pthread_mutex_destroy(&h->lock);
	vbuf_free(&h->metrics);
	vbuf_free(&h->ready_json);
	free(h);
}
