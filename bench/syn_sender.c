// SPDX-License-Identifier: GPL-2.0
/*
 * A paced stream of TCP SYNs out of a veth, for bench/reject.sh, from the
 * kernel's own XDP packet generator: BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES runs bench/bpf/syn_pacer.bpf.c on every frame,
 * which waits for the frame's slot (PPS a second, evenly spaced) and
 * redirects it to IFNAME, so the frames leave as xdp_frames with full
 * headroom. The sending
 * CPU does only that, and the receiving veth gets frames it can run XDP on
 * without first copying them out of an skb (which an AF_PACKET sender's
 * frames need: too little headroom), so the figures are the receiver's.
 * A kernel that refuses BPF_PROG_TEST_RUN with live XDP frames (EPERM on
 * 6.18.44-fc-v1300, EINVAL before 5.18) gets an AF_PACKET sender instead,
 * paced the same way; veth then copies each frame before XDP sees it, which
 * the receiver pays for: bench/reject.sh prints which sender ran.
 * Run it inside the namespace that holds IFNAME. Prints the frames sent and
 * the sender ("xdp_live_frames" or "af_packet").
 *
 *   syn_sender IFNAME SRC_MAC DST_MAC SRC_IP DST_IP DST_PORT PPS SECONDS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_syn_pacer.skel.h"


struct syn_frame {
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
} __attribute__((packed));

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t sum16(const void *p, size_t len, uint32_t sum)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) == 6 ? 0 : -1;
}

static int build(struct syn_frame *f, char **argv)
{
	struct { uint32_t s, d; uint8_t zero, proto; uint16_t len; } __attribute__((packed)) ph;

	memset(f, 0, sizeof(*f));
	if (parse_mac(argv[2], f->eth.h_source) || parse_mac(argv[3], f->eth.h_dest) ||
	    inet_pton(AF_INET, argv[4], &f->ip.saddr) != 1 ||
	    inet_pton(AF_INET, argv[5], &f->ip.daddr) != 1)
		return -1;
	f->eth.h_proto = htons(ETH_P_IP);
	f->ip.version = 4;
	f->ip.ihl = 5;
	f->ip.ttl = 64;
	f->ip.protocol = IPPROTO_TCP;
	f->ip.tot_len = htons(sizeof(f->ip) + sizeof(f->tcp));
	f->ip.check = htons(fold(sum16(&f->ip, sizeof(f->ip), 0)));
	f->tcp.source = htons(40000);
	f->tcp.dest = htons(atoi(argv[6]));
	f->tcp.seq = htonl(1000);
	f->tcp.doff = 5;
	f->tcp.syn = 1;
	f->tcp.window = htons(64240);
	ph = (typeof(ph)){ f->ip.saddr, f->ip.daddr, 0, IPPROTO_TCP, htons(sizeof(f->tcp)) };
	f->tcp.check = htons(fold(sum16(&f->tcp, sizeof(f->tcp), sum16(&ph, sizeof(ph), 0))));
	return 0;
}

/* The AF_PACKET sender: batches of the frame, each sent when the clock says
 * the stream is behind PPS. Returns the frames sent, or -1. */
static long af_packet_send(unsigned ifindex, struct syn_frame *f, long pps, long secs)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = 6 };
	struct mmsghdr m[64];
	struct iovec iov = { .iov_base = f, .iov_len = sizeof(*f) };
	int fd = socket(AF_PACKET, SOCK_RAW, 0);
	long sent = 0;
	double t0 = now(), t;

	if (fd < 0)
		return fprintf(stderr, "syn_sender: AF_PACKET socket: %s\n", strerror(errno)), -1;
	memcpy(to.sll_addr, f->eth.h_dest, 6);
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 64; i++) {
		m[i].msg_hdr.msg_name = &to;
		m[i].msg_hdr.msg_namelen = sizeof(to);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while ((t = now() - t0) < secs) {
		long due = (long)(t * pps) - sent, n;

		if (due <= 0) {
			usleep(50);
			continue;
		}
		n = sendmmsg(fd, m, due < 64 ? due : 64, 0);
		if (n < 0 && errno != ENOBUFS && errno != EAGAIN) {
			fprintf(stderr, "syn_sender: AF_PACKET send: %s\n", strerror(errno));
			close(fd);
			return -1;
		}
		sent += n > 0 ? n : 0;
	}
	close(fd);
	return sent;
}

int main(int argc, char **argv)
{
	struct syn_frame frame;
	struct bench_syn_pacer_bpf *skel;
	long pps, secs, sent = 0;
	unsigned ifindex;
	double t0;
	int fd;

	if (argc != 9) {
		fprintf(stderr, "usage: syn_sender IFNAME SRC_MAC DST_MAC SRC_IP DST_IP DST_PORT PPS SECONDS\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	pps = atol(argv[7]);
	secs = atol(argv[8]);
	if (!ifindex || build(&frame, argv) || pps <= 0 || secs <= 0) {
		fprintf(stderr, "syn_sender: bad interface, address, rate or duration\n");
		return 2;
	}
	skel = bench_syn_pacer_bpf__open();
	if (!skel)
		return fprintf(stderr, "syn_sender: cannot open the pacer\n"), 1;
	skel->rodata->out_ifindex = ifindex;
	skel->rodata->interval_ns = 1000000000ull / pps;

	if (bench_syn_pacer_bpf__load(skel)) {
		fprintf(stderr, "syn_sender: cannot load the pacer: %s\n", strerror(errno));
		return 1;
	}
	_Static_assert(sizeof(frame) == sizeof(skel->bss->syn), "the pacer's frame size");
	memcpy(skel->bss->syn, &frame, sizeof(frame));
	fd = bpf_program__fd(skel->progs.syn_pace);
	/* A second's worth of frames per test run: each run ends with some
	 * milliseconds of teardown, which the pacer then does not catch up. */
	t0 = now();
	while (now() - t0 < secs) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &frame, .data_size_in = sizeof(frame),
			    .repeat = pps, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (bpf_prog_test_run_opts(fd, &o)) {
			int err = errno;

			/* Refused at the first run: this kernel will not run live
			 * frames (checked again each run would be the same). */
			if (sent || (err != EPERM && err != EINVAL && err != EOPNOTSUPP)) {
				fprintf(stderr, "syn_sender: test run: %s\n", strerror(err));
				return 1;
			}
			fprintf(stderr, "syn_sender: live XDP frames refused (%s): AF_PACKET sender\n",
				strerror(err));
			bench_syn_pacer_bpf__destroy(skel);
			sent = af_packet_send(ifindex, &frame, pps, secs);
			if (sent < 0)
				return 1;
			printf("%ld af_packet\n", sent);
			return 0;
		}
		sent += pps;
	}
	bench_syn_pacer_bpf__destroy(skel);
	printf("%ld xdp_live_frames\n", sent);
	return 0;
}
