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
 */
#ifndef VIGIL_COLLECTOR_COMMIT_H
#define VIGIL_COLLECTOR_COMMIT_H

#include <stdint.h>
#include <linux/types.h>

struct vigil_commit_entry {
	__u8 boot_id[16];
	__u32 ring_id;
	__u32 pad;
	__u64 offset;	/* stream offset written out */
};

struct vigil_commit {
	int fd;		/* -1: no state kept (output to stdout) */
	uint64_t gen;
	unsigned max;	/* entries a slot holds */
	struct vigil_commit_entry *e;
	unsigned n;
	uint64_t export_size;
	void *slot;	/* scratch for one slot */
};

/* Opens PATH.state and loads it; cuts export_fd back to the size recorded. */
int vigil_commit_open(struct vigil_commit *c, const char *export_path, int export_fd,
		      unsigned max);
/* The recorded offset of a stream, or -1 when none is. */
int64_t vigil_commit_get(const struct vigil_commit *c, const __u8 boot_id[16], uint32_t ring_id);
/* Sets a stream's offset in memory; -ENOSPC when the table is full. */
int vigil_commit_set(struct vigil_commit *c, const __u8 boot_id[16], uint32_t ring_id,
		     uint64_t offset);
/* Writes the table and the export file's size out. */
int vigil_commit_write(struct vigil_commit *c, uint64_t export_size);
void vigil_commit_close(struct vigil_commit *c);

#endif
