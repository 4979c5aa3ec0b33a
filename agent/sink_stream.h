/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sink that streams the ring to a collector (vigild --send URL): the hello,
 * then committed ring ranges sent as they lie (stream_tx.h), many records per
 * send. Its position (what the ring may release for it) is the lowest of
 * what the collector acknowledged and what the kernel released. A broken or
 * refused connection is retried with capped exponential backoff and the
 * stream restarts at that position; meanwhile events wait in the ring.
 */
#ifndef VIGIL_SINK_STREAM_H
#define VIGIL_SINK_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "buf.h"
#include "pump.h"
#include "stream_tx.h"

struct vigil_sink_stream {
	struct vigil_sink sink;		/* first: the pump sees this */
	const char *url;
	struct sockaddr_storage addr;
	unsigned addrlen;
	int socktype;
	int fd;
	int epfd;			/* the pump's: acks and completions wake it */
	enum { STREAM_DOWN, STREAM_CONNECTING, STREAM_UP } state;
	struct vigil_tx tx;
	enum vigil_tx_path want;	/* AUTO: chosen by the usage reports */
	uint64_t acked;			/* collector has written out up to here */
	double next_try;		/* CLOCK_MONOTONIC s */
	unsigned backoff_ms;
	struct vigil_buf hello;
	uint8_t ack[sizeof(uint64_t) * 2];
	unsigned ack_len;
	char node_name[256];
	__u8 boot_id[16];
	uint32_t ring_id;
	uint64_t ring_size;
	int64_t realtime_offset_ns;
	uint64_t connects, failures;
	bool said_path;
};

/* want: VIGIL_TX_AUTO, or a path forced (for benchmarks and tests). */
int vigil_sink_stream_init(struct vigil_sink_stream *s, const char *url, const char *node_name,
			   int64_t realtime_offset_ns, int ring_fd, int epfd,
			   enum vigil_tx_path want);
void vigil_sink_stream_free(struct vigil_sink_stream *s);

#endif
