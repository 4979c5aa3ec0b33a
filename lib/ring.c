// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Maps and walks a BPF ring buffer; see ring.h. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "ring.h"

int vigil_ring_open(struct vigil_ring *r, int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return -EINVAL;
	r->map_fd = map_fd;
	r->page_size = sysconf(_SC_PAGESIZE);
	r->size = info.max_entries;
	r->mask = r->size - 1;
	p = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->consumer_pos = p;
	p = mmap(NULL, r->page_size + 2 * r->size, PROT_READ, MAP_SHARED, map_fd, r->page_size);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap((void *)r->consumer_pos, r->page_size);
		r->consumer_pos = NULL;
		return err;
	}
	r->producer_pos = p;
	r->data = (const uint8_t *)p + r->page_size;
	return 0;
}

void vigil_ring_close(struct vigil_ring *r)
{
	if (r->consumer_pos)
		munmap((void *)r->consumer_pos, r->page_size);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page_size + 2 * r->size);
	r->consumer_pos = r->producer_pos = NULL;
}

uint64_t vigil_ring_consumer(const struct vigil_ring *r)
{
	return __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
}

uint64_t vigil_ring_producer(const struct vigil_ring *r)
{
	return __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
}

void vigil_ring_release(struct vigil_ring *r, uint64_t pos)
{
	__atomic_store_n(r->consumer_pos, pos, __ATOMIC_RELEASE);
}

uint32_t vigil_ring_rec_len(const struct vigil_ring *r, uint64_t pos)
{
	return __atomic_load_n((const uint32_t *)vigil_ring_at(r, pos), __ATOMIC_ACQUIRE);
}

uint64_t vigil_ring_walk(const struct vigil_ring *r, uint64_t pos, uint64_t end,
			 vigil_record_fn fn, void *ctx)
{
	while (pos < end) {
		uint32_t len = vigil_ring_rec_len(r, pos);

		int rc = 0;

		if (len & VIGIL_RB_BUSY)
			break;
		if (!(len & VIGIL_RB_DISCARD)) {
			rc = fn(ctx, (const uint8_t *)vigil_ring_at(r, pos) + VIGIL_RB_HDR_SZ, len, pos);
			if (rc < 0)
				break;
		}
		pos += vigil_ring_rec_span(len);
		if (rc > 0)
			break;
	}
	return pos;
}
