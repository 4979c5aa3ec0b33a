// SPDX-License-Identifier: GPL-2.0
/*
 * What the stream promises, said at start: vigil acknowledges an agent only
 * after JetStream acknowledged, so its promise is the stream's. The stream's
 * configuration comes from JetStream's API; the server's version from the
 * INFO line every NATS server sends first, in clear text, also before TLS
 * (libnats keeps it to itself). Each warning names the setting
 * (docs/stream.md, "What JetStream keeps").
 */
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "host_port.h"
#include "log.h"
#include "publish_int.h"

/* The version in the INFO line of the server at url (nats://HOST:PORT,
 * tls://...): "" when it cannot be read within a second. */
static void server_version(const char *url, char *ver, size_t n)
{
	char host[256], port[16], line[4096];
	const char *hp = strstr(url, "://"), *at, *p, *v;
	struct addrinfo *ai = NULL, hints = { .ai_socktype = SOCK_STREAM };
	size_t got = 0;
	int fd = -1;

	*ver = 0;
	hp = hp ? hp + 3 : url;
	if ((at = strchr(hp, '@')))
		hp = at + 1;
	if (vigil_host_port_split(hp, host, sizeof(host), &p, NULL))
		return;
	snprintf(port, sizeof(port), "%.*s", (int)strcspn(p, "/"), p);
	if (getaddrinfo(host, port, &hints, &ai) || !ai)
		return;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		while (got < sizeof(line) - 1 && !memchr(line, '\n', got) && poll(&pfd, 1, 1000) > 0) {
			ssize_t r = read(fd, line + got, sizeof(line) - 1 - got);

			if (r <= 0)
				break;
			got += r;
		}
	}
	line[got] = 0;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	if (strncmp(line, "INFO ", 5) || !(v = strstr(line, "\"version\":\"")))
		return;
	v += strlen("\"version\":\"");
	snprintf(ver, n, "%.*s", (int)strcspn(v, "\""), v);
}

/* Whether version "MAJOR.MINOR..." is before 2.10. */
static bool before_2_10(const char *v)
{
	int major = 0, minor = 0;

	if (sscanf(v, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 2 || (major == 2 && minor < 10);
}

void pub_check_durability(struct vigil_pub *p, const jsStreamInfo *si)
{
	const jsStreamConfig *cfg = si->Config;
	bool cluster = si->Cluster && si->Cluster->Name && *si->Cluster->Name;
	double window = cfg->Duplicates / 1e9;
	char url[512] = "", ver[64];
	unsigned warned = 0;

	natsConnection_GetConnectedUrl(p->nc, url, sizeof(url));
	server_version(url, ver, sizeof(ver));
	vlog_info("JetStream stream %s: %s storage, %lld replica%s%s%s, duplicate_window %.0f s; "
		  "server %s", cfg->Name, cfg->Storage == js_MemoryStorage ? "memory" : "file",
		  (long long)cfg->Replicas, cfg->Replicas == 1 ? "" : "s",
		  cluster ? " in cluster " : " on one server", cluster ? si->Cluster->Name : "",
		  window, *ver ? ver : "(version not read)");
	if (cfg->Storage == js_MemoryStorage && ++warned)
		vlog_info("warning: stream %s has storage: memory: events it acknowledged are lost "
			  "when its servers restart", cfg->Name);
	if (cluster && cfg->Replicas < 3 && ++warned)
		vlog_info("warning: stream %s has replicas: %lld in cluster %s: one server's loss "
			  "(disk, host) can lose events it acknowledged; want 3", cfg->Name,
			  (long long)cfg->Replicas, si->Cluster->Name);
	if (!cluster && ++warned)
		vlog_info("warning: stream %s is on one server (no cluster): that server's disk is "
			  "the only copy of what it acknowledged", cfg->Name);
	if (window < p->min_dup_window && ++warned)
		vlog_info("warning: stream %s has duplicate_window %.0f s, under "
			  "--publish-min-window %.0f s: an agent away longer (reconnect plus spool "
			  "replay) can have %s", cfg->Name, window, p->min_dup_window,
			  p->batch_layout ? "a message published again whose id is no longer "
			  "remembered (the expected-sequence header still keeps it out)" :
			  "events published twice");
	if (*ver && before_2_10(ver) && ++warned)
		vlog_info("warning: nats-server %s acknowledges before its disk has the data "
			  "(fsync every 2 minutes; sync_interval exists from 2.10): an OS crash or "
			  "power loss of %s can lose events it acknowledged (Jepsen, NATS 2.12.1, "
			  "2025-12)", ver, cluster ? "a majority of the stream's servers" : "the server");
	else if (*ver && ++warned)
		vlog_info("note: nats-server %s acknowledges before fsync unless its configuration "
			  "says jetstream { sync_interval: always } (not readable from here): without "
			  "it an OS crash or power loss of %s can lose events it acknowledged (Jepsen, "
			  "NATS 2.12.1, 2025-12)", ver,
			  cluster ? "a majority of the stream's servers" : "the server");
	if (!warned)
		vlog_info("JetStream stream %s: nothing to warn about", cfg->Name);
}
