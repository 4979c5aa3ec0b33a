// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stream endpoints as users write them: tcp://HOST:PORT, udp://HOST:PORT,
 * tls://HOST:PORT (TCP; the TLS is the agent's, agent/stream/stream_tls.c). */
#include <errno.h>
#include <stdbool.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include "log.h"
#include "host_port.h"
#include "stream.h"

/* Splits "SCHEME://HOST:PORT" (HOST maybe an IPv6 address in brackets). */
static int url_split(const char *url, char *host, size_t n, const char **port)
{
	const char *why;

	if (vigil_host_port_split(url + 6, host, n, port, &why))
		return vlog_refuse(-EINVAL, "'%s': %s", url, why);
	return 0;
}

int vigil_stream_url_host(const char *url, char *host, size_t n)
{
	const char *port;

	return url_split(url, host, n, &port);
}

static bool known_scheme(const char *url)
{
	return !strncmp(url, "tcp://", 6) || !strncmp(url, "tls://", 6) || !strncmp(url, "udp://", 6);
}

int vigil_stream_url_check(const char *url)
{
	char host[256];
	const char *port;

	if (!known_scheme(url))
		return vlog_refuse(-EINVAL, "'%s': want tcp://HOST:PORT, tls://HOST:PORT or "
				   "udp://HOST:PORT", url);
	return url_split(url, host, sizeof(host), &port);
}

int vigil_stream_url(const char *url, int *socktype, struct sockaddr_storage *addr,
		     unsigned *addrlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *res = NULL;
	char host[256];
	const char *port;
	int err;

	if (!strncmp(url, "tcp://", 6) || !strncmp(url, "tls://", 6))
		hints.ai_socktype = SOCK_STREAM;
	else if (!strncmp(url, "udp://", 6))
		hints.ai_socktype = SOCK_DGRAM;
	else
		return vlog_refuse(-EINVAL, "'%s': want tcp://HOST:PORT, tls://HOST:PORT or udp://HOST:PORT",
				url);
	if ((err = url_split(url, host, sizeof(host), &port)))
		return err;
	err = getaddrinfo(host, port, &hints, &res);
	if (err || !res)
		return vlog_refuse(-EINVAL, "'%s': %s", url, gai_strerror(err));
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*addrlen = res->ai_addrlen;
	*socktype = hints.ai_socktype;
	freeaddrinfo(res);
	return 0;
}
