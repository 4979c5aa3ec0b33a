/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The operators' HTTP endpoint (--metrics ADDR:PORT): /metrics (Prometheus
 * text), /livez and /readyz. It runs on a thread of its own (libmicrohttpd)
 * and serves only what the event loop last published, under a lock held
 * for a copy: a slow, stuck or hostile client costs that thread, never the
 * event path. Bounded: few connections, few per address, a short timeout,
 * a small request; GET only. docs/operations.md.
 */
#ifndef VIGIL_HTTP_HEALTH_H
#define VIGIL_HTTP_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

struct vigil_http;

/* Listens on ADDR:PORT ("127.0.0.1:9400", "[::1]:9400"; port 0 picks one,
 * said on stderr as "metrics on http://ADDR:PORT"). NULL on error, said. */
struct vigil_http *vigil_http_start(const char *addr_port, const char *prog);
/* What /metrics serves from now on, and /readyz's state: ready (200) or
 * not (503), with reason_json as its body. */
void vigil_http_publish(struct vigil_http *h, const char *metrics, size_t len, bool ready,
			const char *reason_json);
/* The event loop turned: /livez answers 200 while this is recent (30 s). */
void vigil_http_alive(struct vigil_http *h);
/* Checks ADDR:PORT's form without listening; 0 or -EINVAL, said. */
int vigil_http_addr_check(const char *addr_port, const char *opt);

/* --metrics ADDR:PORT for an option table (opts.h): its form checked, the
 * string stored at offset at of the options struct. */
#define VIGIL_METRICS_OPT(at)								\
	{ "metrics", 0, 0, "ADDR:PORT",							\
	  "serve Prometheus metrics (/metrics), /livez and\n"				\
	  "/readyz over HTTP there (e.g. 127.0.0.1:9400;\n"				\
	  "default: none; docs/operations.md)", .set = vigil_http_opt_addr, .off = (at) }
struct vigil_opt;
int vigil_http_opt_addr(const struct vigil_opt *opt, void *base, const char *arg);
void vigil_http_stop(struct vigil_http *h);

#endif
