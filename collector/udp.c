// SPDX-License-Identifier: GPL-2.0
/*
 * The UDP variant (docs/stream.md): whole datagrams, nothing acknowledged.
 * A datagram is checked whole, as hostile input; a bad one is dropped and
 * counted, and nothing else is affected (there is no connection to close).
 * Missing datagrams show as jumps in ring offsets (gap events) and, later,
 * as numbers missing from the sequence window.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "collector.h"
#include "log.h"

static void bad(struct collector *c, const char *why)
{
	if (!c->udp_bad++)
		vlog_info("dropping a bad datagram: %s (counted from now on)", why);
}

static void take_hello(struct collector *c, const uint8_t *p, size_t n)
{
	struct vigil_stream_peer peer;
	const char *why = "truncated";
	int r = vigil_stream_hello_parse(p, n, &peer, &why);
	struct agent *a;

	if (r <= 0 || (size_t)r != n)
		return bad(c, why);
	a = collector_agent_get(c, &peer);
	if (!a)
		return bad(c, "too many agents");
	if (!a->udp) {
		vlog_info("agent %s (boot %s, ring %u) sends datagrams", peer.node_name,
			  a->boot_str, a->ring_id);
		a->udp = true;
	}
	a->peer = peer;
}

static void take_data(struct collector *c, const uint8_t *p, size_t n)
{
	struct vigil_stream_dgram h;
	struct agent *a;
	size_t off;

	memcpy(&h, p, sizeof(h));
	if (h.version != VIGIL_STREAM_VERSION || h.len != n - sizeof(h) || (h.offset & 7))
		return bad(c, "header disagrees with the datagram");
	a = collector_agent_find(c, h.boot_id, h.ring_id);
	if (!a || !a->udp) {
		c->udp_unknown++;	/* before its hello: nothing to decode it with */
		return;
	}
	/* Check every record first: a datagram is taken whole or not at all. */
	for (off = sizeof(h); off < n; ) {
		struct vigil_stream_rec rec;
		const char *why = "record cut at the datagram's end";

		if (vigil_stream_rec_parse(&a->peer, p + off, n - off, &rec, &why) <= 0)
			return bad(c, why);
		off += rec.span;
	}
	if (h.offset > a->written)
		collector_agent_offset_gap(c, a, a->written, h.offset);
	for (off = sizeof(h); off < n; ) {
		struct vigil_stream_rec rec;
		const char *why;

		vigil_stream_rec_parse(&a->peer, p + off, n - off, &rec, &why);
		if (rec.event)
			collector_agent_record(c, a, rec.event, false);
		off += rec.span;
	}
	if (h.offset + h.len > a->written)
		a->written = h.offset + h.len;
	a->last_seen = vigil_stream_now();
}

void collector_udp_readable(struct collector *c, int fd)
{
	for (int i = 0; i < 256; i++) {	/* bounded: TCP agents get their turn */
		ssize_t n = recv(fd, c->udp_buf, VIGIL_STREAM_DGRAM_MAX + 1, MSG_DONTWAIT);
		uint32_t magic;

		if (n < 0)
			break;
		c->udp_datagrams++;
		if (n > VIGIL_STREAM_DGRAM_MAX || n < (ssize_t)sizeof(magic)) {
			bad(c, "size out of range");
			continue;
		}
		memcpy(&magic, c->udp_buf, sizeof(magic));
		if (n >= 8 && !memcmp(c->udp_buf, VIGIL_STREAM_MAGIC, 8))
			take_hello(c, c->udp_buf, n);
		else if (magic == VIGIL_STREAM_DGRAM_MAGIC && n >= (ssize_t)sizeof(struct vigil_stream_dgram))
			take_data(c, c->udp_buf, n);
		else
			bad(c, "bad magic");
	}
	collector_batch_out(c);
}
