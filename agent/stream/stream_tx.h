/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a stream sink puts ring ranges on its socket, straight from the ring's
 * pages: io_uring SEND_ZC (agent/stream/uring_tx.c), else sendmsg(MSG_ZEROCOPY),
 * else plain send() (agent/stream/stream_tx.c); on tls:// plain send() through
 * kernel TLS, else SSL_write (agent/stream/stream_tls.c). Each path tells the sink how far
 * the kernel is done with the pages (released): with zero copy that is when
 * the notification for a send arrives, which may be long after the send.
 *
 * One send is in flight per socket: two sends on one TCP socket could be
 * reordered. Nothing here blocks.
 */
#ifndef VIGIL_STREAM_TX_H
#define VIGIL_STREAM_TX_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum vigil_tx_path {
	VIGIL_TX_AUTO = 0,	/* the best that works here */
	VIGIL_TX_URING_ZC,
	VIGIL_TX_MSG_ZC,
	VIGIL_TX_SEND,
	VIGIL_TX_TLS,		/* tls:// without kernel TLS: SSL_write from the
				 * ring's pages (agent/stream/stream_tls.c); never asked
				 * for with --send-path */
};

#define VIGIL_TX_ZC_MAX 256	/* zero-copy sends awaiting their notification */

struct vigil_tx_zc {
	uint32_t id;		/* MSG_ZEROCOPY counter, or io_uring user data */
	bool done;
	uint64_t start, end;	/* ring positions the send covers */
};

struct io_uring;
struct ssl_st;

struct vigil_tx {
	enum vigil_tx_path path;
	enum vigil_tx_path zc_path;	/* the zero-copy path left for send */
	int fd;			/* the connected socket */
	uint32_t gen;		/* connection generation: stale completions are ignored */
	uint64_t sent;		/* ring position up to which the kernel took the bytes */
	bool in_flight;		/* io_uring: a send is queued */
	uint64_t in_flight_end;
	/* zero-copy sends not yet notified, oldest first */
	struct vigil_tx_zc zc[VIGIL_TX_ZC_MAX];
	unsigned zc_head, zc_count;
	uint32_t next_id;
	struct io_uring *uring;	/* io_uring path only, kept across connections */
	bool zc_report;		/* its sends ask whether the kernel copied (6.2+) */
	int uring_fd;		/* for the pump's epoll: completions wake it */
	int drain_fd;		/* a dropped MSG_ZEROCOPY socket whose sends
				 * are not all notified yet, or -1 */
	struct ssl_st *ssl;	/* tls://: the connection's session */
	size_t tls_pending;	/* an SSL_write to retry with this many bytes */
	/* what the kernel did with zero-copy sends */
	uint64_t zc_sends, zc_copied, sends, bytes;
};

/* Chooses the path (want, or the best available for VIGIL_TX_AUTO). */
int vigil_tx_init(struct vigil_tx *t, enum vigil_tx_path want);
void vigil_tx_free(struct vigil_tx *t);
/* A new connection on fd, sending from ring position pos. */
int vigil_tx_connect(struct vigil_tx *t, int fd, uint64_t pos);
/* Forgets the connection: its sends' results are ignored, but the ring
 * pages its zero-copy sends lent stay held until notified. Returns true if
 * it kept the socket to read those notifications (the caller must not
 * close it; vigil_tx_poll does once they are in). */
bool vigil_tx_disconnect(struct vigil_tx *t);
/* False while an earlier socket's zero-copy sends are awaited. */
bool vigil_tx_can_connect(struct vigil_tx *t);
/* Sends [t->sent, t->sent + len) which starts at p; returns 0 or -errno
 * (the connection is broken). May take only part, or nothing (socket full,
 * a send still in flight). */
int vigil_tx_send(struct vigil_tx *t, const void *p, size_t len);
/* The same from a buffer of ours (the spool's): always a plain send. */
int vigil_tx_send_copy(struct vigil_tx *t, const void *p, size_t len);
/* Reaps completions, also of connections already dropped; returns the
 * position before which the kernel holds no ring page (INT64_MAX: none
 * held), or -errno when a send of this connection failed. */
int64_t vigil_tx_poll(struct vigil_tx *t);
const char *vigil_tx_path_name(enum vigil_tx_path p);
/* "auto", "uring", "zerocopy", "send" (vigild --send-path). */
int vigil_tx_path_parse(const char *s, enum vigil_tx_path *out);

/* The io_uring path (agent/stream/uring_tx.c). */
int vigil_uring_init(struct vigil_tx *t);
void vigil_uring_free(struct vigil_tx *t);
int vigil_uring_send(struct vigil_tx *t, const void *p, size_t len);
int vigil_uring_poll(struct vigil_tx *t);

/* Past enough zero-copy sends whose usage report says the kernel copied
 * the pages anyway (loopback does), zero copy only costs: switches to plain
 * send and returns true. The pages already lent are still awaited. */
bool vigil_tx_copied_anyway(struct vigil_tx *t);

/* Zero-copy bookkeeping shared by both zero-copy paths. */
int vigil_tx_zc_push(struct vigil_tx *t, uint32_t id, uint64_t start, uint64_t end);
void vigil_tx_zc_done(struct vigil_tx *t, uint32_t lo, uint32_t hi);

#endif
