/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VIGIL_HOST_PORT_H
#define VIGIL_HOST_PORT_H

#include <stddef.h>

/*
 * Splits "HOST:PORT", HOST maybe an IPv6 address in brackets ("[::1]:9400")
 * or a bare one whose last colon starts the port. HOST goes to host (n
 * bytes, without the brackets); *port points past the colon, at the rest of
 * s (a caller that allows a path after the port cuts it). -EINVAL for a
 * missing or empty host or port, an unterminated bracket or a host longer
 * than n - 1, with the cause in *why (when why is not NULL) and nothing
 * logged: the caller names the option or URL.
 */
int vigil_host_port_split(const char *s, char *host, size_t n, const char **port,
			  const char **why);

#endif
