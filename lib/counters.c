// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "counters.h"
#include "percpu.h"

static const char *const names[VIGIL_CNT_MAX] = {
	[VIGIL_CNT_RING_FULL] = "lost_ring_full",
	[VIGIL_CNT_THREAD_EXIT] = "threads_exited",
	[VIGIL_CNT_OUTPUT_LOST] = "lost_output",
	[VIGIL_CNT_PROC_THROTTLED] = "proc_events_throttled",
	[VIGIL_CNT_HEALTH_FULL] = "health_records_lost",
	[VIGIL_CNT_TAMPER_REFUSED_SKIPPED] = "tamper_refused_not_recorded",
	[VIGIL_CNT_NET_RETRANS] = "net_retransmits",
	[VIGIL_CNT_NET_FILTERED] = "net_events_filtered",
	[VIGIL_CNT_NET_NO_STORAGE] = "net_sockets_no_room",
	[VIGIL_CNT_REPORT_FULL] = "report_counts_lost",
	[VIGIL_CNT_REPORT_TICKS] = "report_periods",
	[VIGIL_CNT_NET_SOCK_TAKEN] = "net_socket_entries_taken",
	[VIGIL_CNT_NET_SOCK_FREED] = "net_socket_entries_freed",
	[VIGIL_CNT_NET_SOCK_SPILLED] = "net_sockets_spilled",
	[VIGIL_CNT_NET_SOCK_UNSPILLED] = "net_sockets_unspilled",
	[VIGIL_CNT_ENF_DROP] = "enforce_drops",
	[VIGIL_CNT_ENF_REJECT] = "enforce_rejects",
	[VIGIL_CNT_ENF_RESET] = "enforce_resets",
	[VIGIL_CNT_ENF_RST_SENT] = "enforce_rsts_sent",
	[VIGIL_CNT_ENF_ICMP_SENT] = "enforce_icmp_sent",
	[VIGIL_CNT_ENF_REPLY_SUPPRESSED] = "enforce_replies_suppressed",
	[VIGIL_CNT_ENF_INELIGIBLE] = "enforce_no_reply_due",
	[VIGIL_CNT_ENF_EVENT_SUPPRESSED] = "enforce_events_suppressed",
	[VIGIL_CNT_ENF_BUILD_FAILED] = "enforce_build_failed",
	[VIGIL_CNT_ENF_INJECTED] = "enforce_rsts_injected",
	[VIGIL_CNT_ENF_UNPARSED_FRAG] = "enforce_unparsed_fragments",
	[VIGIL_CNT_ENF_UNPARSED_EXT] = "enforce_unparsed_ext_headers",
	[VIGIL_CNT_ENF_UNPARSED_TRUNC] = "enforce_unparsed_truncated",
	[VIGIL_CNT_ENF_UNPARSED_VLAN] = "enforce_unparsed_vlan",
	[VIGIL_CNT_ENF_CONNECT_DENIED] = "enforce_connects_denied",
	[VIGIL_CNT_ENF_CONNECT_REJECTED] = "enforce_connects_rejected",
	[VIGIL_CNT_ENF_SOCK_DESTROYED] = "enforce_sockets_destroyed",
	[VIGIL_CNT_ENF_SOCK_REFUSED] = "enforce_raw_sockets_refused",
	[VIGIL_CNT_ENF_EGRESS_DROPPED] = "enforce_egress_dropped",
	[VIGIL_CNT_ENF_CARRIED_DESTROYED] = "enforce_carried_destroyed",
	[VIGIL_CNT_ENF_PACKET_SOCKETS] = "enforce_packet_sockets_found",
	[VIGIL_CNT_ENF_CARRIED_IN_USE] = "enforce_carried_found_in_use",
};

const char *vigil_counter_name(unsigned slot)
{
	return slot < VIGIL_CNT_MAX ? names[slot] : NULL;
}

int vigil_counters_read(int fd, uint64_t out[VIGIL_CNT_MAX])
{
	for (uint32_t k = 0; k < VIGIL_CNT_MAX; k++) {
		/* A slot that cannot be read counts 0, as a map of an
		 * older build without it. */
		int err = vigil_percpu_sum(fd, &k, &out[k], sizeof(out[k]));

		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

int vigil_counter_add(int fd, unsigned slot, uint64_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t k = slot;
	uint64_t *vals;
	int err;

	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	/* Only this agent writes a user-space slot (one per pin folder): a
	 * read, then a write, loses nothing. */
	err = bpf_map_lookup_elem(fd, &k, vals) ? -errno : 0;
	if (!err) {
		vals[0] += n;
		err = bpf_map_update_elem(fd, &k, vals, 0) ? -errno : 0;
	}
	free(vals);
	return err;
}

int vigil_seq_read(int fd, uint64_t *seq)
{
	uint32_t k = 0;

	return bpf_map_lookup_elem(fd, &k, seq) ? -errno : 0;
}
