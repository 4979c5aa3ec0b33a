// SPDX-License-Identifier: GPL-2.0
/*
 * TLS handshakes the collector starts, per second. A full handshake costs
 * the collector's one thread a key exchange and a signature before it knows
 * who is asking, so a peer opening and dropping connections in a loop would
 * starve every agent. Two bounds, checked at accept, before any TLS byte:
 *
 * - Per address (--max-handshakes-per-addr; an IPv6 peer by its /64, as the
 *   connection caps count it): a token bucket of that rate and twice that
 *   burst, in a table of HANDSHAKE_SLOTS buckets found by hash; a bucket
 *   taken over by another address starts full, so a collision can only let
 *   more in, never keep an agent out longer.
 * - For all addresses together (--max-handshakes): one bucket of that rate
 *   and twice that burst, whose lower half only addresses that completed a
 *   handshake before (an agent accepted over TLS from there) may draw on:
 *   strangers stop at half. A flood from many addresses then costs at most that rate of
 *   handshakes, and the agents already seen always find the reserved half
 *   (refilled at the full rate while strangers wait). Known addresses are
 *   kept in a table of KNOWN_SLOTS found by hash, the last one seen per
 *   slot: a collision makes an agent a stranger again until its next
 *   handshake, never the reverse.
 *
 * A refused connection is closed at once; the agent retries with backoff.
 */
#include <string.h>
#include "collector.h"
#include "fnv.h"
#include "log.h"

#define HANDSHAKE_SLOTS 4096
#define KNOWN_SLOTS 4096

struct bucket {
	__u8 addr[16];
	double tokens, at;
	bool used;
};

static struct bucket buckets[HANDSHAKE_SLOTS];
static struct bucket global;
static struct {
	__u8 addr[16];
	bool used;
} known[KNOWN_SLOTS];

static uint32_t hash(const __u8 addr[16])
{
	return vigil_fnv1a(addr, 16, VIGIL_FNV_START);
}

static void refill(struct bucket *b, double now, unsigned rate)
{
	b->tokens += (now - b->at) * rate;
	if (b->tokens > 2.0 * rate)
		b->tokens = 2.0 * rate;
	b->at = now;
}

static bool is_known(const __u8 addr[16])
{
	unsigned i = hash(addr) % KNOWN_SLOTS;

	return known[i].used && !memcmp(known[i].addr, addr, 16);
}

void collector_handshake_done(const __u8 addr[16])
{
	unsigned i = hash(addr) % KNOWN_SLOTS;

	memcpy(known[i].addr, addr, 16);
	known[i].used = true;
}

static bool per_addr(struct collector *c, const __u8 addr[16], const char *host, double now)
{
	struct bucket *b = &buckets[hash(addr) % HANDSHAKE_SLOTS];

	if (!c->max_handshakes)
		return true;
	if (!b->used || memcmp(b->addr, addr, 16)) {
		*b = (struct bucket){ .tokens = 2.0 * c->max_handshakes, .at = now, .used = true };
		memcpy(b->addr, addr, 16);
	}
	refill(b, now, c->max_handshakes);
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

static bool all_addrs(struct collector *c, bool seen, double now)
{
	if (!c->max_handshakes_all)
		return true;
	if (!global.used)
		global = (struct bucket){ .tokens = 2.0 * c->max_handshakes_all, .at = now,
					  .used = true };
	refill(&global, now, c->max_handshakes_all);
	/* Strangers stop at the reserved half. */
	if (global.tokens >= 1 + (seen ? 0 : c->max_handshakes_all)) {
		global.tokens -= 1;
		return true;
	}
	c->handshakes_refused_all++;
	if (now - c->handshake_all_said >= 10) {
		c->handshake_all_said = now;
		vlog_info("refusing TLS handshakes from addresses not seen before: more than %u a "
			  "second from all (--max-handshakes; half is kept for agents that completed "
			  "a handshake before); said at most every 10 s", c->max_handshakes_all);
	}
	return false;
}

bool collector_handshake_allowed(struct collector *c, const __u8 addr[16], const char *host)
{
	double now = vigil_stream_now();
	bool seen = is_known(addr);

	if (!per_addr(c, addr, host, now) || !all_addrs(c, seen, now))
		return false;
	c->handshakes_started++;
	c->handshakes_known += seen;
	return true;
}
