// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "host_port.h"

static int refuse(const char **why, const char *cause)
{
	if (why)
		*why = cause;
	return -EINVAL;
}

int vigil_host_port_split(const char *s, char *host, size_t n, const char **port,
			  const char **why)
{
	const char *h = s;
	size_t hlen;

	if (*h == '[') {
		const char *close = strchr(h, ']');

		if (!close)
			return refuse(why, "unterminated IPv6 address");
		if (close[1] != ':')
			return refuse(why, "no port after the IPv6 address");
		h++;
		hlen = close - h;
		*port = close + 2;
	} else {
		const char *colon = strrchr(h, ':');

		if (!colon)
			return refuse(why, "no port");
		hlen = colon - h;
		*port = colon + 1;
	}
	if (!hlen)
		return refuse(why, "no host");
	if (!**port)
		return refuse(why, "no port");
	if (hlen >= n)
		return refuse(why, "host name too long");
	memcpy(host, h, hlen);
	host[hlen] = 0;
	return 0;
}
