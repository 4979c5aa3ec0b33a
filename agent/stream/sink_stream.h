/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sink that streams the ring to a collector (vigild --send URL): the hello,
 * then committed ring ranges sent as they lie (stream_tx.h), many records per
 * send. Its position (what the ring may release for it) is the lowest of
 * what the collector acknowledged and what the kernel released. A broken or
 * refused connection is retried with capped exponential backoff and the
 * stream restarts at the acknowledged offset; meanwhile events wait in the
 * ring, and past a high-water mark in the spool (spool.h), if one is set.
 */
#ifndef VIGIL_SINK_STREAM_H
#define VIGIL_SINK_STREAM_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "buf.h"
#include "core/pump.h"
#include "stream/spool.h"
#include "stream/stream_tls.h"
#include "stream/stream_tx.h"

struct vigil_stream_opts {
	const char *url;
	const char *node_name;
	int64_t realtime_offset_ns;	/* the agent's, for the hello */
	enum vigil_tx_path path;	/* AUTO: chosen by SEND_ZC usage reports */
	const char *spool_dir;		/* NULL: no spool, the backlog waits in the ring */
	uint64_t spool_max;		/* bytes */
	uint64_t high_water;		/* backlog bytes past which the spool takes it;
					 * 0: half the ring */
	struct vigil_tls_opts tls;	/* tls:// only */
	volatile sig_atomic_t *hups;	/* SIGHUPs so far: a new one re-reads the TLS
					 * files (NULL: never) */
};

struct vigil_sink_stream {
	struct vigil_sink sink;		/* first: the pump sees this */
	struct vigil_stream_opts o;
	struct sockaddr_storage addr;
	unsigned addrlen;
	int socktype;
	int fd;
	int epfd;			/* the pump's: acks and completions wake it */
	/* STREAM_ACCEPTANCE: TLS is up, the collector has still to accept our
	 * certificate (sink_stream.c, TLS_PROVEN_S). */
	enum { STREAM_DOWN, STREAM_CONNECTING, STREAM_HANDSHAKE, STREAM_ACCEPTANCE,
	       STREAM_UP } state;
	struct vigil_tx tx;
	bool tls_on;			/* tls:// */
	struct vigil_tls tls;
	bool ktls;			/* this connection's TX keys are the kernel's */
	double deadline;		/* a TLS handshake ends by then; then, the
					 * hello goes out by then without a ticket */
	char why[384];			/* a TLS failure, for the log */
	char said[448];			/* the last failure logged */
	sig_atomic_t hups_seen;
	bool started;
	uint64_t acked;			/* collector has written out up to here */
	double next_try;		/* CLOCK_MONOTONIC s */
	double hold_since;		/* a small range waits for more since */
	uint64_t scan;			/* records before this are committed */
	unsigned backoff_ms;
	struct vigil_buf hello;
	uint8_t ack[sizeof(uint64_t) * 2];
	unsigned ack_len;
	__u8 boot_id[16];
	uint32_t ring_id;
	uint64_t ring_size;
	struct vigil_spool spool;
	bool spooling;			/* a spool folder was given */
	void *spool_buf;		/* what is read back from the spool to send */
	uint64_t connects, failures, skipped, udp_errors;
	bool said_path;
	/* The connection up now proved that the collector takes our stream
	 * (an ack, or UP_PROVEN_S up): only then does backoff start over. */
	bool proven;
	bool said_up;			/* "connected" logged in this episode */
	double up_at;			/* the hello went out then */
};

/* One line for `vigil status`: the URL, whether it is up, the path its
 * bytes take (TLS: kernel or user space), what the collector acknowledged. */
struct vigil_buf;
void vigil_sink_stream_describe(struct vigil_sink_stream *s, struct vigil_buf *out);
int vigil_sink_stream_init(struct vigil_sink_stream *s, const struct vigil_stream_opts *o,
			   int ring_fd, int epfd);
void vigil_sink_stream_free(struct vigil_sink_stream *s);
/* udp://: the sink sends datagrams instead (agent/stream/sink_stream_udp.c). */
int vigil_sink_stream_udp_init(struct vigil_sink_stream *s);
/* Its line at the end: datagrams, bytes, sends refused. */
void vigil_sink_stream_udp_summary(const struct vigil_sink_stream *s);

#endif
