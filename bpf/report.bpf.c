// SPDX-License-Identifier: GPL-2.0
/*
 * Periodic reports built in BPF: a bpf_timer closes a period every interval
 * and turns the counters of the period before (lib/report.bpf.h says why one
 * period late) into report events in the ring: one per process, one per
 * remote end, then a report_end; first it folds the per-CPU connection
 * counts of that period into the maps (lib/report_pairs.bpf.h). Also counts
 * execs per parent process.
 *
 * The timer lives in a pinned map, so it keeps running while the agent
 * restarts, and a restarted agent only re-arms it (report_start): periods
 * and their counters carry on, nothing is reported twice.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "lib/ring.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/report_pairs.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define CLOCK_MONOTONIC 1
#define EBUSY 16

const volatile __u32 vigil_nr_cpus = 1;	/* possible CPUs, set by the agent */

struct report_timer {
	struct bpf_timer timer;
	__u64 interval_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct report_timer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_report_timer SEC(".maps");

struct drain {
	struct vigil_period period;
	__u32 slot;
	__u32 procs, remotes, lost;
};

static long drain_proc(struct bpf_map *map, struct vigil_report_proc_key *k,
		       struct vigil_report_proc_val *v, struct drain *d)
{
	struct vigil_report_proc *ev;

	if (k->slot != d->slot)
		return 0;
	ev = vigil_reserve(VIGIL_EV_REPORT_PROC, sizeof(*ev));
	if (ev) {
		ev->period = d->period;
		ev->proc = v->proc;
		ev->c = v->c;
		vigil_submit(ev);
		d->procs++;
	} else {
		d->lost++;
	}
	bpf_map_delete_elem(map, k);
	return 0;
}

static long drain_remote(struct bpf_map *map, struct vigil_report_remote_key *k,
			 struct vigil_report_remote_val *v, struct drain *d)
{
	struct vigil_report_remote *ev;

	if (k->slot != d->slot)
		return 0;
	ev = vigil_reserve(VIGIL_EV_REPORT_REMOTE, sizeof(*ev));
	if (ev) {
		ev->period = d->period;
		ev->remote = k->remote;
		ev->connections = v->connections;
		ev->bytes_sent = v->bytes_sent;
		ev->bytes_received = v->bytes_received;
		vigil_submit(ev);
		d->remotes++;
	} else {
		d->lost++;
	}
	bpf_map_delete_elem(map, k);
	return 0;
}

/* Folds one CPU's pair (i: CPU * VIGIL_REPORT_PAIRS + pair) of slot d->slot. */
static long fold_pair(__u32 i, struct drain *d)
{
	struct vigil_report_pair_table *tab;
	struct vigil_report_pair *e;

	tab = bpf_map_lookup_percpu_elem(&vigil_report_pairs, &d->slot, i >> VIGIL_REPORT_PAIRS_LOG2);
	if (!tab)
		return 1;	/* past the last possible CPU */
	e = &tab->e[i & (VIGIL_REPORT_PAIRS - 1)];
	if (e->used)
		vigil_report_pair_fold(e, d->slot);
	return 0;
}

static long add_cpu_table_full(__u32 cpu, __u64 *sum)
{
	__u32 slot = VIGIL_CNT_REPORT_FULL;
	__u64 *v = bpf_map_lookup_percpu_elem(&vigil_counters, &slot, cpu);

	if (v)
		*sum += *v;
	return 0;
}

static int report_tick(void *map, __u32 *key, struct report_timer *rt)
{
	struct vigil_report_state *st;
	struct vigil_report_end *end;
	struct drain d = {};
	__u64 table_full = 0;
	__u32 zero = 0;
	__u64 old, now = bpf_ktime_get_ns();

	st = bpf_map_lookup_elem(&vigil_report_state, &zero);
	if (!st)
		goto rearm;
	old = st->period;
	/* Period old+1 starts: its slot was drained one tick ago. */
	st->start_ktime[vigil_slot_of(old + 1)] = now;
	__sync_fetch_and_add(&st->period, 1);
	vigil_count(VIGIL_CNT_REPORT_TICKS);
	if (!old)
		goto rearm;	/* no period has had its grace tick yet */

	d.slot = vigil_slot_of(old - 1);
	d.period.id = old - 1;
	d.period.start_ktime = st->start_ktime[d.slot];
	d.period.end_ktime = st->start_ktime[vigil_slot_of(old)];
	bpf_loop(vigil_nr_cpus * VIGIL_REPORT_PAIRS, fold_pair, &d, 0);
	bpf_for_each_map_elem(&vigil_report_procs, drain_proc, &d, 0);
	bpf_for_each_map_elem(&vigil_report_remotes, drain_remote, &d, 0);
	bpf_loop(vigil_nr_cpus, add_cpu_table_full, &table_full, 0);
	end = vigil_reserve(VIGIL_EV_REPORT_END, sizeof(*end));
	if (end) {
		end->period = d.period;
		end->procs = d.procs;
		end->remotes = d.remotes;
		end->lost = d.lost;
		end->pad = 0;
		end->interval_ns = rt->interval_ns;
		end->table_full = table_full;
		vigil_submit(end);
	}
rearm:
	if (rt->interval_ns)
		bpf_timer_start(&rt->timer, rt->interval_ns, 0);
	return 0;
}

/* Run by the agent (BPF_PROG_TEST_RUN) at every start: arms the timer, or
 * re-arms the one an earlier agent left running, with this interval. */
SEC("syscall")
int report_start(struct vigil_report_start *in)
{
	struct vigil_report_state *st;
	struct report_timer *rt;
	__u32 zero = 0;
	long err;

	rt = bpf_map_lookup_elem(&vigil_report_timer, &zero);
	st = bpf_map_lookup_elem(&vigil_report_state, &zero);
	if (!rt || !st)
		return -1;
	err = bpf_timer_init(&rt->timer, &vigil_report_timer, CLOCK_MONOTONIC);
	if (err && err != -EBUSY)
		return err;
	if (!st->period && !st->start_ktime[0])
		st->start_ktime[0] = bpf_ktime_get_ns();
	rt->interval_ns = in->interval_ns;
	if (!in->interval_ns)
		return bpf_timer_cancel(&rt->timer) < 0 ? -1 : 0;
	err = bpf_timer_set_callback(&rt->timer, report_tick);
	if (err)
		return err;
	return bpf_timer_start(&rt->timer, in->interval_ns, 0);
}

/* Each exec counts for the process that started it (its parent). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(report_exec, struct task_struct *p)
{
	struct task_struct *parent = p->real_parent;
	struct vigil_report_counts *c;
	struct vigil_proc pp;

	vigil_prog_run(VIGIL_PROG_REPORT_EXEC);
	vigil_proc_fill_btf(&pp, parent,
			    vigil_exec_key_get(parent->tgid, parent->group_leader->start_time));
	c = vigil_report_proc(&pp, vigil_report_slot());
	if (c)
		vigil_report_add(c->execs, 1);
	return 0;
}
