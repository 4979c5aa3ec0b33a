/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Network observation events (TCP lifecycle, resets seen) and the periodic
 * reports built in BPF: type ids VIGIL_EV_NET_FIRST..LAST and
 * VIGIL_EV_REPORT_FIRST..LAST, counters from VIGIL_CNT_NET_FIRST.
 * Included by events.h; do not include directly.
 *
 * Every connection event names its socket by struct vigil_tuple: the local
 * end is "source", the remote end "destination", for outgoing and incoming
 * connections alike. docs/network-events.md describes the events as users
 * read them.
 */
#ifndef VIGIL_NET_EVENTS_H
#define VIGIL_NET_EVENTS_H

enum vigil_net_type {
	VIGIL_EV_CONNECT = VIGIL_EV_NET_FIRST,	/* struct vigil_conn */
	VIGIL_EV_ACCEPT,			/* struct vigil_conn */
	VIGIL_EV_LISTEN,			/* struct vigil_conn */
	VIGIL_EV_CLOSE,				/* struct vigil_close */
	VIGIL_EV_RESET,				/* struct vigil_reset */
	VIGIL_EV_REPORT_PROC = VIGIL_EV_REPORT_FIRST,	/* struct vigil_report_proc */
	VIGIL_EV_REPORT_REMOTE,				/* struct vigil_report_remote */
	VIGIL_EV_REPORT_END,				/* struct vigil_report_end */
};

/* Which way a connection was opened. */
enum vigil_conn_dir {
	VIGIL_CONN_UNKNOWN = 0,	/* found by the socket iterator at start */
	VIGIL_CONN_OUT = 1,	/* connect() */
	VIGIL_CONN_IN = 2,	/* accepted from a listener */
	VIGIL_CONN_LISTEN = 3,	/* a listening socket */
};

/* Who ended a connection: the first of these the socket saw wins, in this
 * order of precedence (a RST decides over FINs exchanged before it). */
enum vigil_close_reason {
	VIGIL_CLOSE_UNKNOWN = 0,
	VIGIL_CLOSE_LOCAL_FIN = 1,	/* this end sent the first FIN */
	VIGIL_CLOSE_PEER_FIN = 2,	/* the peer sent the first FIN */
	VIGIL_CLOSE_LOCAL_RST = 3,	/* this end sent a RST */
	VIGIL_CLOSE_PEER_RST = 4,	/* a RST came in */
	VIGIL_CLOSE_TIMEOUT = 5,	/* retransmissions or keepalives gave up */
	VIGIL_CLOSE_LISTENER = 6,	/* a listening socket was closed */
};

enum vigil_conn_flags {
	VIGIL_CONN_PREEXISTING = 1 << 0,	/* existed before the agent started */
	VIGIL_CONN_NO_OWNER = 1 << 1,		/* no process known: proc is zero */
	VIGIL_CONN_REFINED = 1 << 2,	/* owner taken from the first send/recv, or accept() */
};

/* A TCP socket's ends. IPv4 addresses sit in the first 4 bytes of the
 * 16, the rest zero; ports in host byte order. */
struct vigil_tuple {
	__u8 saddr[16];		/* local */
	__u8 daddr[16];		/* remote */
	__u16 sport;
	__u16 dport;
	__u16 family;		/* AF_INET (2) or AF_INET6 (10) */
	__u8 protocol;		/* IPPROTO_TCP */
	__u8 pad;
	__u32 netns;		/* network namespace inode */
	__u32 pad2;
};

/*
 * process_connect (when established, or when the connect failed: error is
 * then the positive errno the caller got, ECONNREFUSED for a RST, ETIMEDOUT),
 * process_accept (when the handshake completed), process_listen.
 */
struct vigil_conn {
	struct vigil_hdr hdr;
	struct vigil_proc proc;	/* the owner; zero when flags has NO_OWNER */
	struct vigil_tuple tuple;
	__u64 latency_ns;	/* connect: SYN sent to established/failed */
	__u32 error;
	__u32 flags;		/* enum vigil_conn_flags */
	__u64 cookie;		/* the socket's cookie (SO_COOKIE), never its address */
};

/* process_close: the socket left the TCP state machine. Bytes are payload
 * over the socket's whole life, each byte once: sent (retransmissions not
 * counted again) and received in order (SYN and FIN not counted). */
struct vigil_close {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	struct vigil_tuple tuple;
	__u64 bytes_sent;
	__u64 bytes_received;
	__u64 duration_ns;	/* connect or accept to close; 0 when unknown */
	__u32 retransmits;	/* segments retransmitted */
	__u8 reason;		/* enum vigil_close_reason */
	__u8 direction;		/* enum vigil_conn_dir */
	__u8 state;		/* TCP state it closed from */
	__u8 pad;
	__u32 error;		/* the socket's pending errno, if any */
	__u32 flags;		/* enum vigil_conn_flags */
	__u64 cookie;		/* as vigil_conn's */
};

enum vigil_reset_dir {
	VIGIL_RESET_SENT = 1,
	VIGIL_RESET_RECEIVED = 2,
};

/* process_reset: the kernel sent or took a RST. A RST sent in answer to a
 * segment for no socket (a refused SYN) has no owner. */
struct vigil_reset {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	struct vigil_tuple tuple;
	__u8 direction;		/* enum vigil_reset_dir */
	__u8 state;		/* the socket's TCP state; 0 without a socket */
	__u16 reason;		/* sent: the kernel's enum sk_rst_reason */
	__u32 flags;		/* enum vigil_conn_flags */
	__u64 cookie;		/* as vigil_conn's; 0 without a socket */
};

/*
 * Reports. The BPF timer closes a period every interval; period id N counts
 * what happened between its start and end (CLOCK_MONOTONIC ns). A period is
 * reported one tick after it ends, so that programs still adding to it when
 * it ended have finished (docs/network-events.md): every count lands in
 * exactly one report. One report is the process and remote records of a
 * period, then one report_end that says how many there were.
 */
struct vigil_period {
	__u64 id;
	__u64 start_ktime;
	__u64 end_ktime;
};

/* What one process (exec key) did in a period. Connections and resets are
 * counted when they happen, bytes when their connection closes. */
struct vigil_report_counts {
	__u64 execs;		/* execs of its children */
	__u64 connects;		/* outgoing, established */
	__u64 connect_errors;	/* outgoing, refused or timed out */
	__u64 accepts;
	__u64 bytes_sent;
	__u64 bytes_received;
	__u64 resets_sent;
	__u64 resets_received;
};

struct vigil_report_proc {
	struct vigil_hdr hdr;
	struct vigil_period period;
	struct vigil_proc proc;
	struct vigil_report_counts c;
};

/* A remote end as seen from one network namespace: its address and the
 * service port (the remote port of an outgoing connection, the local port of
 * an accepted one). The same address seen from two namespaces may be two
 * hosts, so they are counted apart. */
struct vigil_remote {
	__u8 addr[16];
	__u16 port;
	__u16 family;
	__u8 direction;		/* enum vigil_conn_dir */
	__u8 pad[3];
	__u32 netns;
	__u32 pad2;
};

struct vigil_report_remote {
	struct vigil_hdr hdr;
	struct vigil_period period;
	struct vigil_remote remote;
	__u64 connections;	/* established */
	__u64 bytes_sent;
	__u64 bytes_received;
};

struct vigil_report_end {
	struct vigil_hdr hdr;
	struct vigil_period period;
	__u32 procs;		/* process records sent for this period */
	__u32 remotes;		/* remote records sent */
	__u32 lost;		/* records the full ring refused */
	__u32 pad;
	__u64 interval_ns;
	__u64 table_full;	/* counts lost to a full table, all time (all CPUs'
				 * VIGIL_CNT_REPORT_FULL): a change is a loss */
};

/* Counter slots (per CPU, in vigil_counters). */
enum vigil_net_counter {
	VIGIL_CNT_NET_RETRANS = VIGIL_CNT_NET_FIRST,	/* tcp_retransmit_skb */
	VIGIL_CNT_NET_FILTERED,		/* events not sent: report-only, filters */
	VIGIL_CNT_NET_NO_STORAGE,	/* no room in the socket table */
	VIGIL_CNT_REPORT_FULL,		/* report counts lost: table full */
	VIGIL_CNT_REPORT_TICKS,		/* periods closed by the timer */
	/* The socket table's fill: entries taken and freed in its sets, and
	 * sockets put in and taken out of its spill (in use: taken - freed
	 * + spilled - unspilled; sock_table.bpf.h) */
	VIGIL_CNT_NET_SOCK_TAKEN,
	VIGIL_CNT_NET_SOCK_FREED,
	VIGIL_CNT_NET_SOCK_SPILLED,
	VIGIL_CNT_NET_SOCK_UNSPILLED,
	VIGIL_CNT_NET_LAST_USED,
};

/* Run-time settings the agent writes into the pinned vigil_net_config map
 * at every start; programs that outlive the agent read them from there. */
enum vigil_net_config_flags {
	VIGIL_NET_REPORT_ONLY = 1 << 0,	/* no per-connection events */
	VIGIL_NET_NO_LISTEN = 1 << 1,	/* no events about listening sockets */
	VIGIL_NET_NO_LOOPBACK = 1 << 2,	/* no events when both ends are loopback */
};

struct vigil_net_config {
	__u32 flags;
	__u32 pad;
};

/* The socket table (bpf/lib/sock_table.bpf.h): sets of VIGIL_SOCK_WAYS
 * entries, VIGIL_SOCKS_DEFAULT sockets unless --max-sockets says. */
#define VIGIL_SOCK_WAYS 8
#define VIGIL_SOCKS_DEFAULT (1u << 17)

/* Input of the report_start syscall program (BPF_PROG_TEST_RUN). */
struct vigil_report_start {
	__u64 interval_ns;	/* 0 stops the timer */
};

VIGIL_STATIC_ASSERT(sizeof(struct vigil_tuple) == 48, "vigil_tuple layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_conn) == 144, "vigil_conn layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_close) == 168, "vigil_close layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_reset) == 136, "vigil_reset layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_report_proc) == 160, "vigil_report_proc layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_remote) == 32, "vigil_remote layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_report_remote) == 104, "vigil_report_remote layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_report_end) == 80, "vigil_report_end layout");
VIGIL_STATIC_ASSERT(VIGIL_EV_RESET <= VIGIL_EV_NET_LAST, "net ids in range");
VIGIL_STATIC_ASSERT(VIGIL_EV_REPORT_END <= VIGIL_EV_REPORT_LAST, "report ids in range");
VIGIL_STATIC_ASSERT((int)VIGIL_CNT_NET_LAST_USED <= (int)VIGIL_CNT_ENFORCE_FIRST, "net counters fit");

#endif
