// SPDX-License-Identifier: GPL-2.0
/* See status.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "collector.h"
#include "conn_tls.h"
#include "listen.h"
#include "log.h"
#include "status.h"
#include "version.h"

static double started;

static void agent_line(struct vigil_buf *b, const struct agent *a, double now)
{
	char host[64];

	vbuf_printf(b, "agent %s (boot %s, ring %u): ", a->fmt.node_name, a->boot_str, a->ring_id);
	if (a->conn && a->conn->tls)
		vbuf_printf(b, "connected from %s over TLS, certificate %s (CN %s, issuer %s)",
			    a->conn->peer, conn_tls_name(a->conn), conn_tls_cn(a->conn),
			    conn_tls_issuer(a->conn));
	else if (a->conn)
		vbuf_printf(b, "connected from %s in clear text", a->conn->peer);
	else if (a->udp) {
		collector_host_name(&a->udp_from, host, sizeof(host));
		vbuf_printf(b, "datagrams from %s in clear text, last %.0f s ago", host,
			    now - a->last_seen);
	} else
		vbuf_printf(b, "gone %.0f s ago, last from %s%s%s", now - a->last_seen,
			    a->owner[0] ? a->owner : "?", a->cert[0] ? " with certificate " : "",
			    a->cert);
	vbuf_printf(b, "; written to offset %llu; %llu records, %llu duplicates, %llu re-sent, "
		    "%llu missing in sequence, %llu bytes lost on its side; process cache %zu "
		    "processes (%zu KiB), %llu not cached (full), %llu lookups found none",
		    (unsigned long long)a->written, (unsigned long long)a->records,
		    (unsigned long long)a->win.dups, (unsigned long long)a->resent,
		    (unsigned long long)a->win.gaps, (unsigned long long)a->lost_bytes,
		    a->fmt.cache.count, a->fmt.cache.bytes >> 10,
		    (unsigned long long)a->fmt.cache.misses,
		    (unsigned long long)a->fmt.cache.lookups_missed);
	agent_health_text(&a->health, &a->fmt, now, a->conn || a->udp, b);
	vbuf_putc(b, '\n');
}

int collector_status_write(const struct collector *c, const struct listener *ls, int nls,
			   const char *path)
{
	static bool failing;
	struct vigil_buf b = {};
	double now = vigil_stream_now();
	char tmp[4096];
	unsigned streams = 0;
	int fd, err = 0;

	if (!started)
		started = now;
	for (unsigned i = 0; i < c->max_agents; i++)
		streams += c->agents[i].used;
	vbuf_printf(&b, "vigil-collector %s, pid %d, up %.0f s: %u connections (--max-conns %u), "
		    "%u streams in memory (--max-agents %u), %u in the state file; %llu connections "
		    "closed for bad input, %llu evicted, %llu TLS handshakes refused past "
		    "--max-handshakes-per-addr, %llu past --max-handshakes; %llu datagrams, "
		    "%llu bad\n",
		    VIGIL_VERSION, (int)getpid(), now - started, c->nconns, c->max_conns, streams,
		    c->max_agents, c->commit.n, (unsigned long long)c->closed_hostile,
		    (unsigned long long)c->evicted, (unsigned long long)c->handshakes_refused,
		    (unsigned long long)c->handshakes_refused_all,
		    (unsigned long long)c->udp_datagrams,
		    (unsigned long long)c->udp_bad);
	for (int i = 0; i < nls; i++)
		vbuf_printf(&b, "listening on %s%s\n", ls[i].url,
			    ls[i].paused ? " (paused: out of descriptors or memory)" :
			    ls[i].tls ? " (mutual TLS)" : " (clear text)");
	for (unsigned i = 0; i < c->max_agents; i++)
		if (c->agents[i].used)
			agent_line(&b, &c->agents[i], now);
	if (b.oom) {
		vbuf_free(&b);
		return -ENOMEM;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	errno = 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, b.p, b.len) != (ssize_t)b.len || rename(tmp, path))
		err = -(errno ? errno : EIO);
	if (fd >= 0)
		close(fd);
	if (err && !failing)
		vlog_info("cannot write --status-file %s: %s (tried again each second)", path,
			  strerror(-err));
	failing = err != 0;
	vbuf_free(&b);
	return err;
}
