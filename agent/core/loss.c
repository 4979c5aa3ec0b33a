// SPDX-License-Identifier: GPL-2.0
#include "counters.h"
#include "log.h"
#include "core/loss.h"
#include "pins.h"

static int report(struct vigil_loss_monitor *m, struct vigil_bpf *b, bool always)
{
	uint64_t c[VIGIL_CNT_MAX];

	if (vigil_counters_read(b->counters_fd, c))
		return 0;
	m->ring_full = c[VIGIL_CNT_RING_FULL];
	m->threads_exited = c[VIGIL_CNT_THREAD_EXIT];
	m->recursion_misses = vigil_recursion_misses(b->pin_dir, &m->progs);
	if (!always && m->ring_full == m->reported_ring_full &&
	    m->recursion_misses == m->reported_recursion)
		return 0;
	/* A failed injection (ring still full) is counted by BPF itself and
	 * retried at the next check. */
	if (vigil_bpf_inject_loss(b, m->ring_full, m->recursion_misses, m->threads_exited))
		return 0;
	vlog_debug("loss: ring_full=%llu recursion_misses=%llu",
		   (unsigned long long)m->ring_full, (unsigned long long)m->recursion_misses);
	m->reported_ring_full = m->ring_full;
	m->reported_recursion = m->recursion_misses;
	return 1;
}

int vigil_loss_check(struct vigil_loss_monitor *m, struct vigil_bpf *b)
{
	return report(m, b, false);
}

int vigil_loss_final(struct vigil_loss_monitor *m, struct vigil_bpf *b)
{
	return report(m, b, true);
}

void vigil_loss_close(struct vigil_loss_monitor *m)
{
	vigil_linked_progs_free(&m->progs);
}
