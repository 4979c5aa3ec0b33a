// SPDX-License-Identifier: GPL-2.0
/*
 * Room for a new connection. Slots are the collector's to share, and a peer
 * that says hello and then nothing must not keep agents out:
 *  - one address holds at most --max-conns-per-addr connections (an IPv6
 *    peer is counted by its /64, which one host usually has whole); past
 *    it, the address's own longest-idle connection makes room;
 *  - when every slot is taken, the longest-idle connection of the address
 *    holding the most connections makes room (ties: the idlest).
 * So a new connection always gets in, and who loses a slot is whoever holds
 * the most while doing the least. An agent evicted loses nothing (its ring
 * is its retransmit buffer): it reconnects and resumes at its last ack.
 * "Idle" is time since the connection last brought bytes.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"
#include "log.h"

void collector_conn_addr(const struct sockaddr *sa, __u8 key[16])
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(key, 0, 16);
	if (sa->sa_family == AF_INET) {
		memcpy(key, v4mapped, 12);
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const __u8 *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		memcpy(key, a, memcmp(a, v4mapped, 12) ? 8 : 16);
	}
}

static void evict(struct collector *c, struct conn *k, unsigned held, const char *rule)
{
	char why[192];

	snprintf(why, sizeof(why), "evicted for a new connection: its address holds %u "
		 "connections (%s), this one idle the longest (%.1f s)", held, rule,
		 vigil_stream_now() - k->last_rx);
	c->evicted++;
	collector_conn_close(c, k, why);
}

static int by_addr_then_idle(const void *a, const void *b)
{
	const struct conn *x = *(struct conn *const *)a, *y = *(struct conn *const *)b;
	int d = memcmp(x->addr, y->addr, 16);

	return d ? d : (x->last_rx > y->last_rx) - (x->last_rx < y->last_rx);
}

/* The longest-idle connection of the address holding the most; with
 * agents_only, counting only connections past their hello. */
static struct conn *most_held(struct collector *c, bool agents_only, unsigned *held)
{
	struct conn **v = malloc((c->nconns + 1) * sizeof(*v)), *best = NULL;
	unsigned n = 0;

	if (!v)
		return NULL;
	for (unsigned i = 0; i < c->nconns; i++)
		if (!agents_only || c->conns[i]->agent)
			v[n++] = c->conns[i];
	qsort(v, n, sizeof(*v), by_addr_then_idle);
	*held = 0;
	for (unsigned i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !memcmp(v[j]->addr, v[i]->addr, 16); j++)
			;
		if (j - i > *held || (j - i == *held && v[i]->last_rx < best->last_rx)) {
			*held = j - i;
			best = v[i];	/* each group is sorted idlest first */
		}
	}
	free(v);
	return best;
}

int collector_conn_room(struct collector *c, const __u8 addr[16])
{
	struct conn *idlest = NULL;
	unsigned held = 0;

	/* Closed connections wait in c->dead (2 * max_conns) until the round
	 * ends: an eviction may add one only while half of it is free. */
	if (c->max_per_addr) {
		for (unsigned i = 0; i < c->nconns; i++) {
			struct conn *k = c->conns[i];

			if (memcmp(k->addr, addr, 16))
				continue;
			held++;
			if (!idlest || k->last_rx < idlest->last_rx)
				idlest = k;
		}
		if (held >= c->max_per_addr) {
			if (c->ndead >= c->max_conns)
				return -EAGAIN;
			evict(c, idlest, held, "--max-conns-per-addr");
			return 0;
		}
	}
	if (c->nconns < c->max_conns)
		return 0;
	if (c->ndead >= c->max_conns)
		return -EAGAIN;
	if (!(idlest = most_held(c, false, &held)))
		return -ENOMEM;
	evict(c, idlest, held, "the most of any, with --max-conns reached");
	return 0;
}

int collector_agent_room(struct collector *c)
{
	struct conn *idlest;
	unsigned held;

	if (c->ndead >= c->max_conns)
		return -EAGAIN;
	if (!(idlest = most_held(c, true, &held)))
		return -ENOSPC;
	evict(c, idlest, held, "the most agent streams of any, with --max-agents reached");
	return 0;
}

bool collector_conn_live(void *ctx, const __u8 boot_id[16], uint32_t ring_id)
{
	struct collector *c = ctx;

	for (unsigned i = 0; i < c->nconns; i++) {
		const struct agent *a = c->conns[i]->agent;

		if (a && a->ring_id == ring_id && !memcmp(a->boot_id, boot_id, 16))
			return true;
	}
	return false;
}
