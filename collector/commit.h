/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the collector has written out, kept beside its export file
 * (PATH.state) so that a collector killed and restarted neither loses nor
 * doubles events: after each batch is written, the export file's size and
 * every agent stream's offset are recorded together; an ack is sent only
 * after that. At start, whatever the export file holds past the recorded
 * size was never acknowledged: it is cut off, and the agents re-send it.
 *
 * Two slots, written in turn, each with a generation and a checksum: a
 * write torn by a crash leaves the other slot intact.
 *
 * The table is bounded and cannot fill for good: every reboot of a node is
 * a new stream, so entries carry when their stream was last heard; those
 * not heard for forget_after are forgotten (vigil_commit_retire), and when
 * the table is full the entry least recently heard that has no live
 * connection makes room, but an entry bound to a certificate makes room only
 * for a stream of that same certificate (the binding is what keeps another
 * node out of the stream: losing it to eviction would hand the stream to
 * whoever claims it next). Forgetting an entry costs little: a stream heard
 * again is taken from the offset its agent resumes at, its last ack, which
 * is at most the offset forgotten (records written after the last ack that
 * reached it would be written again).
 *
 * File format 2 (format 1, the same slots of 32-byte entries without a file
 * header, is read and converted): a 32-byte file header (magic, format,
 * entry size, entries a slot holds, checksum), written only when the file
 * is made (a new file renamed into place), then the two slots.
 */
#ifndef VIGIL_COLLECTOR_COMMIT_H
#define VIGIL_COLLECTOR_COMMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <linux/types.h>

struct vigil_commit_entry {
	__u8 boot_id[16];
	__u32 ring_id;
	__u32 pad;
	__u64 offset;		/* stream offset written out */
	__u64 last_seen;	/* CLOCK_REALTIME seconds the stream was last heard */
	__u64 hole_from;	/* offsets the agent jumped over that were never */
	__u64 hole_to;		/* proven (0, 0: none); kept for agents.c */
	/* SHA-256 of the certificate name that proved the stream over TLS
	 * (zeros: none): a restarted collector still refuses it to another
	 * name and to clear text. A hash: entries stay of one small size. */
	__u8 cert_sha256[32];
};

_Static_assert(sizeof(struct vigil_commit_entry) == 88, "the state file's entry size");

struct vigil_commit {
	int fd;		/* -1: no state kept (output to stdout) */
	uint64_t gen;
	unsigned max;	/* entries a slot holds */
	struct vigil_commit_entry *e;
	unsigned n;
	uint64_t export_size;
	void *slot;	/* scratch for one slot */
	double forget_after;	/* seconds; 0: never */
	/* True when the stream has a live connection: its entry is neither
	 * evicted nor retired. NULL: none has. */
	bool (*live)(void *ctx, const __u8 boot_id[16], uint32_t ring_id);
	void *live_ctx;
	uint64_t retired, evicted;
	uint64_t full;	/* new streams refused: no entry could make room */
};

/* A table of max entries in memory, kept nowhere (no --export-file): the
 * bindings to certificates are kept all the same. */
int vigil_commit_init(struct vigil_commit *c, unsigned max, double forget_after);
/* Opens PATH.state and loads it (converting a format-1 file, or a file of
 * another size, in place); cuts export_fd back to the size recorded;
 * forgets the entries not heard for forget_after seconds. A table of max
 * entries; v1_max: the entries a format-1 slot held (--max-agents, which
 * placed its second slot). */
int vigil_commit_open(struct vigil_commit *c, const char *export_path, int export_fd,
		      unsigned max, unsigned v1_max, double forget_after);
/* A stream's entry, or NULL. */
const struct vigil_commit_entry *vigil_commit_find(const struct vigil_commit *c,
						   const __u8 boot_id[16], uint32_t ring_id);
/* Stores e whole under its (boot_id, ring_id), stamped heard now; a new
 * stream in a full table takes the place of the one least recently heard
 * with no live connection that is not bound to another certificate than
 * e's (logged). -ENOSPC when there is none: every entry is live (which a
 * table of at least --max-conns entries rules out) or bound to other
 * certificates. */
int vigil_commit_put(struct vigil_commit *c, const struct vigil_commit_entry *e);
/* Forgets the streams not heard for forget_after with no live connection;
 * those with one are heard now. In memory: the next write records it. */
void vigil_commit_retire(struct vigil_commit *c);
/* Writes the table and the export file's size out. */
int vigil_commit_write(struct vigil_commit *c, uint64_t export_size);
void vigil_commit_close(struct vigil_commit *c);

#endif
