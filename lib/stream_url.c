// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stream endpoints as users write them: tcp://HOST:PORT, udp://HOST:PORT. */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include "log.h"
#include "stream.h"

int vigil_stream_url(const char *url, int *socktype, struct sockaddr_storage *addr,
		     unsigned *addrlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *res = NULL;
	char host[256];
	const char *h, *port;
	size_t hlen;
	int err;

	if (!strncmp(url, "tcp://", 6))
		hints.ai_socktype = SOCK_STREAM;
	else if (!strncmp(url, "udp://", 6))
		hints.ai_socktype = SOCK_DGRAM;
	else
		return vlog_err(-EINVAL, "'%s': want tcp://HOST:PORT or udp://HOST:PORT", url);
	h = url + 6;
	if (*h == '[') {
		const char *close = strchr(h, ']');

		if (!close || close[1] != ':')
			return vlog_err(-EINVAL, "'%s': unterminated IPv6 address", url);
		hlen = close - h - 1;
		port = close + 2;
		h++;
	} else {
		port = strrchr(h, ':');
		if (!port)
			return vlog_err(-EINVAL, "'%s': no port", url);
		hlen = port - h;
		port++;
	}
	if (!hlen || hlen >= sizeof(host) || !*port)
		return vlog_err(-EINVAL, "'%s': bad host or port", url);
	memcpy(host, h, hlen);
	host[hlen] = 0;
	err = getaddrinfo(host, port, &hints, &res);
	if (err || !res)
		return vlog_err(-EINVAL, "'%s': %s", url, gai_strerror(err));
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*addrlen = res->ai_addrlen;
	*socktype = hints.ai_socktype;
	freeaddrinfo(res);
	return 0;
}
