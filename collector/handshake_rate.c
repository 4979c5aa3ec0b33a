// SPDX-License-Identifier: GPL-2.0
/*
 * TLS handshakes an address may start, per second (--max-handshakes-per-addr):
 * a full handshake costs the collector's one thread a key exchange and a
 * signature before it knows who is asking, so one host opening and dropping
 * connections in a loop would starve every agent. Each address (an IPv6
 * peer by its /64, as the connection caps count it) has a token bucket of
 * that rate and twice that burst, in a table of HANDSHAKE_SLOTS buckets
 * found by hash; a bucket taken over by another address starts full, so a
 * collision can only let more in, never keep an agent out longer. A refused
 * connection is closed before any TLS byte; the agent retries with backoff.
 */
#include <string.h>
#include "collector.h"
#include "log.h"

#define HANDSHAKE_SLOTS 4096

struct bucket {
	__u8 addr[16];
	double tokens, at;
	bool used;
};

static struct bucket buckets[HANDSHAKE_SLOTS];

bool collector_handshake_allowed(struct collector *c, const __u8 addr[16], const char *host)
{
	struct bucket *b = &buckets[vigil_fnv1a(addr, 16, VIGIL_FNV_START) % HANDSHAKE_SLOTS];
	double now = vigil_stream_now(), burst = 2.0 * c->max_handshakes;

	if (!c->max_handshakes)
		return true;
	if (!b->used || memcmp(b->addr, addr, 16)) {
		*b = (struct bucket){ .tokens = burst, .at = now, .used = true };
		memcpy(b->addr, addr, 16);
	}
	b->tokens += (now - b->at) * c->max_handshakes;
	if (b->tokens > burst)
		b->tokens = burst;
	b->at = now;
	if (b->tokens >= 1) {
		b->tokens -= 1;
		return true;
	}
	c->handshakes_refused++;
	if (now - c->handshake_said >= 10) {
		c->handshake_said = now;
		vlog_info("refusing TLS handshakes from %s: more than %u a second "
			  "(--max-handshakes-per-addr); said at most every 10 s", host,
			  c->max_handshakes);
	}
	return false;
}
