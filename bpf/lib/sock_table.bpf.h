/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket table: what vigil keeps per TCP socket, found by the socket's
 * address.
 *
 * Every connection makes and removes an entry at each end and looks it up
 * at most state changes, so the table is an array of sets of
 * VIGIL_SOCK_WAYS entries: the address picks a set, whose keys lie side by
 * side; an entry is claimed with one compare-and-swap and freed with one
 * store. No lock, no allocation, and the verifier inlines the array
 * lookup. The preallocated hash it replaced (bucket lock, per-CPU free
 * lists, jhash) cost about 1 us more a connection (docs/network-events.md,
 * "Cost").
 *
 * A socket whose set is full goes to a small hash (vigil_socks_spill). Each
 * set counts its sockets there, so that only a set with some looks there,
 * and a close or a new socket at the same address always removes or
 * replaces the spilled copy: the table fails only when both are full, and
 * nothing stays in the spill past its socket or its address's next use.
 *
 * Keys are addresses, not cookies, because addresses are reused: an entry
 * that a missed close left behind (the programs detached meanwhile, or a
 * RST announced at a close that never came) is replaced when a socket
 * vigil sees start gets its address.
 */
#ifndef VIGIL_SOCK_TABLE_BPF_H
#define VIGIL_SOCK_TABLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include "ring.bpf.h"
#include "task.bpf.h"

struct vigil_sk {
	struct vigil_proc owner;
	__u64 start_ktime;	/* connect() or handshake done; 0: unknown, or not read
				 * (--report-only reads no clock) */
	__u32 flags;		/* enum vigil_conn_flags */
	__u8 dir;		/* enum vigil_conn_dir */
	__u8 reason;		/* enum vigil_close_reason: the first seen */
	__u8 closed;		/* its close was reported */
	__u8 refined;		/* owner checked at a send or receive */
	union {
		struct {
			__u16 sport;	/* local port: gone from the socket at CLOSE */
			__u8 rst_seen;	/* a RST was sent or received */
			__u8 accept_due;	/* accepted, its event not yet written */
		};
		/* The word accept_due is in, for the compare-and-exchange
		 * that clears it once (net.bpf.c: BPF has no byte atomics). */
		__u32 accept_word;
	};
	__u32 life;		/* which of the entry's lives: see vigil_sk_set */
};

/* A key is a socket's address; 0 is a free entry, and an address with its
 * low bit set (sockets are aligned) an entry being written, which no
 * lookup matches. x86 keeps the entry's stores before the key's; a weakly
 * ordered CPU would also need the lookups to load the key with acquire. */
#define VIGIL_SOCK_WRITING 1ULL

struct vigil_sock_set {
	__u64 key[VIGIL_SOCK_WAYS];
	struct vigil_sk sk[VIGIL_SOCK_WAYS];
	__u32 spilled;		/* this set's sockets in vigil_socks_spill */
	__u32 pad;
};

struct {
	/* VIGIL_SOCKS_DEFAULT sockets by default (about 10 MiB, taken up
	 * front); the agent's --max-sockets sets another size before load. */
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VIGIL_SOCKS_DEFAULT / VIGIL_SOCK_WAYS);
	__type(key, __u32);
	__type(value, struct vigil_sock_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_socks SEC(".maps");

struct {
	/* Two entries per set: sets that fill unevenly spill about one
	 * socket each at the table's nominal load. Allocated only when used. */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VIGIL_SOCKS_DEFAULT / VIGIL_SOCK_WAYS * 2);
	__type(key, __u64);
	__type(value, struct vigil_sk);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_socks_spill SEC(".maps");

/* vigil_socks' size, which the agent sets with it. */
const volatile __u32 vigil_sock_sets = VIGIL_SOCKS_DEFAULT / VIGIL_SOCK_WAYS;

/* Per CPU: a slot for each program that may be running on the CPU at
 * once (process context, a softirq that interrupts it, ...); and the
 * entries this CPU has set, which number their lives. */
struct vigil_sock_addr_slots {
	__u64 depth;
	__u64 addr[4];
	__u64 lives;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_sock_addr_slots);
} vigil_sock_addr SEC(".maps");

/*
 * A socket's key. The verifier does no arithmetic on a socket pointer, and
 * the set is chosen by hashing the address, so the address goes through
 * map memory, from which it reads back as a number (a program that may
 * read kernel pointers, as tracing programs must, may store one there). A
 * program that interrupts this one on the CPU (a softirq's) takes the
 * next slot, so the value read back is this socket's. A full, request or
 * timewait socket's sock_common is at its start, so any view of one
 * socket gives one key. 0: none.
 */
static __always_inline __u64 vigil_sk_key(const void *sk)
{
	__u32 zero = 0;
	struct vigil_sock_addr_slots *s = bpf_map_lookup_elem(&vigil_sock_addr, &zero);
	volatile __u64 *depth, *slot;
	__u64 d, key;

	if (!s)
		return 0;
	depth = &s->depth;
	d = *depth;
	*depth = d + 1;
	slot = &s->addr[d & 3];
	*slot = (__u64)(unsigned long)sk;
	key = *slot;
	*depth = d;
	return key;
}

/* Multiplicative hash, then the top 32 bits scaled to the set count (any
 * count, not only a power of two). */
static __always_inline struct vigil_sock_set *vigil_sock_set_of(__u64 key)
{
	__u64 h = (key * 0x9E3779B97F4A7C15ULL) >> 32;
	__u32 i = (h * vigil_sock_sets) >> 32;

	return bpf_map_lookup_elem(&vigil_socks, &i);
}

/* The table's fill, which the agent shows as a gauge (taken - freed +
 * spilled - unspilled, docs/operations.md): counted where an entry is won
 * or given up, so each once whatever runs at the same time. An atomic add,
 * not vigil_count's plain one: a softirq's program that interrupts a
 * process-context one on this CPU must not lose a count, which the gauge
 * would keep wrong for good. */
static __always_inline void vigil_sock_count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&vigil_counters, &which);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Removes key's spilled copy, if its set has any. */
static __always_inline void vigil_sock_unspill(struct vigil_sock_set *set, __u64 *key)
{
	if (set->spilled && !bpf_map_delete_elem(&vigil_socks_spill, key)) {
		__sync_fetch_and_sub(&set->spilled, 1);
		vigil_sock_count(VIGIL_CNT_NET_SOCK_UNSPILLED);
	}
}

static __always_inline struct vigil_sk *vigil_sk_get(const void *sk)
{
	__u64 key = vigil_sk_key(sk);
	struct vigil_sock_set *set = vigil_sock_set_of(key);

	if (!key || !set)
		return NULL;
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (set->key[i] == key)
			return &set->sk[i];
	return set->spilled ? bpf_map_lookup_elem(&vigil_socks_spill, &key) : NULL;
}

/* A number for an entry's new life, different (in practice: a per-CPU
 * count, wrapping at 2^22, with the CPU in the low bits) from the life
 * the entry had while a reader held it.
 * A reader that works on an entry without the socket's lock (refine, in
 * process context) checks it to tell that a softirq did not close the
 * socket and give the entry to another meanwhile. */
static __always_inline __u32 vigil_sock_life(void)
{
	__u32 zero = 0;
	struct vigil_sock_addr_slots *s = bpf_map_lookup_elem(&vigil_sock_addr, &zero);

	if (!s)
		return 0;
	return (__u32)(++s->lives << 10) | (bpf_get_smp_processor_id() & 1023);
}

/* Writes an entry: its new life first, whatever order the compiler copies
 * the rest in, so that a reader that checks `closed` and then the life
 * (refine) never sees the new entry's closed == 0 with the old life (a
 * freed entry has closed set). */
static __always_inline void vigil_sk_fill(struct vigil_sk *e, const struct vigil_sk *init)
{
	*(volatile __u32 *)&e->life = init->life;
	asm volatile("" ::: "memory");
	*e = *init;
}

/* Sets the socket's entry to *init (replacing one a missed close left),
 * with a new init->life; false, and counted, when there is no room. */
static __always_inline bool vigil_sk_set(const void *sk, struct vigil_sk *init)
{
	__u64 key = vigil_sk_key(sk);
	struct vigil_sock_set *set = vigil_sock_set_of(key);

	if (!key || !set) {
		vigil_count(VIGIL_CNT_NET_NO_STORAGE);
		return false;
	}
	init->life = vigil_sock_life();
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (set->key[i] == key) {
			vigil_sk_fill(&set->sk[i], init);
			vigil_sock_unspill(set, &key);	/* two paths set it at once */
			return true;
		}
	if (set->spilled && !bpf_map_update_elem(&vigil_socks_spill, &key, init, BPF_EXIST))
		return true;
	/* Claimed as being written, so that no lookup reads it half done. */
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (!set->key[i] &&
		    !__sync_val_compare_and_swap(&set->key[i], 0, key | VIGIL_SOCK_WRITING)) {
			vigil_sk_fill(&set->sk[i], init);
			__sync_lock_test_and_set(&set->key[i], key);	/* after the entry */
			vigil_sock_count(VIGIL_CNT_NET_SOCK_TAKEN);
			return true;
		}
	if (!bpf_map_update_elem(&vigil_socks_spill, &key, init, BPF_NOEXIST)) {
		__sync_fetch_and_add(&set->spilled, 1);
		vigil_sock_count(VIGIL_CNT_NET_SOCK_SPILLED);
		return true;
	}
	vigil_count(VIGIL_CNT_NET_NO_STORAGE);
	return false;
}

static __always_inline void vigil_sk_forget(const void *sk)
{
	__u64 key = vigil_sk_key(sk);
	struct vigil_sock_set *set = vigil_sock_set_of(key);

	if (!key || !set)
		return;
	/* Every way: two paths may have set it at once. Freed with a
	 * compare-and-swap, so that of two paths freeing one entry at once
	 * only one counts it. */
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (set->key[i] == key && __sync_val_compare_and_swap(&set->key[i], key, 0) == key)
			vigil_sock_count(VIGIL_CNT_NET_SOCK_FREED);
	vigil_sock_unspill(set, &key);
}

#endif
