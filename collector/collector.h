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
#include "buf.h"
#include "commit.h"
#include "event_format.h"
#include "export_file.h"
#include "publish.h"
#include "seq_window.h"
#include "stream.h"

#define CONN_BUF (256u << 10)	/* per connection: holds any whole record */
#define AGENT_PROC_CACHE 1024	/* processes cached per agent */

struct conn;

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
					 * JetStream): what a failed batch rewinds to */
	struct conn *conn;		/* live connection, if any */
	uint64_t records, resent, gap_events, lost_bytes;
	bool udp;			/* heard over UDP: peer holds its hello */
	struct vigil_stream_peer peer;
	double last_seen;
};

enum { EP_LISTEN_TCP = 1, EP_LISTEN_UDP, EP_CONN };

struct conn {
	int kind;			/* EP_CONN: first, as in every epoll item */
	int fd;
	char peer[64];
	bool hello_done;
	struct vigil_stream_peer hello;
	struct agent *agent;
	uint8_t *buf;
	size_t len;
	uint64_t offset;		/* stream offset of buf[0] */
	uint64_t acked;			/* last offset acknowledged */
	double opened, partial_since;	/* 0: no partial frame waiting */
};

struct collector {
	int epfd;
	struct vigil_export_file out;	/* fd -1: none (--publish without -o) */
	struct vigil_commit commit;
	struct vigil_pub *pub;		/* NULL: no --publish */
	struct vigil_format_opts format;	/* each agent's formatter's */
	struct vigil_buf batch;		/* JSON lines of one read */
	struct agent *agents;
	unsigned max_agents;
	struct conn **conns;
	unsigned max_conns, nconns;
	struct conn **dead;		/* closed this round, freed after it */
	unsigned ndead;
	double hello_timeout, frame_timeout;
	uint64_t closed_hostile, refused;
	uint8_t *udp_buf;		/* one datagram */
	uint64_t udp_datagrams, udp_bad, udp_unknown;
};

int collector_conn_open(struct collector *c, int fd, const struct sockaddr *sa);
/* Reads what fd has and handles it; the connection may be gone after. */
void collector_conn_readable(struct collector *c, struct conn *k);
void collector_conn_close(struct collector *c, struct conn *k, const char *why);
void collector_conn_reap(struct collector *c);
/* Closes connections that sit on a frame they never finish. */
void collector_conn_timeouts(struct collector *c, double now);

struct agent *collector_agent_get(struct collector *c, const struct vigil_stream_peer *p);
/* The agent of a stream already known, or NULL. */
struct agent *collector_agent_find(struct collector *c, const __u8 boot_id[16], uint32_t ring_id);
void collector_udp_readable(struct collector *c, int fd);
/* Checks and formats one record of a's stream into c->batch (or drops a
 * duplicate). */
void collector_agent_record(struct collector *c, struct agent *a, const void *event);
/* The agent resumed past what was written: its records between were lost
 * on its side (spool past its bound). Reported as an event. */
void collector_agent_offset_gap(struct collector *c, struct agent *a, uint64_t from, uint64_t to);
void collector_agent_report(const struct agent *a);
/* a's lines past a->out did not go out: they are taken again when the
 * agent sends them again (it resumes at what was acknowledged). */
void collector_agent_rewind(struct agent *a);
/* Moves every connection's deadlines (hello, unfinished frame) later by
 * secs: the collector held that long and read nobody meanwhile. */
void collector_conn_postpone(struct collector *c, double secs);
/* Writes c->batch out and publishes it (see publish.h), then empties it;
 * 0 when every line is out. */
int collector_batch_out(struct collector *c);
void collector_agents_free(struct collector *c);

#endif
