// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "log.h"
#include "core/pump.h"

int vigil_pump_init(struct vigil_pump *p, int ring_fd, int poll_ms)
{
	/* Edge-triggered: the ring's fd stays readable while any record is
	 * unreleased (a sink waiting for acks), so level-triggered polling
	 * would never sleep. The poll timer covers what no wakeup announces. */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int err;

	*p = (struct vigil_pump){ .poll_ms = poll_ms, .epfd = -1 };
	err = vigil_ring_open(&p->ring, ring_fd);
	if (err)
		return vlog_err(err, "cannot map the ring");
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0 || epoll_ctl(p->epfd, EPOLL_CTL_ADD, ring_fd, &ev))
		return vlog_err(-errno, "cannot poll the ring");
	return 0;
}

int vigil_pump_add(struct vigil_pump *p, struct vigil_sink *s)
{
	if (p->nsinks == VIGIL_MAX_SINKS)
		return -E2BIG;
	s->pos = vigil_ring_consumer(&p->ring);
	p->sinks[p->nsinks++] = s;
	return 0;
}

int64_t vigil_pump_once(struct vigil_pump *p)
{
	uint64_t start = vigil_ring_consumer(&p->ring);
	uint64_t end = vigil_ring_producer(&p->ring), low = end;

	for (int i = 0; i < p->nsinks; i++) {
		struct vigil_sink *s = p->sinks[i];

		if (s->pos < end)
			s->ops->offer(s, &p->ring, end);
		if (s->pos < low)
			low = s->pos;
	}
	if (low > start)
		vigil_ring_release(&p->ring, low);
	return low > start ? (int64_t)(low - start) : 0;
}

void vigil_pump_wait(struct vigil_pump *p, bool flowing)
{
	struct epoll_event ev;

	if (flowing && p->spins++ % 64) {
		sched_yield();
		return;
	}
	p->polls++;
	if (epoll_wait(p->epfd, &ev, 1, p->poll_ms) > 0)
		p->wakeups++;
}

void vigil_pump_flush(struct vigil_pump *p)
{
	vigil_pump_once(p);
	for (int i = 0; i < p->nsinks; i++)
		if (p->sinks[i]->ops->flush)
			p->sinks[i]->ops->flush(p->sinks[i], &p->ring);
	vigil_pump_once(p);
}

void vigil_pump_close(struct vigil_pump *p)
{
	if (p->epfd >= 0)
		close(p->epfd);
	vigil_ring_close(&p->ring);
}
