/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs a function inside a network namespace, in a short-lived thread that
 * joined it: setns() moves only the calling thread, so the agent's own
 * threads never leave theirs, and whatever the function creates (a TC
 * filter, an iterator, a packet socket) belongs to the intended namespace.
 *
 * The root namespace (PID 1's, where the node's own connections live, and
 * the agent's own, which is the same outside containers) is refused unless
 * it was named explicitly as VIGIL_NETNS_ROOT.
 */
#ifndef VIGIL_NETNS_H
#define VIGIL_NETNS_H

#include <stddef.h>
#include <stdint.h>

#define VIGIL_NETNS_ROOT "/proc/1/ns/net"

/* Which namespace a path opened to: compare these, never names. An inode
 * number is given out again once its namespace is gone; the cookie is not. */
struct vigil_netns_id {
	uint64_t dev;
	uint64_t ino;
	uint64_t cookie;	/* SO_NETNS_COOKIE */
};

/* The cookie of the calling thread's network namespace. */
int vigil_netns_cookie(uint64_t *cookie);

/* The file netns names: /run/netns/NAME, or the path itself. -EINVAL for an
 * empty name or a name with a slash that is not a path, -ENAMETOOLONG. */
int vigil_netns_path(const char *netns, char *out, size_t len);
/* 0 when netns exists and is not the root namespace under another name
 * (vigil_netns_run refuses that too, but only when it is too late to refuse
 * the policy); else err says why. */
int vigil_netns_check(const char *netns, char *err, size_t errlen);

/* netns is a name under /run/netns or a path. Joins it in a new thread,
 * runs fn(arg) there and returns its result (or -errno when the namespace
 * cannot be joined, -EPERM for an unnamed root namespace). id, when not
 * NULL, is set to the namespace's identity. */
int vigil_netns_run(const char *netns, int (*fn)(void *arg), void *arg, struct vigil_netns_id *id);

#endif
