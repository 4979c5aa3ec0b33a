/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stream sink's degraded mode: when its collector stays away and its
 * backlog passes a high-water mark, the oldest part of that backlog is
 * copied from the ring to files (the only copy vigil makes of a record, and
 * only here), so the ring can be released for the other sinks and BPF never
 * drops for a sink that is away. The spool holds a contiguous range of the
 * stream, [first, end) in ring offsets, in segment files named after the
 * ring and their first offset, so a restarted agent on the same pinned ring
 * finds them. Past its bound the oldest segment is deleted: its records are
 * counted as dropped, and the collector sees a jump in offsets and a gap in
 * sequence numbers.
 *
 * Durability: what is appended is in the page cache at once, so a process
 * crash loses nothing of it. For a power cut, a segment is fdatasync()ed
 * when the next one starts (and the folder fsync()ed so the new name
 * persists), and the newest at most VIGIL_SPOOL_SYNC_S after an append
 * (vigil_spool_tick): a power cut loses at most that last second of
 * appends, besides the ring itself (kernel memory).
 */
#ifndef VIGIL_SPOOL_H
#define VIGIL_SPOOL_H

#include <stdint.h>
#include "ring.h"

#define VIGIL_SPOOL_SEGS 16
#define VIGIL_SPOOL_SYNC_S 1.0	/* the newest segment's unsynced appends, at most */

struct vigil_spool_seg {
	uint64_t start, end;	/* ring offsets the file holds */
	uint64_t records;	/* spilled into it (0 when taken up) */
	int fd;
};

struct vigil_spool {
	char dir[256];
	uint32_t ring_id;
	uint64_t max_bytes, seg_bytes;
	struct vigil_spool_seg seg[VIGIL_SPOOL_SEGS];	/* oldest first */
	unsigned nseg;
	uint64_t spilled, dropped_bytes, dropped_records;
	double unsynced_since;	/* CLOCK_MONOTONIC s of the oldest unsynced append, 0: none */
	uint64_t syncs;		/* fdatasync/fsync calls, and their time */
	double sync_s;
};

/* Opens dir (created) and takes up the segments a previous agent left for
 * this ring; -errno (logged) when dir is unusable. */
int vigil_spool_open(struct vigil_spool *sp, const char *dir, uint32_t ring_id, uint64_t max_bytes);
void vigil_spool_close(struct vigil_spool *sp);

static inline uint64_t vigil_spool_first(const struct vigil_spool *sp)
{
	return sp->nseg ? sp->seg[0].start : 0;
}
static inline uint64_t vigil_spool_end(const struct vigil_spool *sp)
{
	return sp->nseg ? sp->seg[sp->nseg - 1].end : 0;
}

/* Appends the ring's committed records in [from, to) (from must be the
 * spool's end when it holds anything); returns 0 or -errno. */
int vigil_spool_append(struct vigil_spool *sp, const struct vigil_ring *r, uint64_t from,
		       uint64_t to);
/* Syncs the newest segment if an append waits for it past
 * VIGIL_SPOOL_SYNC_S: call it often (each pump pass); cheap otherwise. */
void vigil_spool_tick(struct vigil_spool *sp);
/* Deletes the segments wholly before pos (acknowledged). */
void vigil_spool_trim(struct vigil_spool *sp, uint64_t pos);
/* Reads up to n bytes of the stream from offset pos (in the spool). */
ssize_t vigil_spool_read(const struct vigil_spool *sp, uint64_t pos, void *buf, size_t n);

#endif
