/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vigil events` subscribers: each gets a copy of every JSON line the local
 * sink decodes (agent/sinks/sink_local.c takes the copy, once per record),
 * through a bounded buffer of its own. A subscriber is not a pump sink and
 * holds no ring position: the ring never waits for it. A subscriber that
 * reads slower than events come loses lines, counted; when its buffer has
 * room again it gets one vigil_subscriber_loss line saying how many, and
 * the agent's log and `vigil status` say so too.
 *
 * Lines go out as SOCK_SEQPACKET messages of whole lines, sent without
 * waiting (MSG_DONTWAIT) from the agent's loop; a subscriber that closed
 * its end is dropped at the next tick.
 */
#ifndef VIGIL_SUBSCRIBERS_H
#define VIGIL_SUBSCRIBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "buf.h"

#define VIGIL_SUBSCRIBERS_MAX 8
#define VIGIL_SUBSCRIBER_BUF (1u << 20)	/* bytes waiting per subscriber */
#define VIGIL_SUBSCRIBER_MSG (64u << 10)	/* bytes per message at most */

/* Which JSON form a subscriber wants. */
enum vigil_sub_form { VIGIL_SUB_VIGIL, VIGIL_SUB_TETRAGON, VIGIL_SUB_FORMS };

struct vigil_subscriber {
	int fd;
	int pid;	/* the subscriber's, for the log */
	enum vigil_sub_form form;
	struct vigil_buf buf;
	uint64_t lines, dropped, unsaid;	/* unsaid: dropped, not yet told */
};

struct vigil_subscribers {
	struct vigil_subscriber s[VIGIL_SUBSCRIBERS_MAX];
	unsigned n;
	uint64_t dropped_total;
	double drop_said_at;	/* the last drop logged */
};

/* Takes fd (a connected control socket) as a subscriber of form; -EBUSY
 * (fd not taken) when every place is taken. */
int vigil_subscribers_add(struct vigil_subscribers *h, int fd, enum vigil_sub_form form);
/* Does any subscriber want this form? The local sink decodes it only then. */
bool vigil_subscribers_want(const struct vigil_subscribers *h, enum vigil_sub_form form);
/* A copy of one line (with its '\n') for every subscriber of form; a
 * subscriber whose buffer is full loses it, counted. */
void vigil_subscribers_publish(struct vigil_subscribers *h, enum vigil_sub_form form,
			       const char *line, size_t len);
/* Sends what waits, without waiting; drops subscribers that have gone. */
void vigil_subscribers_tick(struct vigil_subscribers *h);
/* "subscribers 1 (pid 42: 100 lines, 3 dropped)" for `vigil status`. */
void vigil_subscribers_describe(const struct vigil_subscribers *h, struct vigil_buf *out);
void vigil_subscribers_close(struct vigil_subscribers *h);

#endif
