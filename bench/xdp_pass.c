// SPDX-License-Identifier: GPL-2.0
/*
 * Puts a two-instruction XDP_PASS program on an interface (or takes it off
 * with -d). For benchmarks over veth: frames another veth sends with XDP_TX
 * reach this end only when it runs NAPI, which an XDP program turns on.
 * With --drop the program is XDP_DROP: a sink that takes every frame off
 * the link at the least cost, counted by the veth (ethtool -S:
 * rx_queue_0_xdp_drops). Run it inside the namespace that holds the
 * interface.
 *   xdp_pass [--drop] IFNAME | xdp_pass -d IFNAME
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	bool off = argc == 3 && !strcmp(argv[1], "-d");
	bool drop = argc == 3 && !strcmp(argv[1], "--drop");
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = drop ? XDP_DROP : XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const char *ifname = argv[argc - 1];
	int ifindex, fd, err;

	if (argc != 2 && !off && !drop) {
		fprintf(stderr, "usage: xdp_pass [--drop] IFNAME | xdp_pass -d IFNAME\n");
		return 2;
	}
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		fprintf(stderr, "xdp_pass: no interface %s\n", ifname);
		return 1;
	}
	if (off)
		return bpf_xdp_detach(ifindex, 0, NULL) ? 1 : 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, drop ? "xdp_drop" : "xdp_pass", "GPL", prog, 2, NULL);
	if (fd < 0) {
		fprintf(stderr, "xdp_pass: cannot load: %s\n", strerror(errno));
		return 1;
	}
	err = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		fprintf(stderr, "xdp_pass: cannot attach to %s: %s\n", ifname, strerror(-err));
		return 1;
	}
	return 0;
}
