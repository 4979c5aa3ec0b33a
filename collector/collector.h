/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vigil-collector's state: agent streams (one per agent boot and ring, they
 * outlive connections) and connections (bytes in flight, bounded). Every
 * byte a connection brings is hostile until lib/stream.c has checked it; a
 * connection that sends what the spec does not allow is closed with its
 * reason logged, and nothing else is affected.
 */
#ifndef VIGIL_COLLECTOR_H
#define VIGIL_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include "agent_health.h"
#include "buf.h"
#include "commit.h"
#include "conn_tls.h"
#include "event_format.h"
#include "export_file.h"
#include "publish.h"
#include "seq_window.h"
#include "stream.h"

#define CONN_BUF (256u << 10)	/* per connection: holds any whole record */
#define AGENT_HOLES 4		/* offset jumps remembered per agent */
#define AGENT_ACKS 16		/* acks waiting for JetStream per agent (more:
				 * the last one moves on, acks get coarser) */
#define ADDR_MAX 48		/* an IPv6 address as text, no port */
/* Bytes each agent's process cache may hold by default (--proc-cache-mb;
 * docs/stream.md, "Memory"): as many processes as fit, up to the agent's
 * own VIGIL_PROC_CACHE_MAX. A peer's long arguments and paths cost it its
 * own cache's hits, never the collector's memory. */
#define AGENT_PROC_BYTES (1u << 20)

struct conn;
struct conn_tls;
struct ssl_ctx_st;

/* One agent's stream: (boot id, ring id). Offsets are ring positions. */
struct agent {
	bool used;
	__u8 boot_id[16];
	uint32_t ring_id;
	char boot_str[33];
	struct vigil_formatter fmt;	/* node name and clock of the agent */
	struct vigil_seq_window win;
	uint64_t written;		/* stream offset taken into the batch */
	uint64_t out;			/* stream offset whose lines went out (file,
					 * JetStream's pipeline): what a failed batch
					 * rewinds to */
	uint64_t done;			/* stream offset whose lines are out and in
					 * JetStream: what the state file records */
	/* Acks waiting for their JetStream ticket (acks.c), oldest first:
	 * the agent is acknowledged up to upto, and done moves to written,
	 * once vigil_pub_done reaches ticket. */
	struct agent_ack {
		uint64_t ticket, upto, written;
	} acks[AGENT_ACKS];
	unsigned nacks;
	uint64_t ack_now;		/* acks.c: taken, to send once recorded */
	struct conn *conn;		/* live connection, if any */
	char owner[ADDR_MAX];		/* address that proved the identity last */
	/* Certificate name (first DNS SAN) that proved the identity over TLS
	 * ("": none yet): no other name, and no plain connection, may take it
	 * from then on, whatever the address. */
	char cert[VIGIL_STREAM_NAME_MAX + 1];
	__u8 cert_sha256[32];		/* of that name (zeros: none); what the state
					 * file keeps, so also set for a stream proved
					 * before a restart whose name is not known */
	/* Offsets an agent said it skipped (its spool dropped them): never
	 * written here. A later hello inside one proves the jump false. */
	struct agent_hole {
		uint64_t from, to;
		uint64_t seq_gaps;	/* the window's gap count when it was made */
		bool lost;	/* counted in lost_bytes (not: before the first hello) */
	} holes[AGENT_HOLES];
	unsigned nholes;
	uint64_t records, resent, gap_events, lost_bytes;
	uint64_t unknown_kinds;		/* records of kinds this build does not know */
	uint64_t out_of_window;		/* new offsets whose seq the window called old */
	uint64_t false_jumps;		/* holes proven false and taken back */
	bool udp;			/* heard over UDP: peer holds its hello */
	struct vigil_stream_peer peer;
	struct sockaddr_storage udp_from;	/* host whose hello made it a UDP
						 * stream: the only one heard */
	uint64_t udp_refused;		/* datagrams refused: not from that host,
					 * or the stream is TCP's */
	double last_seen;
	struct agent_health health;	/* what its health records say */
};

enum { EP_LISTEN_TCP = 1, EP_LISTEN_UDP, EP_CONN, EP_PUB };

struct conn {
	int kind;			/* EP_CONN: first, as in every epoll item */
	int fd;
	char peer[64];
	char host[ADDR_MAX];		/* the peer's address, without port: what
					 * an identity is bound to */
	__u8 addr[16];			/* the peer's address, IPv6 to its /64: the
					 * unit of --max-conns-per-addr */
	double last_rx;			/* bytes last received: idle since */
	bool hello_done;
	struct vigil_stream_peer hello;
	struct agent *agent;
	uint8_t *buf;
	size_t len;
	uint64_t offset;		/* stream offset of buf[0] */
	uint64_t acked;			/* last offset acknowledged */
	double opened, partial_since;	/* 0: no partial frame waiting */
	struct conn_tls *tls;		/* tls:// (conn_tls.h); NULL: clear text */
	unsigned events;		/* what epoll watches k->fd for */
};

struct collector {
	int epfd;
	struct vigil_export_file out;	/* fd -1: none (--publish without -o) */
	struct vigil_commit commit;
	struct vigil_pub *pub;		/* NULL: no --publish */
	int pub_kind;			/* EP_PUB: epoll's item for vigil_pub_fd */
	unsigned acking;		/* agents with acks waiting (a bound: may
					 * count some that have none left) */
	struct vigil_format_opts format;	/* each agent's formatter's */
	struct vigil_buf batch;		/* JSON lines of one read */
	struct agent *agents;
	unsigned max_agents;
	size_t proc_bytes;		/* each agent's process cache's budget */
	struct conn **conns;
	unsigned max_conns, nconns;
	unsigned max_per_addr;		/* 0: no cap (a collector in a fuzz target) */
	unsigned max_handshakes;	/* TLS handshakes an address may start a
					 * second (handshake_rate.c); 0: no limit */
	unsigned max_handshakes_all;	/* and all addresses together */
	uint64_t handshakes_refused, handshakes_refused_all;
	uint64_t handshakes_started, handshakes_known;	/* past both bounds; of
							 * those, by known addresses */
	double handshake_said, handshake_all_said;	/* last logged */
	uint64_t evicted;		/* connections closed to make room */
	struct conn **dead;		/* closed this round, freed after it: room
					 * for 2 * max_conns (see conn_room.c) */
	unsigned ndead;
	double hello_timeout, frame_timeout;
	/* An identity stays with the address that last proved it this long
	 * after its connection ends (--rebind-after): an agent whose address
	 * changed waits that long, a stranger claiming it meanwhile is refused. */
	double rebind_after;
	double peer_timeout;		/* keepalive and TCP_USER_TIMEOUT (listen.c) */
	bool tls;			/* a tls:// listener runs: certificate names count */
	uint64_t closed_hostile, refused;
	/* tls:// peers refused, by reason (conn_tls.h); each is also one of
	 * closed_hostile */
	uint64_t tls_refusals[TLS_REFUSED_N];
	uint8_t *udp_buf;		/* one datagram */
	uint64_t udp_datagrams, udp_bad, udp_unknown;
};

/* Takes fd as a new connection, making room for it (conn_room.c); closes
 * fd when it cannot. tls: the listener's TLS context (conn_tls.h), or NULL
 * for clear text. */
int collector_conn_open(struct collector *c, int fd, const struct sockaddr *sa,
			struct ssl_ctx_st *tls);
/* The peer's address as --max-conns-per-addr counts it: IPv4 as mapped
 * IPv6, IPv6 to its /64, anything else all zero. */
void collector_conn_addr(const struct sockaddr *sa, __u8 key[16]);
/* May addr (host: its text) start one more TLS handshake now? Counts and
 * logs a refusal (handshake_rate.c). */
bool collector_handshake_allowed(struct collector *c, const __u8 addr[16], const char *host);
/* An agent from addr was accepted over TLS (its certificate verified, its
 * hello taken): addr draws on the half of the global handshake budget kept
 * for agents seen before. */
void collector_handshake_done(const __u8 addr[16]);
/* Makes room for one more connection from addr, evicting one if need be
 * (conn_room.c); -EAGAIN when closed connections must be reaped first. */
int collector_conn_room(struct collector *c, const __u8 addr[16]);
/* Makes room for one more agent stream when every one of --max-agents has
 * a live connection, by the same rule: the longest-idle connection of the
 * address holding the most streams is closed (its agent loses nothing: it
 * reconnects and resumes at its last ack). */
int collector_agent_room(struct collector *c);
/* True when the stream has a live connection (ctx: the collector); the
 * commit table keeps its entry. */
bool collector_conn_live(void *ctx, const __u8 boot_id[16], uint32_t ring_id);
/* Reads what fd has and handles it (on TLS, also goes on with a handshake
 * or an ack that waited for the socket); the connection may be gone after. */
void collector_conn_readable(struct collector *c, struct conn *k);
void collector_conn_close(struct collector *c, struct conn *k, const char *why);
void collector_conn_reap(struct collector *c);
/* Closes connections that sit on a frame they never finish. */
void collector_conn_timeouts(struct collector *c, double now);

struct agent *collector_agent_get(struct collector *c, const struct vigil_stream_peer *p);
/* True when a certificate proved node name `name` (over TLS) for a stream
 * in the table: a clear-text hello may not use it. */
bool collector_name_certified(const struct collector *c, const char *name);
/* The SHA-256 of the certificate name that proved stream (boot id, ring
 * id), from its agent or, for one not loaded, the state file; NULL: none. */
const __u8 *collector_cert_bound(const struct collector *c, const struct agent *a,
				 const __u8 boot_id[16], uint32_t ring_id);
/* The agent of a stream already known, or NULL. */
struct agent *collector_agent_find(struct collector *c, const __u8 boot_id[16], uint32_t ring_id);
void collector_udp_readable(struct collector *c, int fd);
/* The address of ss, without port ("?" when it has none). */
void collector_host_name(const struct sockaddr_storage *ss, char *out, size_t n);
/* Checks and formats one record of a's stream, at ring offset offset, into
 * c->batch. new_offset:
 * the record's ring offset was never written before, so it is taken even
 * when its sequence number looks old (a forged jump in sequence numbers
 * must not blackhole real records); otherwise the sequence window drops
 * duplicates (UDP, which has no re-send to tell by offset). */
void collector_agent_record(struct collector *c, struct agent *a, const void *event,
			    uint64_t offset, bool new_offset);
/* The hello on k resumes a's stream at k->offset: records an offset jump
 * as a hole, or takes back holes that this offset proves false. */
void collector_agent_resume(struct collector *c, struct agent *a, const struct conn *k);
/* When k->offset falls in a hole of a's (offsets a hello said were dropped
 * on the agent's side), k proves that hole false: the stream is taken again
 * from the hole's start. True when it did. */
bool collector_agent_in_hole(struct agent *a, const struct conn *k);
/* The agent resumed past what was written: its records between were lost
 * on its side (spool past its bound). Reported as an event. */
void collector_agent_offset_gap(struct collector *c, struct agent *a, uint64_t from, uint64_t to);
void collector_agent_report(const struct agent *a);
/* a's lines past a->out did not go out: they are taken again when the
 * agent sends them again (it resumes at what was acknowledged). */
void collector_agent_rewind(struct agent *a);
/* Records a's progress in the state file's table (in memory until the next
 * vigil_commit_write): its offset written and its last hole, so that a
 * collector restarted can still prove that jump false. */
int collector_agent_commit(struct collector *c, const struct agent *a);
/* Binds a's stream to certificate name `name` (its table entry, and so the
 * state file, keeps the name's hash); -ENOSPC when the table has no room
 * for it (collector/commit.h): the claim is refused. */
int collector_agent_bind(struct collector *c, struct agent *a, const char *name);
/* Moves every connection's deadlines (hello, unfinished frame) later by
 * secs: the collector held that long and read nobody meanwhile. */
void collector_conn_postpone(struct collector *c, double secs);
/* Writes c->batch out and publishes it (see publish.h) as *ticket, then
 * empties it; 0 when every line is out (to JetStream's pipeline). */
int collector_batch_out(struct collector *c, uint64_t *ticket);
/* a's connection k has its lines up to upto out as ticket (acks.c): it is
 * acknowledged up to there once JetStream has them all. */
void collector_ack_later(struct collector *c, struct agent *a, uint64_t ticket, uint64_t upto);
/* Records and sends the acks whose tickets JetStream has acknowledged. */
void collector_acks(struct collector *c);
/* On tls://, has epoll watch k for what TLS waits for (EPOLLOUT only while
 * a write, such as an ack, is blocked). */
void collector_conn_tls_events(struct collector *c, struct conn *k);
/* Sends k an ack up to upto (k may be closed when it cannot take it). */
int collector_conn_ack(struct collector *c, struct conn *k, uint64_t upto);
void collector_agents_free(struct collector *c);

#endif
