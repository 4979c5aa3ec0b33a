// SPDX-License-Identifier: GPL-2.0
/*
 * The socket paths of stream_tx.h that need no io_uring: sendmsg with
 * MSG_ZEROCOPY (notifications on the socket's error queue) and plain send()
 * (the kernel copies the ring's bytes; the pages are free once it returns).
 * Both send straight from the ring's mapping: no copy in the agent.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include "log.h"
#include "stream/stream_tls.h"
#include "stream/stream_tx.h"

#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

static const char *const path_names[] = {
	[VIGIL_TX_AUTO] = "auto",
	[VIGIL_TX_URING_ZC] = "io_uring SEND_ZC",
	[VIGIL_TX_MSG_ZC] = "MSG_ZEROCOPY",
	[VIGIL_TX_SEND] = "send",
	[VIGIL_TX_TLS] = "SSL_write",
};

const char *vigil_tx_path_name(enum vigil_tx_path p)
{
	return p <= VIGIL_TX_TLS ? path_names[p] : "?";
}

int vigil_tx_init(struct vigil_tx *t, enum vigil_tx_path want)
{
	*t = (struct vigil_tx){ .fd = -1, .uring_fd = -1, .drain_fd = -1 };
	if (want == VIGIL_TX_AUTO || want == VIGIL_TX_URING_ZC) {
		int err = vigil_uring_init(t);

		if (!err) {
			t->path = VIGIL_TX_URING_ZC;
			return 0;
		}
		if (want == VIGIL_TX_URING_ZC)
			return err;
		vlog_info("io_uring SEND_ZC unavailable (%s): falling back to MSG_ZEROCOPY",
			  strerror(-err));
		want = VIGIL_TX_MSG_ZC;
	}
	t->path = want;
	return 0;
}

void vigil_tx_free(struct vigil_tx *t)
{
	vigil_uring_free(t);
	if (t->drain_fd >= 0)
		close(t->drain_fd);
	t->drain_fd = -1;
}

bool vigil_tx_can_connect(struct vigil_tx *t)
{
	return t->drain_fd < 0;
}

int vigil_tx_connect(struct vigil_tx *t, int fd, uint64_t pos)
{
	int one = 1;

	t->fd = fd;
	t->gen++;
	t->sent = pos;
	t->in_flight = false;
	/* io_uring ids run on (its zero-copy sends of an earlier connection
	 * may still be out); MSG_ZEROCOPY counts per socket from 0, and a new
	 * socket waits until the old one's were all notified. */
	if (t->path != VIGIL_TX_URING_ZC && t->zc_path != VIGIL_TX_URING_ZC)
		t->next_id = 0;
	if (t->path == VIGIL_TX_MSG_ZC &&
	    setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		vlog_info("SO_ZEROCOPY refused (%s): falling back to plain send", strerror(errno));
		t->path = VIGIL_TX_SEND;
	}
	return 0;
}

bool vigil_tx_disconnect(struct vigil_tx *t)
{
	bool keep = false;

	/* The kernel may still read ring pages lent to zero-copy sends of
	 * this connection: they stay held until notified. io_uring notifies
	 * on the ring, kept across connections; MSG_ZEROCOPY on the socket's
	 * error queue, so that socket is kept (disconnected: its queues are
	 * purged, which frees the pages) until its notifications are read. */
	if (t->zc_count && (t->path == VIGIL_TX_MSG_ZC || t->zc_path == VIGIL_TX_MSG_ZC) &&
	    t->fd >= 0) {
		struct sockaddr sa = { .sa_family = AF_UNSPEC };

		connect(t->fd, &sa, sizeof(sa));
		t->drain_fd = t->fd;
		keep = true;
	}
	t->fd = -1;
	t->gen++;
	t->in_flight = false;
	return keep;
}

int vigil_tx_zc_push(struct vigil_tx *t, uint32_t id, uint64_t start, uint64_t end)
{
	struct vigil_tx_zc *z;

	if (t->zc_count == VIGIL_TX_ZC_MAX)
		return -ENOBUFS;
	z = &t->zc[(t->zc_head + t->zc_count++) % VIGIL_TX_ZC_MAX];
	*z = (struct vigil_tx_zc){ .id = id, .start = start, .end = end };
	t->zc_sends++;
	return 0;
}

/* Notifications may arrive out of order: mark, then drop the done head. */
void vigil_tx_zc_done(struct vigil_tx *t, uint32_t lo, uint32_t hi)
{
	for (unsigned i = 0; i < t->zc_count; i++) {
		struct vigil_tx_zc *z = &t->zc[(t->zc_head + i) % VIGIL_TX_ZC_MAX];

		if (z->id - lo <= hi - lo)
			z->done = true;
	}
	while (t->zc_count && t->zc[t->zc_head].done) {
		t->zc_head = (t->zc_head + 1) % VIGIL_TX_ZC_MAX;
		t->zc_count--;
	}
}

static int send_plain(struct vigil_tx *t, const void *p, size_t len, bool zc)
{
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	ssize_t n;

	if (zc) {
		if (t->zc_count == VIGIL_TX_ZC_MAX)
			return 0;	/* wait for notifications */
		flags |= MSG_ZEROCOPY;
	}
	n = send(t->fd, p, len, flags);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		if (errno == ENOBUFS && zc)
			return 0;	/* optmem full: notifications due */
		return -errno;
	}
	if (zc)
		vigil_tx_zc_push(t, t->next_id++, t->sent, t->sent + n);
	t->sent += n;
	t->sends++;
	t->bytes += n;
	return 0;
}

int vigil_tx_send(struct vigil_tx *t, const void *p, size_t len)
{
	if (t->path == VIGIL_TX_URING_ZC)
		return vigil_uring_send(t, p, len);
	if (t->path == VIGIL_TX_TLS)
		return vigil_tls_send(t, p, len);
	return send_plain(t, p, len, t->path == VIGIL_TX_MSG_ZC);
}

int vigil_tx_send_copy(struct vigil_tx *t, const void *p, size_t len)
{
	if (t->path == VIGIL_TX_TLS)
		return vigil_tls_send(t, p, len);
	return send_plain(t, p, len, false);
}

/* MSG_ZEROCOPY notifications: id ranges on the error queue. */
static int poll_errqueue(struct vigil_tx *t, int fd)
{
	char control[128];

	for (;;) {
		struct msghdr msg = { .msg_control = control, .msg_controllen = sizeof(control) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY)
				return ee.ee_errno ? -(int)ee.ee_errno : -EIO;
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				t->zc_copied += ee.ee_data - ee.ee_info + 1;
			vigil_tx_zc_done(t, ee.ee_info, ee.ee_data);
		}
	}
}

#define ZC_VERDICT_SENDS 16	/* zero-copy sends judged before deciding: each
				 * pins and unpins its pages, loopback then copies */

bool vigil_tx_copied_anyway(struct vigil_tx *t)
{
	if (t->path == VIGIL_TX_SEND || t->in_flight || t->zc_sends < ZC_VERDICT_SENDS ||
	    t->zc_copied < t->zc_sends)
		return false;
	t->zc_path = t->path;	/* still reaped: notifications may be due */
	t->path = VIGIL_TX_SEND;
	return true;
}

int64_t vigil_tx_poll(struct vigil_tx *t)
{
	enum vigil_tx_path zc = t->path == VIGIL_TX_SEND ? t->zc_path : t->path;
	int err = 0;

	if (zc == VIGIL_TX_URING_ZC)
		err = vigil_uring_poll(t);
	else if (zc == VIGIL_TX_MSG_ZC && t->drain_fd >= 0) {
		/* a dropped connection's errors are not this one's */
		poll_errqueue(t, t->drain_fd);
		if (!t->zc_count) {
			close(t->drain_fd);
			t->drain_fd = -1;
		}
	} else if (zc == VIGIL_TX_MSG_ZC && t->fd >= 0)
		err = poll_errqueue(t, t->fd);
	if (err)
		return err;
	return t->zc_count ? (int64_t)t->zc[t->zc_head].start : INT64_MAX;
}

int vigil_tx_path_parse(const char *s, enum vigil_tx_path *out)
{
	static const char *const words[] = {
		[VIGIL_TX_AUTO] = "auto",
		[VIGIL_TX_URING_ZC] = "uring",
		[VIGIL_TX_MSG_ZC] = "zerocopy",
		[VIGIL_TX_SEND] = "send",
	};

	for (unsigned i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (!strcmp(s, words[i]))
			return *out = i, 0;
	return -EINVAL;
}
