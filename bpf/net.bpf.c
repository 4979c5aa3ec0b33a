// SPDX-License-Identifier: GPL-2.0
/*
 * TCP lifecycle with the process behind each socket, from tracepoints only:
 * process_listen, process_connect (established or failed), process_accept,
 * process_close (bytes, retransmits, duration, who ended it) and
 * process_reset (sent or received). The same points feed the report
 * counters (lib/report.bpf.h), which count whether or not events are sent.
 *
 * The owner lives in vigil's socket table (lib/sock.bpf.h). The reason a
 * connection ended is the first of: a FIN sent, a FIN received, a RST sent,
 * a RST received, a timeout.
 *
 * An iterator marks the sockets that existed before the agent, so that their
 * close is reported with what is known (their totals, the uid). It only
 * reads and marks: it never destroys a socket.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "lib/ring.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/sock.bpf.h"
#include "lib/report_pairs.bpf.h"
#include "lib/filter.bpf.h"
#include "lib/fd.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline void remote_of(struct vigil_remote *r, const struct vigil_tuple *t, __u8 dir)
{
	__builtin_memcpy(r->addr, t->daddr, 16);
	r->family = t->family;
	r->direction = dir;
	r->port = dir == VIGIL_CONN_IN ? t->sport : t->dport;
	r->netns = t->netns;
}

/* The time for a connection's start, latency or duration, read unless
 * --report-only, where no event needs it: the five clock reads (helper
 * calls; kvm-clock on a VM) were about 350 of the 1,790 ns of bpf_stats
 * time a connection took in that mode. 0: not read. A socket that opens in report-only
 * mode and connects or closes after a restart in per-event mode has no
 * latency or duration. */
static __always_inline __u64 net_clock(void)
{
	return vigil_net_flags() & VIGIL_NET_REPORT_ONLY ? 0 : bpf_ktime_get_ns();
}

/* now - then, 0 when either is unknown. */
static __always_inline __u64 net_since(__u64 then, __u64 now)
{
	return then && now ? now - then : 0;
}

/* Export filters (filter.bpf.h) ask of a network event its socket's
 * recorded owner and the socket's namespace. */
static __always_inline bool net_filtered(__u32 kind, const struct vigil_proc *owner,
					 const struct sock *sk)
{
	if (!vigil_filter_on(kind))
		return false;
	return vigil_filtered_owner(kind, owner,
				    sk ? BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) : 0);
}

/* now: net_clock(), which also stamps the event. The cookie is made (the
 * kernel's, at its first request) only for a socket with an event: users
 * pair a connection's events by it, as Tetragon's sock_arg.cookie. A
 * program with no BTF pointer to the socket passes sk NULL and the cookie
 * it read. */
static __always_inline void emit_conn(__u16 type, const struct sock *sk, __u64 cookie,
				      const struct vigil_sk *s, const struct vigil_tuple *t,
				      __u64 now, __u64 latency, __u32 error)
{
	struct vigil_conn *ev;

	if (!vigil_net_wanted(t, s->dir) ||
	    net_filtered(VIGIL_FK_CONNECT + (type - VIGIL_EV_CONNECT), &s->owner, sk))
		return;
	ev = vigil_reserve_at(type, sizeof(*ev), now);
	if (!ev)
		return;
	ev->proc = s->owner;
	ev->tuple = *t;
	ev->latency_ns = latency;
	ev->error = error;
	ev->flags = s->flags;
	ev->cookie = sk ? bpf_get_socket_cookie((void *)sk) : cookie;
	vigil_submit(ev);
}

/* Whether an accepted socket's accept event is still to be written, once:
 * true for the one caller that writes it. An accept() on one CPU and a
 * reset or close in softirq on another may both ask: the flag is cleared by
 * a compare-and-exchange of the word it shares with sport and rst_seen,
 * tried again when one of those changed meanwhile (a plain test and clear
 * let both pass, and the event was written twice). */
static __always_inline bool take_accept_due(struct vigil_sk *s)
{
	struct vigil_sk due = { .accept_due = 0xff };	/* its bits in the word */

	for (int i = 0; i < 4; i++) {
		__u32 old = *(volatile __u32 *)&s->accept_word;

		if (!(old & due.accept_word))
			return false;
		if (__sync_val_compare_and_swap(&s->accept_word, old, old & ~due.accept_word) == old)
			return true;
	}
	return false;	/* the word kept changing: let a later caller write it */
}

/* The accept event of an accepted socket, named after its owner at the
 * time: written when the process that accepts it is known (accept()
 * returned it: accepted_by_caller; or its first send or receive in process
 * context), or, if neither comes, before anything else about it (a reset,
 * its close). */
static __always_inline void write_accept_due(const struct sock *sk, struct vigil_sk *s)
{
	struct vigil_tuple t = {};

	if (!take_accept_due(s))
		return;
	vigil_tuple_from_sk(&t, &sk->__sk_common);
	if (!t.sport)
		t.sport = s->sport;
	emit_conn(VIGIL_EV_ACCEPT, sk, 0, s, &t, net_clock(), 0, 0);
}

/* Counts an established connection for its owner and its remote end. */
static __always_inline void count_open(const struct vigil_sk *s, const struct vigil_tuple *t)
{
	union vigil_remote_words rem = {};

	remote_of(&rem.r, t, s->dir);
	vigil_report_pair_add(&s->owner, &rem, 1, 0, 0);
}

static __always_inline void count_bytes(const struct vigil_sk *s, const struct vigil_tuple *t,
					__u64 sent, __u64 received)
{
	union vigil_remote_words rem = {};

	remote_of(&rem.r, t, s->dir);
	vigil_report_pair_add(&s->owner, &rem, 0, sent, received);
}

static __always_inline void set_reason(struct vigil_sk *s, __u8 reason)
{
	if (!s->reason)
		s->reason = reason;
}

/* Reports the close; true when the kernel sends a RST right after it:
 * tcp_disconnect (linger 0, unread data, abort) goes from ESTABLISHED or
 * CLOSE_WAIT to CLOSE first, and the entry stays for that RST's event.
 * (From FIN_WAIT1/2 it does too, but so does a normal end: not told apart.) */
static __always_inline bool on_close(const struct sock *sk, struct vigil_sk *s, int oldstate)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	__u32 err = sk->sk_err;
	__u64 now = net_clock(), sent, received;
	struct vigil_tuple t = {};
	bool rst_follows = false;
	struct vigil_close *ev;

	if (s->closed)
		return false;
	write_accept_due(sk, s);
	s->closed = 1;
	vigil_tuple_from_sk(&t, &sk->__sk_common);
	if (!t.sport)
		t.sport = s->sport;	/* the port was released before CLOSE */
	if (oldstate == TCP_SYN_SENT) {
		/* A connect that never completed: its caller gets sk_err,
		 * or gave up itself. */
		struct vigil_report_counts *c = vigil_report_proc(&s->owner, vigil_report_slot());

		if (c)
			vigil_report_add(c->connect_errors, 1);
		emit_conn(VIGIL_EV_CONNECT, sk, 0, s, &t, now, net_since(s->start_ktime, now),
			  err ?: ECONNABORTED);
		return false;
	}
	/* sk_err is set before CLOSE only where the kernel gives up
	 * (tcp_write_err: ETIMEDOUT, or the soft error an ICMP left, such as
	 * EHOSTUNREACH) or after a RST, sent or received, that rst_seen
	 * already says; tcp_close and tcp_disconnect set it after. */
	if ((oldstate == TCP_ESTABLISHED || oldstate == TCP_CLOSE_WAIT) &&
	    !s->rst_seen && !err)
		rst_follows = true;
	if (oldstate == TCP_LISTEN)
		s->reason = VIGIL_CLOSE_LISTENER;
	else
		set_reason(s, vigil_fin_reason(oldstate) ?:
			      err && !s->rst_seen ? VIGIL_CLOSE_TIMEOUT :
			      rst_follows ? VIGIL_CLOSE_LOCAL_RST : VIGIL_CLOSE_UNKNOWN);
	if (!tp)
		return rst_follows;
	sent = vigil_tcp_data_sent(tp);
	received = vigil_tcp_data_received(tp);
	if (oldstate != TCP_LISTEN)
		count_bytes(s, &t, sent, received);
	if (!vigil_net_wanted(&t, s->dir) || net_filtered(VIGIL_FK_CLOSE, &s->owner, sk))
		return rst_follows;
	ev = vigil_reserve_at(VIGIL_EV_CLOSE, sizeof(*ev), now);
	if (!ev)
		return rst_follows;
	ev->proc = s->owner;
	ev->tuple = t;
	ev->bytes_sent = sent;
	ev->bytes_received = received;
	ev->duration_ns = net_since(s->start_ktime, now);
	ev->retransmits = tp->total_retrans;
	ev->reason = s->reason;
	ev->direction = s->dir;
	ev->state = oldstate;
	ev->pad = 0;
	ev->error = err;
	ev->flags = s->flags;
	ev->cookie = bpf_get_socket_cookie((void *)sk);
	vigil_submit(ev);
	return rst_follows;
}

/* A socket that starts a life in process context: the caller owns it. */
static __always_inline void own(struct vigil_sk *init, __u8 dir)
{
	*init = (struct vigil_sk){ .start_ktime = net_clock(), .dir = dir };
	vigil_owner_current(&init->owner);
}

/* A listener's child, established: in softirq, right after the kernel
 * cloned it (its SYN_RECV, on the same ACK) and before accept() gives it a
 * socket. Its local end names the listener and so its owner, until the
 * process that accepts it is known (accept_due): in a pre-forked server
 * that is a worker, not the listener's creator. Its entry starts here, not
 * at SYN_RECV: one lookup less, and a child that is never established has
 * nothing to report but resets. */
static __always_inline void accepted(const struct sock *sk)
{
	struct vigil_sk init = { .dir = VIGIL_CONN_IN, .flags = VIGIL_CONN_NO_OWNER };
	const struct vigil_listener *l;
	struct vigil_tuple t = {};

	vigil_tuple_from_sk(&t, &sk->__sk_common);
	l = vigil_listener_of(&t);
	if (l) {
		init.owner = l->owner;
		init.flags = l->flags & ~VIGIL_CONN_PREEXISTING;
	}
	init.start_ktime = net_clock();
	init.sport = t.sport;
	init.accept_due = vigil_net_wanted(&t, VIGIL_CONN_IN);
	if (init.accept_due)	/* made now, for accept()'s program to read */
		bpf_get_socket_cookie((void *)sk);
	count_open(&init, &t);
	/* No room: no later hook will find it, so its accept is now. */
	if (!vigil_sk_set(sk, &init) && init.accept_due)
		emit_conn(VIGIL_EV_ACCEPT, sk, 0, &init, &t, init.start_ktime, 0, 0);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(net_state, const struct sock *sk, int oldstate, int newstate)
{
	struct vigil_tuple t = {};
	struct vigil_sk *s;
	__u16 family;

	vigil_prog_run(VIGIL_PROG_NET_STATE);
	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;

	switch (newstate) {
	case TCP_SYN_SENT: {
		struct vigil_sk init;

		own(&init, VIGIL_CONN_OUT);	/* in connect(): current is the owner */
		vigil_sk_set(sk, &init);
		return 0;
	}
	case TCP_LISTEN: {
		struct vigil_sk init;

		own(&init, VIGIL_CONN_LISTEN);	/* in listen() */
		vigil_tuple_from_sk(&t, &sk->__sk_common);
		init.sport = t.sport;
		vigil_sk_set(sk, &init);
		vigil_listener_add(sk, &t, &init.owner, 0);
		emit_conn(VIGIL_EV_LISTEN, sk, 0, &init, &t, init.start_ktime, 0, 0);
		return 0;
	}
	case TCP_ESTABLISHED:
		/* A Fast Open child has its socket (accept() may have taken
		 * it) before its handshake completes: no entry says so. */
		if (oldstate == TCP_SYN_RECV && (!sk->sk_socket || !vigil_sk_get(sk))) {
			accepted(sk);
			return 0;
		}
		break;
	}

	/* FIN_WAIT1 and CLOSE_WAIT say who sent the first FIN, but so does the
	 * state the socket closes from (vigil_fin_reason). Of a connection's
	 * ten state changes, only four look the socket up (ESTABLISHED and
	 * CLOSE, at each end); a child's SYN_RECV, FIN_WAIT1/2, CLOSE_WAIT
	 * and LAST_ACK end here. */
	if (newstate != TCP_ESTABLISHED && newstate != TCP_CLOSE)
		return 0;
	s = vigil_sk_get(sk);
	if (!s)
		return 0;
	switch (newstate) {
	case TCP_ESTABLISHED:
		/* A connect done (also a simultaneous open, through SYN_RECV) */
		if (oldstate == TCP_SYN_SENT || oldstate == TCP_SYN_RECV) {
			__u64 now = net_clock();

			vigil_tuple_from_sk(&t, &sk->__sk_common);
			s->sport = t.sport;
			count_open(s, &t);
			emit_conn(VIGIL_EV_CONNECT, sk, 0, s, &t, now, net_since(s->start_ktime, now), 0);
		}
		break;
	case TCP_CLOSE:
		if (oldstate == TCP_LISTEN) {
			vigil_tuple_from_sk(&t, &sk->__sk_common);
			vigil_listener_remove(sk, &t);
		}
		if (!on_close(sk, s, oldstate))
			vigil_sk_forget(sk);
		break;
	}
	return 0;
}

/* sk: the socket (full, request or timewait), NULL without one. */
static __always_inline void emit_reset(const struct sock *sk, const struct vigil_sk *s,
				       const struct vigil_tuple *t, __u8 dir, __u8 state,
				       __u16 reason)
{
	struct vigil_report_counts *c;
	struct vigil_proc nobody = {};
	struct vigil_reset *ev;

	c = vigil_report_proc(s ? &s->owner : &nobody, vigil_report_slot());
	if (c) {
		if (dir == VIGIL_RESET_SENT)
			vigil_report_add(c->resets_sent, 1);
		else
			vigil_report_add(c->resets_received, 1);
	}
	if (!vigil_net_wanted(t, s ? s->dir : VIGIL_CONN_UNKNOWN) ||
	    net_filtered(VIGIL_FK_RESET, s ? &s->owner : &nobody, sk))
		return;
	ev = vigil_reserve(VIGIL_EV_RESET, sizeof(*ev));
	if (!ev)
		return;
	if (s) {
		ev->proc = s->owner;
		ev->flags = s->flags;
	} else {
		ev->proc = nobody;
		ev->flags = VIGIL_CONN_NO_OWNER;
	}
	ev->tuple = *t;
	ev->direction = dir;
	ev->state = state;
	ev->reason = reason;
	ev->cookie = sk ? bpf_get_socket_cookie((void *)sk) : 0;
	vigil_submit(ev);
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(net_rst_in, struct sock *sk)
{
	struct vigil_tuple t = {};
	struct vigil_sk *s;

	vigil_prog_run(VIGIL_PROG_NET_RST_IN);
	if (!sk)
		return 0;
	s = vigil_sk_get(sk);
	vigil_tuple_from_sk(&t, &sk->__sk_common);
	if (s) {
		write_accept_due(sk, s);
		set_reason(s, vigil_fin_reason(sk->__sk_common.skc_state) ?: VIGIL_CLOSE_PEER_RST);
		s->rst_seen = 1;
		if (t.sport)
			s->sport = t.sport;	/* a refused connect's only chance */
	}
	emit_reset(sk, s, &t, VIGIL_RESET_RECEIVED, sk->__sk_common.skc_state, 0);
	return 0;
}

/* sk is NULL (no socket took the segment), a request or timewait
 * mini-socket, or a full socket; skb is NULL for an active reset. */
static __always_inline int rst_out(const struct sock *sk, const struct sk_buff *skb, int reason)
{
	struct vigil_tuple t = {};
	struct vigil_sk *s = NULL;
	struct tcp_sock *tp;
	__u8 state = 0;

	if (sk) {
		tp = bpf_skc_to_tcp_sock((void *)sk);
		if (tp)
			s = vigil_sk_get(tp);
		state = sk->__sk_common.skc_state;
		if (s) {
			write_accept_due(sk, s);
			set_reason(s, vigil_fin_reason(state) ?: VIGIL_CLOSE_LOCAL_RST);
			s->rst_seen = 1;
		}
		vigil_tuple_from_sk(&t, &sk->__sk_common);
		if (s && !t.sport)
			t.sport = s->sport;	/* a RST sent after CLOSE */
	} else if (!skb || !vigil_tuple_from_rx_skb(&t, skb)) {
		return 0;
	}
	emit_reset(sk, s, &t, VIGIL_RESET_SENT, state, reason);
	if (s && s->closed)
		vigil_sk_forget(sk);	/* the RST its close announced */
	return 0;
}

SEC("tp_btf/tcp_send_reset")
int BPF_PROG(net_rst_out, const struct sock *sk, const struct sk_buff *skb, int reason)
{
	vigil_prog_run(VIGIL_PROG_NET_RST_OUT);
	return rst_out(sk, skb, reason);
}

/* Where the tracepoint has no reason (Debian 12's 6.1): the event's is 0 (the agent
 * loads one of the two programs). */
SEC("tp_btf/tcp_send_reset")
int BPF_PROG(net_rst_out_noreason, const struct sock *sk, const struct sk_buff *skb)
{
	vigil_prog_run(VIGIL_PROG_NET_RST_OUT);
	return rst_out(sk, skb, 0);
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(net_retrans)
{
	vigil_prog_run(VIGIL_PROG_NET_RETRANS);
	vigil_count(VIGIL_CNT_NET_RETRANS);
	return 0;
}

/* Sockets whose owner has been checked, per CPU, by cookie: a socket's
 * later sends and receives (most of a keep-alive connection's life) then
 * need no table lookup. Cookies, unlike addresses, are never reused, so a
 * slot can be missed, never wrong. A socket gets its cookie (the kernel
 * makes it at first request) at its second send or receive that moved
 * bytes, not its first: a short connection does not pay for it. */
#define VIGIL_CHECKED_SLOTS 256

struct vigil_checked {
	__u64 cookie[VIGIL_CHECKED_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_checked);
} vigil_checked SEC(".maps");

/* Makes the calling process s's owner, once. */
static __always_inline void name_owner(struct vigil_sk *s)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vigil_proc owner;
	__u32 life;

	if (!(s->flags & VIGIL_CONN_NO_OWNER) && s->owner.pid == t->tgid) {
		s->refined = 1;
		return;
	}
	/* This runs without the socket's lock: a softirq may close the
	 * socket and its entry be reused for another (the table's elements
	 * are reused at once). The owner is made aside, and written only if
	 * the entry is still in the life it was in: the window is a few
	 * instructions, not the owner's lookups. */
	life = s->life;
	vigil_owner_current(&owner);
	/* closed before life: an entry's next life is written before its
	 * closed is cleared (vigil_sk_fill). */
	if (*(volatile __u8 *)&s->closed || *(volatile __u32 *)&s->life != life)
		return;
	s->owner = owner;
	s->flags = (s->flags & ~VIGIL_CONN_NO_OWNER) | VIGIL_CONN_REFINED;
	s->refined = 1;
}

/* The first send or receive happens in the owner's context: an accepted
 * socket inherited its listener's owner, which a pre-forked worker or a
 * passed descriptor makes wrong; a socket found at start had none. */
static __always_inline void refine(struct sock *sk)
{
	struct vigil_checked *checked;
	struct vigil_sk *s;
	__u32 zero = 0;
	__u64 cookie;

	/* Every send and receive of every socket passes here: leave the
	 * others before anything else. */
	if (!sk || sk->sk_protocol != IPPROTO_TCP)
		return;
	checked = bpf_map_lookup_elem(&vigil_checked, &zero);
	if (!checked)
		return;
	cookie = sk->__sk_common.skc_cookie.counter;	/* 0: none made yet */
	if (cookie && checked->cookie[cookie & (VIGIL_CHECKED_SLOTS - 1)] == cookie)
		return;
	s = vigil_sk_get(sk);
	if (!s)
		return;
	if (s->refined) {
		write_accept_due(sk, s);
		cookie = bpf_get_socket_cookie(sk);
		checked->cookie[cookie & (VIGIL_CHECKED_SLOTS - 1)] = cookie;
		return;
	}
	name_owner(s);
	write_accept_due(sk, s);
}

/* Only calls that moved bytes: an end of file or an error (EAGAIN on a
 * non-blocking socket, most of all) says nothing of who does the I/O. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(net_send, struct sock *sk, int ret)
{
	vigil_prog_run(VIGIL_PROG_NET_SEND);
	if (ret > 0)
		refine(sk);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(net_recv, struct sock *sk, int ret)
{
	vigil_prog_run(VIGIL_PROG_NET_RECV);
	if (ret > 0)
		refine(sk);
	return 0;
}

/* accept() names an accepted socket's owner, in the process that accepted
 * it, which is right for pre-forked workers (a descriptor passed on keeps
 * that owner), and writes its accept event, as Tetragon's inet_csk_accept
 * fires in the caller. An accept these do not see (io_uring, a 32-bit
 * caller) leaves both to the first send or receive (refine), or with
 * --no-io-hooks to the socket's reset or close. */
struct vigil_sys_exit {
	__u64 common;		/* the tracepoint's common fields */
	__s32 syscall_nr;
	__s64 ret;		/* the new descriptor, or -errno */
};

#ifndef S_IFSOCK
#define S_IFMT 0170000
#define S_IFSOCK 0140000
#endif

/* The TCP socket behind file f, NULL if f is not one. */
static __always_inline struct sock *vigil_file_tcp_sock(struct file *f)
{
	struct socket *so;
	struct sock *sk;

	if ((BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
		return NULL;
	so = BPF_CORE_READ(f, private_data);
	if (!so || BPF_CORE_READ(so, file) != f)
		return NULL;
	sk = BPF_CORE_READ(so, sk);
	return sk && BPF_CORE_READ(sk, sk_protocol) == IPPROTO_TCP ? sk : NULL;
}

static __always_inline int accepted_by_caller(__s64 fd)
{
	struct file *f = vigil_fd_file(bpf_get_current_task_btf(), fd);
	struct sock *sk = f ? vigil_file_tcp_sock(f) : NULL;
	struct vigil_sk *s;

	if (!sk)
		return 0;
	s = vigil_sk_get(sk);
	/* Nothing holds the socket here: another thread of the process may
	 * close the descriptor (and the socket be freed and its address
	 * reused) in between. The descriptor still naming the same file after
	 * the lookup leaves a window of a few instructions, as in refine. */
	if (!s || s->dir != VIGIL_CONN_IN || vigil_fd_file(bpf_get_current_task_btf(), fd) != f)
		return 0;
	if (!s->refined)
		name_owner(s);
	if (take_accept_due(s)) {
		struct vigil_tuple t = {};

		vigil_tuple_from_sk_read(&t, &sk->__sk_common);
		if (!t.sport)
			t.sport = s->sport;
		emit_conn(VIGIL_EV_ACCEPT, NULL, BPF_CORE_READ(sk, __sk_common.skc_cookie.counter),
			  s, &t, net_clock(), 0, 0);
	}
	return 0;
}

SEC("tp/syscalls/sys_exit_accept4")
int net_accept4(struct vigil_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_NET_ACCEPT4);
	return accepted_by_caller(ctx->ret);
}

SEC("tp/syscalls/sys_exit_accept")
int net_accept(struct vigil_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_NET_ACCEPT);
	return accepted_by_caller(ctx->ret);
}

/* Marks TCP sockets that have no storage yet: they existed before the
 * agent. Runs in the network namespace of the thread that made the
 * iterator; reads and marks only. */
SEC("iter/tcp")
int net_preexisting(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct vigil_sk init = { .flags = VIGIL_CONN_PREEXISTING | VIGIL_CONN_NO_OWNER };
	struct vigil_tuple t = {};
	struct tcp_sock *tp;
	__u8 state;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp || vigil_sk_get(tp))
		return 0;
	state = skc->skc_state;
	if (state == TCP_CLOSE || state == TCP_SYN_SENT)
		return 0;
	init.owner.uid = ctx->uid;
	init.owner.auid = (__u32)-1;
	init.dir = state == TCP_LISTEN ? VIGIL_CONN_LISTEN : VIGIL_CONN_UNKNOWN;
	init.sport = skc->skc_num;
	vigil_sk_set(tp, &init);
	if (state == TCP_LISTEN) {
		vigil_tuple_from_sk(&t, skc);
		vigil_listener_add(tp, &t, &init.owner, init.flags);
	}
	return 0;
}
