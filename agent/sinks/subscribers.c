// SPDX-License-Identifier: GPL-2.0
/* See subscribers.h. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "ids.h"
#include "json.h"
#include "log.h"
#include "sinks/subscribers.h"
#include "stream.h"

int vigil_subscribers_add(struct vigil_subscribers *h, int fd, enum vigil_sub_form form)
{
	struct ucred cred = {};
	socklen_t len = sizeof(cred);

	if (h->n == VIGIL_SUBSCRIBERS_MAX)
		return -EBUSY;
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	h->s[h->n++] = (struct vigil_subscriber){ .fd = fd, .pid = cred.pid, .form = form };
	vlog_info("events: subscriber pid %d joined (%d of %d)", (int)cred.pid, (int)h->n,
		  VIGIL_SUBSCRIBERS_MAX);
	return 0;
}

bool vigil_subscribers_want(const struct vigil_subscribers *h, enum vigil_sub_form form)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->s[i].form == form)
			return true;
	return false;
}

/* The line that tells a subscriber what it lost, in its own stream. */
static void loss_line(struct vigil_subscriber *s)
{
	struct timespec ts;
	char t[VIGIL_TIME_MAX];
	struct jw w;

	clock_gettime(CLOCK_REALTIME, &ts);
	vigil_rfc3339(t, sizeof(t), (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec, 0);
	jw_begin(&w, &s->buf);
	jw_obj(&w, NULL);
	jw_obj(&w, "vigil_subscriber_loss");
	jw_u64(&w, "lines", s->unsaid);
	jw_u64(&w, "dropped_total", s->dropped);
	jw_end(&w);
	jw_cstr(&w, "time", t);
	jw_end(&w);
	vbuf_putc(&s->buf, '\n');
	s->unsaid = 0;
}

void vigil_subscribers_publish(struct vigil_subscribers *h, enum vigil_sub_form form,
			       const char *line, size_t len)
{
	for (unsigned i = 0; i < h->n; i++) {
		struct vigil_subscriber *s = &h->s[i];

		if (s->form != form)
			continue;
		/* Room kept for the loss line: a full buffer never hides a loss. */
		if (s->buf.len + len + 256 > VIGIL_SUBSCRIBER_BUF) {
			s->dropped++, s->unsaid++, h->dropped_total++;
			continue;
		}
		if (s->unsaid)
			loss_line(s);
		vbuf_put(&s->buf, line, len);
		s->lines++;
	}
	if (h->dropped_total && vigil_stream_now() >= h->drop_said_at + 10) {
		h->drop_said_at = vigil_stream_now();
		for (unsigned i = 0; i < h->n; i++)
			if (h->s[i].unsaid)
				vlog_warn("events: subscriber pid %d reads slower than events come: "
					  "%llu lines dropped for it so far (the agent's outputs "
					  "lose nothing)", h->s[i].pid,
					  (unsigned long long)h->s[i].dropped);
	}
}

static void drop(struct vigil_subscribers *h, unsigned i, const char *why)
{
	struct vigil_subscriber *s = &h->s[i];

	vlog_info("events: subscriber pid %d left (%s): %llu lines sent, %llu dropped", s->pid, why,
		  (unsigned long long)s->lines, (unsigned long long)s->dropped);
	close(s->fd);
	vbuf_free(&s->buf);
	h->s[i] = h->s[--h->n];
}

/* Sends whole lines, a message at most VIGIL_SUBSCRIBER_MSG bytes (a longer
 * line alone); -EAGAIN when the socket is full, -errno when it is gone. */
static int send_some(struct vigil_subscriber *s)
{
	while (s->buf.len) {
		size_t n = s->buf.len < VIGIL_SUBSCRIBER_MSG ? s->buf.len : VIGIL_SUBSCRIBER_MSG;
		ssize_t w;

		if (n < s->buf.len) {	/* cut after the last whole line */
			char *nl = memrchr(s->buf.p, '\n', n);

			n = nl ? (size_t)(nl - s->buf.p) + 1 : n;
		}
		w = send(s->fd, s->buf.p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0)
			return errno == EINTR ? 0 : -errno;
		memmove(s->buf.p, s->buf.p + w, s->buf.len - w);
		s->buf.len -= w;
	}
	return 0;
}

void vigil_subscribers_tick(struct vigil_subscribers *h)
{
	for (unsigned i = 0; i < h->n;) {
		struct vigil_subscriber *s = &h->s[i];
		char c;
		ssize_t r = recv(s->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
		int err = r == 0 ? -EPIPE : send_some(s);

		if (err && err != -EAGAIN && err != -ENOBUFS) {
			drop(h, i, err == -EPIPE || err == -ECONNRESET ? "closed" : strerror(-err));
			continue;
		}
		i++;
	}
}

void vigil_subscribers_describe(const struct vigil_subscribers *h, struct vigil_buf *out)
{
	vbuf_printf(out, "%-26s %u", "subscribers", h->n);
	for (unsigned i = 0; i < h->n; i++)
		vbuf_printf(out, "%spid %d: %llu lines, %llu dropped", i ? ", " : " (",
			    h->s[i].pid, (unsigned long long)h->s[i].lines,
			    (unsigned long long)h->s[i].dropped);
	vbuf_puts(out, h->n ? ")\n" : "\n");
}

void vigil_subscribers_close(struct vigil_subscribers *h)
{
	while (h->n)
		drop(h, 0, "the agent stops");
}
