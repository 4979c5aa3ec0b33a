/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node's own health, written from BPF (bpf/heartbeat.bpf.c) whether or
 * not vigild runs: a heartbeat on a timer, and a blind record when the
 * ring's consumer stood still for a while. Ids in the report range,
 * after the network reports. Included by events.h.
 */
#ifndef VIGIL_HEALTH_EVENTS_H
#define VIGIL_HEALTH_EVENTS_H

#include <vigil/prog_slots.h>

enum vigil_health_event_type {
	VIGIL_EV_HEARTBEAT = VIGIL_EV_REPORT_FIRST + 8,	/* struct vigil_heartbeat */
	VIGIL_EV_BLIND,					/* struct vigil_blind */
	VIGIL_EV_TAMPER,				/* struct vigil_tamper */
	VIGIL_EV_PROG_RUNS,				/* struct vigil_prog_runs */
	VIGIL_EV_HEALTH,				/* struct vigil_health */
	VIGIL_EV_TAMPER_PIN,				/* struct vigil_tamper_pin */
};

/* Bytes of the health ring (vigil_health_ring, bpf/lib/health.bpf.h): the
 * records above, written there and not into the main ring, so that a main
 * ring filled while vigild is away does not take them. At 5 s a tick, a
 * heartbeat and a run count take about 400 bytes: some 50 minutes. */
#define VIGIL_HEALTH_RING_SIZE (256 * 1024)
/* The largest record the health ring takes: what the relay copies. */
#define VIGIL_HEALTH_REC_MAX 512

/* Every --heartbeat-interval, from a timer in a pinned map. The ring's
 * producer and consumer positions (bytes, all time) are the kernel's at
 * the tick; consumer_since is the ktime the consumer was last seen moving
 * (or the ring empty) when it stands still now, else 0. */
struct vigil_heartbeat {
	struct vigil_hdr hdr;
	__u64 producer_pos;
	__u64 consumer_pos;
	__u64 last_seq;		/* the sequence number last taken */
	__u64 beats;		/* heartbeats taken, this one included (all time) */
	__u64 beats_lost;	/* of them, those that found the ring full */
	__u64 consumer_since;
	__u64 interval_ns;
	__u64 ticks_blind;	/* ticks the consumer stood still, this stall */
};

/* The consumer moved again after standing still with records waiting
 * (vigild killed, stopped, or stuck): user space was blind from from_ktime
 * (the last tick it was seen consuming) to to_ktime (the first tick it
 * was seen again). Written as soon as the ring takes it, then the stall
 * is forgotten; until then each tick tries again. */
struct vigil_blind {
	struct vigil_hdr hdr;
	__u64 from_ktime;
	__u64 to_ktime;
	__u64 ticks;		/* ticks the consumer stood still */
	__u64 beats_lost;	/* heartbeats lost meanwhile (ring full) */
};

/* The timer's state, pinned (vigil_hb_state): what `vigil status` reads. */
struct vigil_hb_state {
	__u64 beats, beats_lost;
	__u64 last_tick;	/* ktime of the last tick */
	__u64 last_cons;	/* the consumer position then */
	__u64 since;		/* the stall's start, 0: none */
	__u64 ticks_blind;
	__u64 lost_at_since;	/* beats_lost when the stall began */
	__u64 last_from, last_to;	/* the last stall reported */
	__u64 interval_ns;
	__u64 last_health_cons;	/* the health ring's consumer position then */
	/* ktime of the first heartbeat lost (the health ring full) since the
	 * last one written; 0: the last one was written */
	__u64 lost_since;
};

/* What another process did to the agent, written from BPF so that it
 * outlives the agent (bpf/tamper.bpf.c). The comments say what arg holds. */
enum vigil_tamper_what {
	VIGIL_TAMPER_SIGNAL = 1,	/* a signal generated for the agent: the signal */
	VIGIL_TAMPER_LINK_DETACH = 2,	/* bpf(BPF_LINK_DETACH) on a link of vigil's: its id */
	VIGIL_TAMPER_LINK_UPDATE = 3,	/* bpf(BPF_LINK_UPDATE): its program replaced: its id */
	VIGIL_TAMPER_PTRACE_ATTACH = 4,	/* ptrace(PTRACE_ATTACH) of the agent: the pid given */
	VIGIL_TAMPER_PTRACE_SEIZE = 5,	/* ptrace(PTRACE_SEIZE): the pid given */
	VIGIL_TAMPER_VM_WRITEV = 6,	/* process_vm_writev into the agent: the pid given */
	VIGIL_TAMPER_VM_READV = 7,	/* process_vm_readv from the agent: the pid given */
	VIGIL_TAMPER_PIDFD_GETFD = 8,	/* pidfd_getfd on the agent's pidfd: its fd taken */
	VIGIL_TAMPER_PROC_MEM = 9,	/* /proc/<agent>/mem opened: the open flags */
	VIGIL_TAMPER_PROC_MAPS = 10,	/* /proc/<agent>/maps opened: the open flags */
	VIGIL_TAMPER_PROC_ENVIRON = 11,	/* /proc/<agent>/environ opened: the open flags */
	VIGIL_TAMPER_MAP_UPDATE = 12,	/* bpf() update of one of vigil's maps: its id */
	VIGIL_TAMPER_MAP_DELETE = 13,	/* bpf() delete from one of vigil's maps: its id */
	VIGIL_TAMPER_MAP_SWAP = 14,	/* bpf() update of vigil's map of maps: its id */
	VIGIL_TAMPER_PIN_UNLINK = 15,	/* a pin removed (vigil_tamper_pin): 0 */
	VIGIL_TAMPER_PIN_RENAME = 16,	/* a pin renamed away (vigil_tamper_pin): 0 */
};

struct vigil_tamper {
	struct vigil_hdr hdr;
	struct vigil_proc proc;	/* who did it: the current task */
	__u32 what;		/* enum vigil_tamper_what */
	__u32 agent_pid;	/* the agent's tgid, as its last start wrote it */
	__u32 arg;		/* by what (enum vigil_tamper_what) */
	__s32 result;		/* SIGNAL: the kernel's TRACE_SIGNAL_* outcome; PROC_*: the
				 * fd (only opens that succeed are seen); the others: the
				 * call's return value (-errno when refused) */
	char comm[16];		/* the doer's comm */
};

/* Something under the pin folder was unlinked or renamed away by another
 * process: a vigil_tamper with the name, as the call gave it, after the
 * pin folder's path (cut at VIGIL_TAMPER_PIN_MAX - 1 bytes). */
#define VIGIL_TAMPER_PIN_MAX 64
struct vigil_tamper_pin {
	struct vigil_tamper t;
	char name[VIGIL_TAMPER_PIN_MAX];
};

/* Each vigil program's runs (vigil/prog_slots.h) since the last tick,
 * written by the tick right after its heartbeat (beat: that heartbeat's
 * number). A program whose link was detached shows 0 from then on; the
 * slots past VIGIL_PROG_SLOTS_USED are 0. Runs are counted in BPF at each
 * program's entry: a program the kernel skipped (recursion) is not
 * counted. */
struct vigil_prog_runs {
	struct vigil_hdr hdr;
	__u64 beat;
	__u64 interval_ns;	/* since the tick before: the runs' time span */
	__u64 runs[VIGIL_PROG_SLOTS];
};

/* A record of the health ring, copied by the agent into the main ring so
 * that it reaches every reader of the stream in ring order: hdr has the
 * main ring's sequence number and the time of the copy; rec (the rest) is
 * the health ring's record unchanged, its own header holding its kind, its
 * number in the health ring's own sequence (vigil_health_seq: a gap there
 * is a health record lost, counted in health_lost) and its time. */
struct vigil_health {
	struct vigil_hdr hdr;
	__u64 health_lost;	/* health records the health ring refused (all time) */
	__u8 rec[];		/* a record of another kind, header first */
};

/* What the agent hands inject_health (bpf/inject.bpf.c): the main ring's
 * record, len bytes of rec, its header's type, size and seq for BPF to
 * fill. Not on the wire. */
struct vigil_health_inject {
	__u32 len;
	__u32 pad;
	__u8 rec[sizeof(struct vigil_health) + VIGIL_HEALTH_REC_MAX];
};

VIGIL_STATIC_ASSERT(sizeof(struct vigil_tamper) == 104, "vigil_tamper layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_tamper_pin) == 168, "vigil_tamper_pin layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_heartbeat) == 88, "vigil_heartbeat layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_blind) == 56, "vigil_blind layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_prog_runs) == 296, "vigil_prog_runs layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_health) == 32, "vigil_health layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_prog_runs) <= VIGIL_HEALTH_REC_MAX &&
		    sizeof(struct vigil_tamper_pin) <= VIGIL_HEALTH_REC_MAX, "health records fit the relay");
VIGIL_STATIC_ASSERT(VIGIL_PROG_SLOTS_USED <= VIGIL_PROG_SLOTS, "program slots");
VIGIL_STATIC_ASSERT(VIGIL_EV_TAMPER_PIN <= VIGIL_EV_REPORT_LAST, "health ids in range");

#endif
