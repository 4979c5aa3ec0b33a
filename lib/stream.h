/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The stream from an agent to a collector (docs/stream.md is the spec).
 *
 *   agent -> collector: one hello, then the ring's records as they lie in
 *                       the ring: {u32 len (BUSY, DISCARD bits); u32 pg_off}
 *                       the event, padding to 8.
 *   collector -> agent: ack frames carrying the stream offset up to which
 *                       the collector has written events out.
 *
 * The stream offset of a record is its position in the agent's ring, so an
 * ack is directly the position the agent may release. Everything here reads
 * bytes from the network: every length is checked against what was received
 * and against fixed limits before it is used. Nothing here allocates.
 */
#ifndef VIGIL_STREAM_H
#define VIGIL_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <vigil/events.h>
#include "buf.h"

#define VIGIL_STREAM_MAGIC "VIGILSTR"	/* 8 bytes, no terminator on the wire */
#define VIGIL_STREAM_VERSION 1
#define VIGIL_STREAM_ACK_MAGIC 0x4b434156u	/* "VACK" little-endian */
/* A refusal (collector to agent), laid out as an ack: magic, the reason's
 * code in flags, offset 0; sent once before the collector closes a
 * connection whose hello it refuses, so the agent can say why. */
#define VIGIL_STREAM_REFUSE_MAGIC 0x46455256u	/* "VREF" little-endian */
enum vigil_stream_refusal {
	VIGIL_REFUSE_NAME = 1,		/* hello's node name is not the certificate's */
	VIGIL_REFUSE_BOUND_CERT,	/* the stream is bound to another certificate */
	VIGIL_REFUSE_BOUND_ADDR,	/* the stream is bound to another address */
	VIGIL_REFUSE_CLEAR_NAME,	/* clear text naming a certified node */
	VIGIL_REFUSE_FULL,		/* no room for the stream */
	VIGIL_REFUSE_MAX = VIGIL_REFUSE_FULL,
};
#define VIGIL_STREAM_LE (1u << 0)	/* hello flag: records are little-endian */

#define VIGIL_STREAM_NAME_MAX 255
#define VIGIL_STREAM_TYPES_MAX 128
#define VIGIL_STREAM_HELLO_MAX 4096
/* Ring offsets past this are refused: a ring would take centuries to get
 * there, and the receiver's arithmetic on offsets stays far from wrapping. */
#define VIGIL_STREAM_OFFSET_MAX (1ull << 62)
/* A record's footprint on the wire can never exceed this. */
#define VIGIL_STREAM_REC_MAX (((VIGIL_EVENT_MAX_SIZE) + 8 + 7) & ~7UL)

struct vigil_stream_hello {
	char magic[8];
	__u16 version;
	__u16 hello_len;	/* this struct, type table, node name, padding to 8 */
	__u32 schema_version;	/* VIGIL_SCHEMA_VERSION of the records */
	__u8 boot_id[16];	/* the node's boot id: seq numbers are per boot */
	__u32 ring_id;		/* the ring map's id: offsets are per ring */
	__u32 flags;		/* VIGIL_STREAM_LE */
	__u64 start_offset;	/* ring position of the first record that follows */
	__u64 ring_size;
	__s64 realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC on the node */
	__u32 agent_pid;	/* the agent's credentials */
	__u32 agent_uid;
	__u32 agent_gid;
	__u16 node_name_len;
	__u16 ntypes;
	/* struct vigil_stream_type types[ntypes]; char node_name[node_name_len]; */
};

#define VIGIL_STREAM_TYPE_VARIABLE (1u << 0)	/* size is the minimum */
struct vigil_stream_type {
	__u16 type;
	__u16 flags;
	__u32 size;
};

struct vigil_stream_ack {
	__u32 magic;
	__u32 flags;
	__u64 offset;	/* everything before this stream offset is written out */
};

VIGIL_STATIC_ASSERT(sizeof(struct vigil_stream_hello) == 80, "hello layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_stream_type) == 8, "type layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_stream_ack) == 16, "ack layout");

/*
 * UDP: each datagram is whole. A hello datagram is a hello as above, sent at
 * the start and every second; a data datagram is this header then whole
 * records, the first at ring offset `offset`. Nothing is acknowledged: a
 * receiver counts what is missing from the offsets and sequence numbers.
 */
#define VIGIL_STREAM_DGRAM_MAGIC 0x44474956u	/* "VIGD" little-endian */
#define VIGIL_STREAM_DGRAM_MAX 65000	/* header and records */
struct vigil_stream_dgram {
	__u32 magic;
	__u16 version;
	__u16 flags;
	__u8 boot_id[16];
	__u32 ring_id;
	__u32 len;	/* bytes of records that follow */
	__u64 offset;
};
VIGIL_STATIC_ASSERT(sizeof(struct vigil_stream_dgram) == 40, "dgram layout");

/* A parsed hello: what a receiver keeps. */
struct vigil_stream_peer {
	__u8 boot_id[16];
	uint32_t ring_id;
	uint64_t start_offset;
	uint64_t ring_size;
	int64_t realtime_offset_ns;
	uint32_t pid, uid, gid;
	char node_name[VIGIL_STREAM_NAME_MAX + 1];
	/* per type id: expected size, 0 when the sender has no such type */
	uint32_t type_size[VIGIL_EV_TYPE_MAX + 1];
	uint8_t type_variable[VIGIL_EV_TYPE_MAX + 1];
};

/* Appends the hello for this node and ring to b. realtime_offset_ns is
 * the one the agent's own formatter uses, so both render the same times. */
void vigil_stream_hello_build(struct vigil_buf *b, const char *node_name, const __u8 boot_id[16],
			      uint32_t ring_id, uint64_t ring_size, uint64_t start_offset,
			      int64_t realtime_offset_ns);
/* Parses a hello at the start of p[0..n). Returns the bytes it takes, 0 when
 * more bytes are needed, -EPROTO with *why set when the bytes are not a hello
 * this receiver accepts. */
int vigil_stream_hello_parse(const void *p, size_t n, struct vigil_stream_peer *out,
			     const char **why);

/* True when s[0..n) is valid UTF-8 with no control characters (C0, DEL,
 * C1): safe to log and to use in a subject as it is. */
bool vigil_utf8_text(const char *s, size_t n);

/* One record on the wire. */
struct vigil_stream_rec {
	const void *event;	/* NULL for a discarded record */
	uint32_t len;		/* event bytes */
	uint32_t span;		/* bytes taken on the wire */
};
/* Parses the record at p[0..n): 1 with *out set, 0 when incomplete, -EPROTO
 * with *why when the record is malformed or disagrees with the schema the
 * peer announced (the connection must be closed). */
/* True when type is a kind of this build's schema. A record of a kind it
 * does not know (a newer minor version's) is parsed with event set, to be
 * counted and skipped by the caller. */
bool vigil_stream_type_known(uint16_t type);
int vigil_stream_rec_parse(const struct vigil_stream_peer *peer, const void *p, size_t n,
			   struct vigil_stream_rec *out, const char **why);

void vigil_stream_ack_build(struct vigil_stream_ack *a, uint64_t offset);
void vigil_stream_refusal_build(struct vigil_stream_ack *a, enum vigil_stream_refusal why);
/* What refusal frame a says, for the log ("reason N" for a code this build
 * does not know); NULL when a is not a refusal. */
const char *vigil_stream_refusal_text(const struct vigil_stream_ack *a);
/* 0 when a is a well-formed ack, else -EPROTO. */
int vigil_stream_ack_check(const struct vigil_stream_ack *a);

/* "tcp://HOST:PORT", "tls://HOST:PORT" or "udp://HOST:PORT" (HOST a name,
 * an IPv4 address or an IPv6 address in brackets): the socket type
 * (SOCK_STREAM, SOCK_DGRAM) and the address; -EINVAL (logged) when url is
 * not one of these. */
struct sockaddr_storage;
int vigil_stream_url(const char *url, int *socktype, struct sockaddr_storage *addr,
		     unsigned *addrlen);
/* The URL's HOST as written (no brackets), in host[0..n). */
int vigil_stream_url_host(const char *url, char *host, size_t n);
/* The URL's form alone, with no name resolved: a command line is checked
 * with it (a bad one exits 2); 0 or -EINVAL after saying why. */
int vigil_stream_url_check(const char *url);

/* CLOCK_MONOTONIC in seconds: timeouts, backoff, holds. */
double vigil_stream_now(void);

/* This boot's id from /proc/sys/kernel/random/boot_id. */
int vigil_boot_id(__u8 out[16]);
/* "b1c2...": 32 hex digits and a NUL. */
void vigil_boot_id_str(const __u8 id[16], char out[33]);

#endif
