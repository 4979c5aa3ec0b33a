// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzz targets' seed inputs into DIR/<target>/: a hello built by
 * vigil_stream_hello_build, and a record of every event kind the agent
 * writes, from the real structs of include/vigil/, framed as on the
 * wire; and each case of the policy parser's table (tests/policy_cases.h).
 * make_corpus.sh adds the examples of docs/policy.md. Usage: make_seeds DIR
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include "policy_parse.h"
#include "../policy_cases.h"
#include "ring.h"
#include "stream.h"

static const char *dir;

static void save(const char *target, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, target);
	if (mkdir(path, 0755) && errno != EEXIST)
		perror(path), exit(1);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
	f = fopen(path, "w");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		perror(path), exit(1);
}

/* A seed the parsers refuse would only teach the fuzzer their first check:
 * each stream is parsed back whole before it is written. */
static void check_stream(const struct vigil_buf *s)
{
	struct vigil_stream_peer peer;
	struct vigil_stream_rec rec;
	const char *why = "cut short";
	int n = vigil_stream_hello_parse(s->p, s->len, &peer, &why), r = 1;

	for (size_t p = n; n > 0 && p < s->len && r > 0; p += rec.span)
		r = vigil_stream_rec_parse(&peer, s->p + p, s->len - p, &rec, &why);
	if (n <= 0 || r <= 0)
		fprintf(stderr, "make_seeds: a seed stream is refused: %s\n", why), exit(1);
}

static uint64_t seq = 1000;

static void hdr(void *ev, uint16_t type, uint16_t size)
{
	struct vigil_hdr *h = ev;

	seq++;
	*h = (struct vigil_hdr){ .type = type, .size = size, .cpu = 1, .seq = seq,
				 .ktime = 5000000000ull + seq * 1000 };
}

static const struct vigil_proc proc = {
	.pid = 4242, .tid = 4242, .ppid = 1, .uid = 1000, .gid = 1000, .auid = 1000,
	.exec_ktime = 4000000000ull, .parent_exec_ktime = 1000, .cgroup_id = 77,
};

static void tuple(struct vigil_tuple *t, int v6)
{
	t->family = v6 ? AF_INET6 : AF_INET;
	inet_pton(t->family, v6 ? "2001:db8::1" : "10.0.0.1", t->saddr);
	inet_pton(t->family, v6 ? "2001:db8::2" : "10.0.0.2", t->daddr);
	t->sport = 40000;
	t->dport = 443;
	t->protocol = 6;
	t->netns = 4026531840u;
}

/* Appends one event of each kind to evs (records, one after the other). */
/* A health ring record (its kind already in its header) as the agent
 * copies it into the main ring: wrapped in a health record. */
static void health(struct vigil_buf *evs, const void *rec, uint16_t len)
{
	union {
		struct vigil_health h;
		char raw[sizeof(struct vigil_health) + VIGIL_HEALTH_REC_MAX];
	} w = { 0 };

	w.h.health_lost = 1;
	memcpy(w.h.rec, rec, len);
	hdr(&w, VIGIL_EV_HEALTH, sizeof(w.h) + len);
	vbuf_put(evs, &w, sizeof(w.h) + len);
}

/* The health ring's kinds, each wrapped; health seq numbers of their own. */
static void health_events(struct vigil_buf *evs)
{
	struct vigil_heartbeat hb = { .producer_pos = 8192, .consumer_pos = 4096, .last_seq = 1000,
				      .beats = 3, .interval_ns = 1000000000,
				      .consumer_since = 5000000000ull, .ticks_blind = 2 };
	struct vigil_blind bl = { .from_ktime = 5000000000ull, .to_ktime = 9000000000ull,
				  .ticks = 4 };
	struct vigil_prog_runs pr = { .beat = 3, .interval_ns = 1000000000, .runs = { 5, 6, 7 } };
	struct vigil_tamper tm = { .proc = proc, .what = VIGIL_TAMPER_SIGNAL, .agent_pid = 77,
				   .arg = 9, .comm = "kill" };

	pr.runs[VIGIL_PROG_SLOTS - 1] = 1;	/* a slot this build does not name */
	hdr(&hb, VIGIL_EV_HEARTBEAT, sizeof(hb)), health(evs, &hb, sizeof(hb));
	hdr(&pr, VIGIL_EV_PROG_RUNS, sizeof(pr)), health(evs, &pr, sizeof(pr));
	hdr(&bl, VIGIL_EV_BLIND, sizeof(bl)), health(evs, &bl, sizeof(bl));
	hdr(&tm, VIGIL_EV_TAMPER, sizeof(tm)), health(evs, &tm, sizeof(tm));
}

static void events(struct vigil_buf *evs, int v6)
{
	static const char strs[] = "/usr/bin/curl" "curl\0-s\0https://example.org/\xc3\xa9"
				   "/home/u" "/user.slice/session-1.scope";
	union {
		struct vigil_exec exec;
		char raw[sizeof(struct vigil_exec) + sizeof(strs) + 8];
	} x = { 0 };
	struct vigil_exit exit_ = { .proc = proc, .exit_code = 9 };
	struct vigil_fork fork_ = { .proc = proc };
	struct vigil_throttle thr = { .cgroup_id = 4242, .throttled = 17 };
	struct vigil_loss loss = { .ring_full = 3, .recursion_misses = 1, .threads_exited = 2 };
	struct vigil_conn conn = { .proc = proc, .latency_ns = 150000 };
	struct vigil_close close_ = { .proc = proc, .bytes_sent = 100, .bytes_received = 2000,
				      .duration_ns = 1000000, .reason = VIGIL_CLOSE_PEER_FIN,
				      .direction = VIGIL_CONN_OUT, .state = 7 };
	struct vigil_reset reset = { .proc = proc, .direction = VIGIL_RESET_SENT, .state = 1 };
	struct vigil_report_proc rp = { .period = { 1, 1000, 2000 }, .proc = proc };
	struct vigil_report_remote rr = { .period = { 1, 1000, 2000 }, .connections = 2 };
	struct vigil_report_end re = { .period = { 1, 1000, 2000 }, .procs = 1, .remotes = 1,
				       .interval_ns = 1000000000 };
	struct vigil_enforce enf = { .proc = proc, .rule_id = 3, .action = VIGIL_ACT_REJECT,
				     .dir = VIGIL_DIR_EGRESS, .family = v6 ? AF_INET6 : AF_INET,
				     .proto = 6, .tcp_flags = 0x02, .sport = 40000, .dport = 443 };
	size_t xlen = (sizeof(struct vigil_exec) + sizeof(strs) - 1 + 7) & ~7ul;

	fork_.proc.pid = fork_.proc.tid = 4243;
	x.exec.proc = proc;
	x.exec.binary_len = 13;
	x.exec.args_len = 4 + 1 + 2 + 1 + 22;
	x.exec.cwd_len = 7;
	x.exec.cgroup_len = sizeof(strs) - 1 - 13 - 30 - 7;
	if (v6) {	/* a memfd's exec: the file string is the cgroup path's tail */
		x.exec.flags = VIGIL_EXEC_UNLINKED | VIGIL_EXEC_FILELESS;
		x.exec.file_len = 8;
		x.exec.cgroup_len -= 8;
		x.exec.ino = 7301;
	}
	memcpy(x.exec.data, strs, sizeof(strs) - 1);
	hdr(&x, VIGIL_EV_EXEC, xlen);
	vbuf_put(evs, &x, xlen);
	hdr(&thr, VIGIL_EV_THROTTLE, sizeof(thr)), vbuf_put(evs, &thr, sizeof(thr));
	hdr(&fork_, VIGIL_EV_FORK, sizeof(fork_)), vbuf_put(evs, &fork_, sizeof(fork_));
	tuple(&conn.tuple, v6);
	hdr(&conn, VIGIL_EV_CONNECT, sizeof(conn)), vbuf_put(evs, &conn, sizeof(conn));
	hdr(&conn, VIGIL_EV_ACCEPT, sizeof(conn)), vbuf_put(evs, &conn, sizeof(conn));
	hdr(&conn, VIGIL_EV_LISTEN, sizeof(conn)), vbuf_put(evs, &conn, sizeof(conn));
	tuple(&close_.tuple, v6);
	hdr(&close_, VIGIL_EV_CLOSE, sizeof(close_)), vbuf_put(evs, &close_, sizeof(close_));
	tuple(&reset.tuple, v6);
	hdr(&reset, VIGIL_EV_RESET, sizeof(reset)), vbuf_put(evs, &reset, sizeof(reset));
	hdr(&enf, VIGIL_EV_ENFORCE, sizeof(enf));
	inet_pton(enf.family, v6 ? "2001:db8::1" : "10.0.0.1", enf.saddr);
	inet_pton(enf.family, v6 ? "2001:db8::2" : "10.0.0.2", enf.daddr);
	vbuf_put(evs, &enf, sizeof(enf));
	hdr(&rp, VIGIL_EV_REPORT_PROC, sizeof(rp)), vbuf_put(evs, &rp, sizeof(rp));
	rr.remote.family = v6 ? AF_INET6 : AF_INET;
	rr.remote.port = 443;
	inet_pton(rr.remote.family, v6 ? "2001:db8::2" : "10.0.0.2", rr.remote.addr);
	hdr(&rr, VIGIL_EV_REPORT_REMOTE, sizeof(rr)), vbuf_put(evs, &rr, sizeof(rr));
	hdr(&re, VIGIL_EV_REPORT_END, sizeof(re)), vbuf_put(evs, &re, sizeof(re));
	hdr(&loss, VIGIL_EV_LOSS, sizeof(loss)), vbuf_put(evs, &loss, sizeof(loss));
	hdr(&exit_, VIGIL_EV_EXIT, sizeof(exit_)), vbuf_put(evs, &exit_, sizeof(exit_));
	health_events(evs);
}

/* Frames events as ring records: {u32 len; u32 pg_off} event, padding. */
static void records(struct vigil_buf *out, const struct vigil_buf *evs, int discard_one)
{
	static const char zero[8];

	for (size_t p = 0; p < evs->len;) {
		const struct vigil_hdr *h = (const void *)(evs->p + p);
		uint32_t rec[2] = { h->size, 0 };

		if (discard_one-- == 1)
			rec[0] |= VIGIL_RB_DISCARD;
		vbuf_put(out, rec, sizeof(rec));
		vbuf_put(out, h, h->size);
		vbuf_put(out, zero, vigil_ring_rec_span(h->size) - 8 - h->size);
		p += h->size;
	}
}

int main(int argc, char **argv)
{
	static const __u8 boot[16] = { 0xb1, 0xc2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct vigil_buf hello = { 0 }, evs = { 0 }, recs = { 0 }, s = { 0 };
	char name[64];

	if (argc != 2)
		return fprintf(stderr, "usage: make_seeds DIR\n"), 2;
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST)
		return perror(dir), 1;

	for (unsigned i = 0; i < sizeof(policy_cases) / sizeof(policy_cases[0]); i++) {
		snprintf(name, sizeof(name), "case-%u.yaml", i);
		save("policy", name, policy_cases[i].yaml, strlen(policy_cases[i].yaml));
	}
	vigil_stream_hello_build(&hello, "node-1.example", boot, 7, 1 << 20, 4096, 1764754785LL * 1000000000LL);
	save("hello", "hello", hello.p, hello.len);
	s.len = 0;
	vigil_stream_hello_build(&s, "n", boot, 1, 4096, 0, 0);
	save("hello", "hello-short-name", s.p, s.len);

	for (int v6 = 0; v6 < 2; v6++) {
		/* every kind alone, as an event and as a stream */
		evs.len = 0;
		events(&evs, v6);
		for (size_t p = 0; p < evs.len;) {
			const struct vigil_hdr *h = (const void *)(evs.p + p);
			struct vigil_buf one = { .p = (char *)h, .len = h->size };

			snprintf(name, sizeof(name), "type-%u%s", h->type, v6 ? "-v6" : "");
			save("event", name, h, h->size);
			s.len = 0;
			vbuf_put(&s, hello.p, hello.len);
			records(&s, &one, 0);
			check_stream(&s);
			save("records", name, s.p, s.len);
			p += h->size;
		}
		snprintf(name, sizeof(name), "all%s", v6 ? "-v6" : "");
		save("event", name, evs.p, evs.len);
		recs.len = 0;
		records(&recs, &evs, 3);	/* the third one discarded */
		s.len = 0;
		vbuf_put(&s, hello.p, hello.len);
		vbuf_put(&s, recs.p, recs.len);
		check_stream(&s);
		save("records", name, s.p, s.len);

		/* the collector over TCP: byte 0 even, then the stream */
		s.len = 0;
		vbuf_putc(&s, v6 ? 0x10 : 0x00);
		vbuf_put(&s, hello.p, hello.len);
		vbuf_put(&s, recs.p, recs.len);
		vbuf_put(&s, recs.p, recs.len);	/* again: duplicates */
		save("collector", v6 ? "tcp-v6" : "tcp", s.p, s.len);

		/* over UDP: byte 0 odd, then {u16 len, datagram}: hello, data */
		{
			struct vigil_stream_dgram d = { .magic = VIGIL_STREAM_DGRAM_MAGIC,
							.version = VIGIL_STREAM_VERSION,
							.ring_id = 7, .len = recs.len, .offset = 4096 };
			uint16_t l;

			memcpy(d.boot_id, boot, 16);
			s.len = 0;
			vbuf_putc(&s, 1);
			l = hello.len, vbuf_put(&s, &l, 2), vbuf_put(&s, hello.p, hello.len);
			l = sizeof(d) + recs.len, vbuf_put(&s, &l, 2);
			vbuf_put(&s, &d, sizeof(d)), vbuf_put(&s, recs.p, recs.len);
			d.offset += recs.len * 2;	/* a datagram lost: a gap */
			l = sizeof(d) + recs.len, vbuf_put(&s, &l, 2);
			vbuf_put(&s, &d, sizeof(d)), vbuf_put(&s, recs.p, recs.len);
			save("collector", v6 ? "udp-v6" : "udp", s.p, s.len);
		}
	}
	vbuf_free(&hello), vbuf_free(&evs), vbuf_free(&recs), vbuf_free(&s);
	return 0;
}
