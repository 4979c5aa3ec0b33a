// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring zero-copy path of stream_tx.h: IORING_OP_SEND_ZC straight from
 * the ring's mapping. One send in flight per socket (two sends on one TCP
 * socket could be reordered), with MSG_WAITALL so a completion means the
 * whole range was taken; the next send goes out as soon as the previous one
 * completes, not when its notification arrives, so many notifications are
 * outstanding. A notification says the kernel released the pages; with
 * IORING_SEND_ZC_REPORT_USAGE it also says whether it had to copy them
 * anyway (loopback does, a real NIC does not).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <liburing.h>
#include "core/kernel_features.h"
#include "log.h"
#include "stream/stream_tx.h"

/* From the kernel's include/uapi/linux/io_uring.h; liburing 2.3 lacks them. */
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

#define URING_ENTRIES 64

#define PROBE_ID UINT64_MAX	/* no send of ours has it: gen and id are 32 bits */

/* Whether SEND_ZC takes IORING_SEND_ZC_REPORT_USAGE (Linux 6.2; some 6.1
 * builds have it backported): a send on no socket fails in the check of
 * its flags (EINVAL) before the socket is looked up (EBADF). */
static bool report_usage_supported(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res = -EINVAL;

	if (!sqe)
		return false;
	io_uring_prep_send_zc(sqe, -1, NULL, 0, 0, 0);
	sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
	io_uring_sqe_set_data64(sqe, PROBE_ID);
	if (io_uring_submit_and_wait(ring, 1) < 0)
		return false;
	/* Its completion, and a notification if the kernel posts one. */
	while (!io_uring_peek_cqe(ring, &cqe)) {
		if (io_uring_cqe_get_data64(cqe) == PROBE_ID && !(cqe->flags & IORING_CQE_F_NOTIF))
			res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	return res != -EINVAL;
}

int vigil_uring_init(struct vigil_tx *t)
{
	/* Room in the completion queue for every notification we let be
	 * outstanding, and the sends' own completions. */
	struct io_uring_params params = {
		.flags = IORING_SETUP_CQSIZE,
		.cq_entries = 2 * VIGIL_TX_ZC_MAX,
	};
	struct io_uring_probe *probe;
	bool zc;
	int err;

	t->uring = calloc(1, sizeof(*t->uring));
	if (!t->uring)
		return -ENOMEM;
	err = io_uring_queue_init_params(URING_ENTRIES, t->uring, &params);
	if (err) {
		free(t->uring);
		t->uring = NULL;
		return err;
	}
	probe = io_uring_get_probe_ring(t->uring);
	zc = probe && io_uring_opcode_supported(probe, IORING_OP_SEND_ZC);
	io_uring_free_probe(probe);
	if (!zc) {
		vigil_uring_free(t);
		return -EOPNOTSUPP;
	}
	t->uring_fd = t->uring->ring_fd;
	t->zc_report = report_usage_supported(t->uring);
	if (!t->zc_report)
		vigil_kernel_lacks("IORING_SEND_ZC_REPORT_USAGE (6.2)",
				   "io_uring zero-copy sends do not tell whether the kernel copied "
				   "the pages: loopback streams stay on zero-copy");
	return 0;
}

void vigil_uring_free(struct vigil_tx *t)
{
	if (!t->uring)
		return;
	io_uring_queue_exit(t->uring);
	free(t->uring);
	t->uring = NULL;
	t->uring_fd = -1;
}

int vigil_uring_send(struct vigil_tx *t, const void *p, size_t len)
{
	struct io_uring_sqe *sqe;
	uint32_t id;
	int err;

	if (t->in_flight || t->zc_count == VIGIL_TX_ZC_MAX)
		return 0;
	if (len > 1u << 30)
		len = 1u << 30;
	sqe = io_uring_get_sqe(t->uring);
	if (!sqe)
		return 0;
	id = t->next_id++;
	io_uring_prep_send_zc(sqe, t->fd, p, len, MSG_WAITALL | MSG_NOSIGNAL, 0);
	if (t->zc_report)
		sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
	io_uring_sqe_set_data64(sqe, (uint64_t)t->gen << 32 | id);
	err = io_uring_submit(t->uring);
	if (err < 0)
		return err;
	vigil_tx_zc_push(t, id, t->sent, t->sent + len);
	t->in_flight = true;
	t->in_flight_end = t->sent + len;
	t->sends++;
	return 0;
}

int vigil_uring_poll(struct vigil_tx *t)
{
	struct io_uring_cqe *cqe;
	int err = 0;

	while (!io_uring_peek_cqe(t->uring, &cqe)) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		uint32_t id = (uint32_t)ud;
		bool mine = (uint32_t)(ud >> 32) == t->gen;

		/* Ids run on across connections: a notification for a
		 * connection already gone still frees its pages, only its
		 * send's result is stale. */
		if (cqe->flags & IORING_CQE_F_NOTIF) {
			if (cqe->res & IORING_NOTIF_USAGE_ZC_COPIED)
				t->zc_copied++;
			vigil_tx_zc_done(t, id, id);
		} else if (!mine) {
			if (!(cqe->flags & IORING_CQE_F_MORE))
				vigil_tx_zc_done(t, id, id);
		} else {
			t->in_flight = false;
			if (cqe->res < 0) {
				err = cqe->res;
			} else {
				t->sent += cqe->res;
				t->bytes += cqe->res;
				if ((uint64_t)t->sent != t->in_flight_end)
					err = -EPIPE;	/* MSG_WAITALL ends short only on error */
			}
			if (!(cqe->flags & IORING_CQE_F_MORE))
				vigil_tx_zc_done(t, id, id);	/* no notification follows */
		}
		io_uring_cqe_seen(t->uring, cqe);
	}
	return err;
}
