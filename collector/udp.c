// SPDX-License-Identifier: GPL-2.0
/*
 * The UDP variant (docs/stream.md): whole datagrams, nothing acknowledged.
 * A datagram is checked whole, as hostile input; a bad one is dropped and
 * counted, and nothing else is affected (there is no connection to close).
 * Missing datagrams show as jumps in ring offsets (gap events) and, later,
 * as numbers missing from the sequence window.
 *
 * Nothing proves who sent a datagram, so a datagram may not touch a stream
 * that TCP proved (one with a connection now, or one whose offset the state
 * file records: a jumped offset would make the collector drop, and
 * acknowledge, that agent's real records), and a UDP stream is heard from
 * the host whose hello made it one: another host's hello (another type
 * table, another offset) or data is refused until the stream has been
 * silent for UDP_REBIND_S (an agent that moved, or a new node's address).
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "collector.h"
#include "log.h"

#define UDP_REBIND_S 10.0	/* ten hellos missed */
/* The batch goes out past this, as a TCP read's does: 256 datagrams of
 * 65000 bytes can format to 100 MB of JSON (a byte becomes \u00XX). */
#define UDP_BATCH_FLUSH (1u << 20)

static void bad(struct collector *c, const char *why)
{
	if (!c->udp_bad++)
		vlog_info("dropping a bad datagram: %s (counted from now on)", why);
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	return false;
}

void collector_host_name(const struct sockaddr_storage *ss, char *out, size_t n)
{
	const void *addr = ss->ss_family == AF_INET6 ?
				   (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
				   (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, addr, out, n))
		snprintf(out, n, "?");
}

/* A stream TCP proved: a datagram may not move it. a may be NULL. */
static bool tcp_stream(const struct collector *c, const struct agent *a, const __u8 boot_id[16],
		       uint32_t ring_id)
{
	if (a && (a->conn || !a->udp))
		return true;
	return vigil_commit_find(&c->commit, boot_id, ring_id) != NULL;
}

/* Counts a datagram refused for stream a, saying why the first time for
 * that stream; for a stream not in the table (known from the state file),
 * at the 1st, 2nd, 4th, 8th... bad datagram: a flood logs little. */
static void refuse(struct collector *c, struct agent *a, const char *kind,
		   const struct sockaddr_storage *from, const __u8 boot_id[16], uint32_t ring_id,
		   const char *why)
{
	char host[INET6_ADDRSTRLEN], boot[33];

	c->udp_bad++;
	if (a ? a->udp_refused++ != 0 : (c->udp_bad & (c->udp_bad - 1)) != 0)
		return;
	collector_host_name(from, host, sizeof(host));
	vigil_boot_id_str(boot_id, boot);
	vlog_info("refusing %s from %s for the stream of boot %s, ring %u: %s%s", kind, host, boot,
		  ring_id, why, a ? " (counted from now on)" : "");
}

static void take_hello(struct collector *c, const uint8_t *p, size_t n,
		       const struct sockaddr_storage *from)
{
	struct vigil_stream_peer peer;
	const char *why = "truncated";
	int r = vigil_stream_hello_parse(p, n, &peer, &why);
	struct agent *a;
	double now = vigil_stream_now();

	if (r <= 0 || (size_t)r != n)
		return bad(c, why);
	if (collector_name_certified(c, peer.node_name))
		return refuse(c, NULL, "a hello datagram", from, peer.boot_id, peer.ring_id,
			      "its node name was proved by a certificate over TLS");
	a = collector_agent_find(c, peer.boot_id, peer.ring_id);
	if (tcp_stream(c, a, peer.boot_id, peer.ring_id))
		return refuse(c, a, "a hello datagram", from, peer.boot_id, peer.ring_id,
			      "the stream is known over TCP");
	if (a && !same_host(&a->udp_from, from) && now - a->last_seen < UDP_REBIND_S)
		return refuse(c, a, "a hello datagram", from, peer.boot_id, peer.ring_id,
			      "the stream is heard from another host");
	if (!a && !(a = collector_agent_get(c, &peer)))
		return bad(c, "too many agents");
	if (!a->udp || !same_host(&a->udp_from, from)) {
		char host[INET6_ADDRSTRLEN];

		collector_host_name(from, host, sizeof(host));
		vlog_info("agent %s (boot %s, ring %u) sends datagrams from %s", peer.node_name,
			  a->boot_str, a->ring_id, host);
		a->udp = true;
		a->udp_from = *from;
	}
	a->peer = peer;
	a->last_seen = now;
}

static void take_data(struct collector *c, const uint8_t *p, size_t n,
		      const struct sockaddr_storage *from)
{
	struct vigil_stream_dgram h;
	struct agent *a;
	size_t off;

	memcpy(&h, p, sizeof(h));
	if (h.version != VIGIL_STREAM_VERSION || h.len != n - sizeof(h) || (h.offset & 7))
		return bad(c, "header disagrees with the datagram");
	a = collector_agent_find(c, h.boot_id, h.ring_id);
	if (a && tcp_stream(c, a, h.boot_id, h.ring_id))
		return refuse(c, a, "a data datagram", from, h.boot_id, h.ring_id,
			      "the stream is known over TCP");
	if (!a) {
		c->udp_unknown++;	/* before its hello: nothing to decode it with */
		return;
	}
	if (!same_host(&a->udp_from, from))
		return refuse(c, a, "a data datagram", from, h.boot_id, h.ring_id,
			      "the stream's hello came from another host");
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
			collector_agent_record(c, a, rec.event, h.offset + off - sizeof(h), false);
		off += rec.span;
	}
	if (h.offset + h.len > a->written)
		a->written = h.offset + h.len;
	a->last_seen = vigil_stream_now();
}

void collector_udp_readable(struct collector *c, int fd)
{
	uint64_t ticket;

	for (int i = 0; i < 256; i++) {	/* bounded: TCP agents get their turn */
		struct sockaddr_storage from = {};
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, c->udp_buf, VIGIL_STREAM_DGRAM_MAX + 1, MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);
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
			take_hello(c, c->udp_buf, n, &from);
		else if (magic == VIGIL_STREAM_DGRAM_MAGIC && n >= (ssize_t)sizeof(struct vigil_stream_dgram))
			take_data(c, c->udp_buf, n, &from);
		else
			bad(c, "bad magic");
		if (c->batch.len > UDP_BATCH_FLUSH)
			collector_batch_out(c, &ticket);
	}
	collector_batch_out(c, &ticket);	/* no acks: nothing waits for it */
}
