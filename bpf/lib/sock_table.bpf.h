/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket table: what vigil keeps per TCP socket, found by the socket's
 * address.
 *
 * Every connection makes and removes an entry at each end and looks it up
 * at most state changes, so the table is an array of sets of
 * VIGIL_SOCK_WAYS entries: the address picks a set, the set's keys share
 * one cache line, an entry is claimed with one compare-and-swap and freed
 * with one store. No lock, no allocation, and the array lookup is inlined
 * by the verifier. A preallocated hash (bucket lock, per-CPU free lists,
 * jhash) cost about 1 us more a connection (docs/network-events.md, "Cost").
 *
 * A socket whose set is full goes to a small hash (vigil_socks_spill), so
 * the table fails only when both are full, and a lookup that misses the set
 * looks there.
 *
 * Keys are addresses, not cookies, because addresses are reused: an entry
 * that a missed close left behind (the programs detached meanwhile) is
 * replaced when a socket vigil sees start gets its address. A spilled
 * stale entry can outlive that (the new socket may find room in its set);
 * it is found only by a lookup of that address that misses the set.
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
	__u64 start_ktime;	/* connect() or handshake done; 0: unknown */
	__u32 flags;		/* enum vigil_conn_flags */
	__u8 dir;		/* enum vigil_conn_dir */
	__u8 reason;		/* enum vigil_close_reason: the first seen */
	__u8 closed;		/* its close was reported */
	__u8 refined;		/* owner checked at a send or receive */
	__u16 sport;		/* local port: gone from the socket at CLOSE */
	__u8 rst_seen;		/* a RST was sent or received */
	__u8 pad;
	__u32 pad2;
};

/* A key is a socket's address; 0 is a free entry, and an address with its
 * low bit set (sockets are aligned) an entry being written, which no
 * lookup matches. */
#define VIGIL_SOCK_WRITING 1ULL

struct vigil_sock_set {
	__u64 key[VIGIL_SOCK_WAYS];
	struct vigil_sk sk[VIGIL_SOCK_WAYS];
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
	/* One entry per set: enough for sets that fill unevenly. Allocated
	 * only when used. */
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VIGIL_SOCKS_DEFAULT / VIGIL_SOCK_WAYS);
	__type(key, __u64);
	__type(value, struct vigil_sk);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_socks_spill SEC(".maps");

/* vigil_socks' size, which the agent sets with it. */
const volatile __u32 vigil_sock_sets = VIGIL_SOCKS_DEFAULT / VIGIL_SOCK_WAYS;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} vigil_sock_addr SEC(".maps");

/*
 * A socket's key. The verifier does no arithmetic on a socket pointer, and
 * the set is chosen by hashing the address, so the address goes through
 * map memory, from which it reads back as a number (a privileged program
 * may store a pointer there). A full, request or timewait socket's
 * sock_common is at its start, so any view of one socket gives one key.
 */
static __always_inline __u64 vigil_sk_key(const void *sk)
{
	__u32 zero = 0;
	__u64 *a = bpf_map_lookup_elem(&vigil_sock_addr, &zero);

	if (!a)
		return 0;
	*a = (__u64)(unsigned long)sk;
	return *(volatile __u64 *)a;
}

/* Multiplicative hash, then the top 32 bits scaled to the set count (any
 * count, not only a power of two). */
static __always_inline struct vigil_sock_set *vigil_sock_set_of(__u64 key)
{
	__u64 h = (key * 0x9E3779B97F4A7C15ULL) >> 32;
	__u32 i = (h * vigil_sock_sets) >> 32;

	return bpf_map_lookup_elem(&vigil_socks, &i);
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
	return bpf_map_lookup_elem(&vigil_socks_spill, &key);
}

/* Sets the socket's entry to *init (replacing one a missed close left);
 * counted when there is no room. */
static __always_inline void vigil_sk_set(const void *sk, const struct vigil_sk *init)
{
	__u64 key = vigil_sk_key(sk);
	struct vigil_sock_set *set = vigil_sock_set_of(key);

	if (!key || !set)
		return;
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (set->key[i] == key) {
			set->sk[i] = *init;
			return;
		}
	/* Claimed as being written, so that no lookup reads it half done. */
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (!set->key[i] &&
		    !__sync_val_compare_and_swap(&set->key[i], 0, key | VIGIL_SOCK_WRITING)) {
			set->sk[i] = *init;
			__sync_lock_test_and_set(&set->key[i], key);	/* after the entry */
			return;
		}
	if (bpf_map_update_elem(&vigil_socks_spill, &key, init, BPF_ANY))
		vigil_count(VIGIL_CNT_NET_NO_STORAGE);
}

static __always_inline void vigil_sk_forget(const void *sk)
{
	__u64 key = vigil_sk_key(sk);
	struct vigil_sock_set *set = vigil_sock_set_of(key);
	bool found = false;

	if (!key || !set)
		return;
#pragma unroll
	for (int i = 0; i < VIGIL_SOCK_WAYS; i++)
		if (set->key[i] == key) {
			set->key[i] = 0;
			found = true;	/* all ways: two paths may have set it */
		}
	if (!found)
		bpf_map_delete_elem(&vigil_socks_spill, &key);
}

#endif
