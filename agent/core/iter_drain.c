// SPDX-License-Identifier: GPL-2.0
/* See iter_drain.h. */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/iter_drain.h"

int vigil_iter_drain(struct bpf_program *prog)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, NULL);
	char buf[64];
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}
