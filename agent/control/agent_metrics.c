// SPDX-License-Identifier: GPL-2.0
/* vigild's metrics and readiness (agent_metrics.h, docs/operations.md). */
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include "control/agent_metrics.h"
#include "control/metrics_binary.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "core/loss.h"
#include "core/pump.h"
#include "enforce/rule_maps.h"
#include "enforce/filter_maps.h"
#include "observe/net.h"
#include "sinks/sink_local.h"
#include "stream/sink_stream.h"
#include "counters.h"
#include "proc_cache.h"
#include "json.h"
#include "prom.h"
#include "version.h"
#include "net.skel.h"
#include "process.skel.h"
#include "report.skel.h"

/* A sink lagging this far behind the producer (a quarter of the ring) is
 * not ready: past half the ring BPF starts to lose events. */
#define LAG_READY_DIV 4

static const char *const stream_states[] = { "down", "connecting", "handshake", "acceptance",
					     "up" };
static const char *const tx_paths[] = { "auto", "uring_zerocopy", "msg_zerocopy", "send",
					"ssl_write" };

static void build_info(struct vigil_buf *b)
{
	char schema[16];

	snprintf(schema, sizeof(schema), "%u.%u", VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR);
	vigil_prom_family(b, "vigil_build_info", "gauge", "vigild's version and event schema (1)");
	vigil_prom_sample(b, "vigil_build_info", 1, "version", VIGIL_VERSION, "schema", schema, NULL);
}

static void events(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	vigil_prom_family(b, "vigil_events_total", "counter",
			  "Records the agent took from the ring, by event type");
	if (v->binary)
		return vigil_metrics_binary_events(b, v->binary, v->local->fmt.counts);
	for (unsigned t = 0; t <= VIGIL_EV_TYPE_MAX; t++) {
		const char *name = vigil_event_kind_name(t);

		if (name)
			vigil_prom_sample(b, "vigil_events_total", v->local->fmt.counts[t],
					  "type", name, NULL);
	}
}

static void losses(struct vigil_buf *b, const struct vigil_agent_view *v, const uint64_t *c)
{
	const struct vigil_sink_local *l = v->local;

	vigil_prom_family(b, "vigil_events_lost_total", "counter",
			  "Events lost, by stage: reserve (the ring was full), recursion (the kernel "
			  "skipped a program), output (the local output dropped them), sequence "
			  "(gaps the agent saw in the sequence numbers)");
	vigil_prom_sample(b, "vigil_events_lost_total", c[VIGIL_CNT_RING_FULL], "stage", "reserve", NULL);
	vigil_prom_sample(b, "vigil_events_lost_total", v->loss->recursion_misses, "stage", "recursion",
			  NULL);
	vigil_prom_sample(b, "vigil_events_lost_total", l->dropped_records, "stage", "output", NULL);
	vigil_prom_sample(b, "vigil_events_lost_total",
			  l->seqs.gaps + vigil_seq_window_open_gaps(&l->seqs), "stage", "sequence", NULL);
	vigil_prom_one(b, "vigil_bpf_missed_events_total", "counter",
		       "Program runs the kernel skipped by recursion protection (events never made)",
		       v->loss->recursion_misses);
	vigil_prom_one(b, "vigil_events_throttled_total", "counter",
		       "Process events over a cgroup's or uid's --proc-budget (not lost: throttled)",
		       c[VIGIL_CNT_PROC_THROTTLED]);
	vigil_prom_one(b, "vigil_output_write_errors_total", "counter",
		       "Writes of the local output that failed", l->write_errors);
	vigil_prom_one(b, "vigil_output_failing", "gauge",
		       "1 while the local output cannot be written (a full disk): events wait "
		       "in the ring", l->failing ? 1 : 0);
	vigil_prom_family(b, "vigil_kernel_counter_total", "counter",
			  "vigil's BPF counters by name (docs/events.md, vigil status)");
	for (unsigned i = 0; i < VIGIL_CNT_MAX; i++) {
		const char *name = vigil_counter_name(i);

		if (name)
			vigil_prom_sample(b, "vigil_kernel_counter_total", c[i], "name", name, NULL);
	}
}

static void process_cache(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	const struct vigil_proc_cache *c = &v->local->fmt.cache;

	vigil_prom_one(b, "vigil_process_cache_entries", "gauge",
		       "Processes the agent's cache holds (names them in later events)", c->count);
	vigil_prom_one(b, "vigil_process_cache_capacity", "gauge",
		       "Processes it can hold", c->max);
	vigil_prom_one(b, "vigil_process_cache_full_total", "counter",
		       "Processes not cached for lack of room (later events lack details)", c->misses);
	vigil_prom_one(b, "vigil_process_lookups_missed_total", "counter",
		       "Events whose process or parent the cache did not know (flagged miss)",
		       c->lookups_missed);
}

/* taken - freed, or 0 where more were freed than taken: a table pinned by a
 * build that did not count yet. */
static uint64_t in_use(uint64_t taken, uint64_t freed)
{
	return taken > freed ? taken - freed : 0;
}

static void socket_table(struct vigil_buf *b, const struct vigil_agent_view *v, const uint64_t *c)
{
	const struct net_bpf *n = v->net ? v->net->net : NULL;
	uint64_t sets = in_use(c[VIGIL_CNT_NET_SOCK_TAKEN], c[VIGIL_CNT_NET_SOCK_FREED]);
	uint64_t spill = in_use(c[VIGIL_CNT_NET_SOCK_SPILLED], c[VIGIL_CNT_NET_SOCK_UNSPILLED]);

	if (!n)
		return;
	vigil_prom_one(b, "vigil_socket_table_entries", "gauge",
		       "TCP sockets the socket table holds (its sets and its spill)", sets + spill);
	vigil_prom_one(b, "vigil_socket_table_capacity", "gauge",
		       "Sockets its sets hold (--max-sockets)",
		       (double)bpf_map__max_entries(n->maps.vigil_socks) * VIGIL_SOCK_WAYS);
	vigil_prom_one(b, "vigil_socket_table_spilled", "gauge",
		       "Of those, sockets in the spill (their set was full)", spill);
	vigil_prom_one(b, "vigil_socket_table_spill_capacity", "gauge", "Sockets the spill holds",
		       bpf_map__max_entries(n->maps.vigil_socks_spill));
	vigil_prom_one(b, "vigil_socket_table_full_total", "counter",
		       "Sockets and listeners that found no room (no events for them)",
		       c[VIGIL_CNT_NET_NO_STORAGE]);
}

static void ring(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	const struct vigil_ring *r = &v->pump->ring;

	vigil_prom_one(b, "vigil_ring_size_bytes", "gauge", "The pinned ring's data area", r->size);
	vigil_prom_one(b, "vigil_ring_pending_bytes", "gauge",
		       "Bytes in the ring no sink is done with yet",
		       vigil_ring_producer(r) - vigil_ring_consumer(r));
}

static void sink_state(struct vigil_buf *b, const char *sink, unsigned n, const char *const *names,
		       unsigned at, const char *family)
{
	for (unsigned i = 0; i < n; i++)
		vigil_prom_sample(b, family, i == at, "sink", sink, "state", names[i], NULL);
}

static void sinks(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	uint64_t prod = vigil_ring_producer(&v->pump->ring);

	vigil_prom_family(b, "vigil_sink_lag_bytes", "gauge",
			  "Bytes between the producer and a sink's position (max() for the slowest)");
	vigil_prom_sample(b, "vigil_sink_lag_bytes", prod - v->local->sink.pos, "sink", "local", NULL);
	for (unsigned i = 0; i < v->nstreams; i++)
		vigil_prom_sample(b, "vigil_sink_lag_bytes", prod - v->streams[i].sink.pos, "sink",
				  v->streams[i].o.url, NULL);
	if (!v->nstreams)
		return;
	vigil_prom_family(b, "vigil_sink_sent_bytes_total", "counter", "Bytes a stream sent");
	for (unsigned i = 0; i < v->nstreams; i++)
		vigil_prom_sample(b, "vigil_sink_sent_bytes_total", v->streams[i].tx.bytes, "sink",
				  v->streams[i].o.url, NULL);
	vigil_prom_family(b, "vigil_sink_unacked_bytes", "gauge",
			  "Bytes a stream sent that its collector has not acknowledged");
	for (unsigned i = 0; i < v->nstreams; i++) {
		const struct vigil_sink_stream *s = &v->streams[i];

		vigil_prom_sample(b, "vigil_sink_unacked_bytes", s->tx.sent > s->acked ? s->tx.sent - s->acked : 0,
				  "sink", s->o.url, NULL);
	}
	vigil_prom_family(b, "vigil_sink_connects_total", "counter", "Connections a stream made");
	for (unsigned i = 0; i < v->nstreams; i++)
		vigil_prom_sample(b, "vigil_sink_connects_total", v->streams[i].connects, "sink",
				  v->streams[i].o.url, NULL);
	vigil_prom_family(b, "vigil_sink_failures_total", "counter",
			  "Connections of a stream that failed or were refused");
	for (unsigned i = 0; i < v->nstreams; i++)
		vigil_prom_sample(b, "vigil_sink_failures_total", v->streams[i].failures, "sink",
				  v->streams[i].o.url, NULL);
	vigil_prom_family(b, "vigil_sink_spool_bytes", "gauge", "Bytes a stream holds in its spool");
	for (unsigned i = 0; i < v->nstreams; i++) {
		const struct vigil_spool *sp = &v->streams[i].spool;
		uint64_t bytes = 0;

		for (unsigned j = 0; j < sp->nseg; j++)
			bytes += sp->seg[j].end - sp->seg[j].start;
		vigil_prom_sample(b, "vigil_sink_spool_bytes", bytes, "sink", v->streams[i].o.url, NULL);
	}
	vigil_prom_family(b, "vigil_sink_state", "gauge", "A stream's state (one-hot)");
	for (unsigned i = 0; i < v->nstreams; i++)
		sink_state(b, v->streams[i].o.url, 5, stream_states, v->streams[i].state,
			   "vigil_sink_state");
	vigil_prom_family(b, "vigil_sink_path", "gauge",
			  "How a stream sends (one-hot): io_uring or MSG_ZEROCOPY zero copy, send(), "
			  "SSL_write; kTLS sends with send()");
	for (unsigned i = 0; i < v->nstreams; i++)
		sink_state(b, v->streams[i].o.url, 5, tx_paths, v->streams[i].tx.path, "vigil_sink_path");
}

static void rules(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	const struct vigil_policy *p = &v->policy->in_force;
	static const struct { const char *name, *help; } fams[] = {
		{ "vigil_policy_events_total", "Packets or connects each rule in force decided" },
		{ "vigil_policy_replies_total", "Resets and ICMP errors each rule sent" },
		{ "vigil_policy_suppressed_total", "Replies and events a rule's limits held back" },
	};

	vigil_prom_one(b, "vigil_policy_rules", "gauge", "Rules in force", p->n_rules);
	for (unsigned f = 0; f < 3 && p->n_rules; f++) {
		vigil_prom_family(b, fams[f].name, "counter", fams[f].help);
		if (f == 0 && v->binary) {
			vigil_metrics_binary_policy(b, v->binary);
			continue;
		}
		for (unsigned i = 0; i < p->n_rules; i++) {
			struct vigil_rule_stats st = {};
			uint64_t val;

			vigil_policy_rule_stats(v->policy, i, &st);
			val = f == 0 ? st.hits : f == 1 ? st.replies
				 : st.replies_suppressed + st.events_suppressed;
			vigil_prom_sample(b, fams[f].name, val, "policy", p->rules[i].name, "action",
					  vigil_policy_action_name(p->rules[i].action), NULL);
		}
	}
}

static void filtered_one(const char *name, uint64_t n, void *b)
{
	vigil_prom_sample(b, "vigil_events_filtered_total", n, "filter", name, NULL);
}

/* Apart from loss: a filtered event was dropped on purpose. */
static void filtered(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	vigil_prom_family(b, "vigil_events_filtered_total", "counter",
			  "Events the policy's export filters dropped before the ring, by filter "
			  "(not lost: filtered); not_allowed: those no allow filter matched");
	vigil_filter_counts(v->policy->filters, filtered_one, b);
}

static void features(struct vigil_buf *b)
{
	const char *feature;
	bool present;

	vigil_prom_family(b, "vigil_kernel_feature", "gauge",
			  "A kernel feature vigild uses, present or missing (one-hot); missing "
			  "degrades one part (vigil status, docs/kernels.md)");
	for (unsigned i = 0; vigil_kernel_feature_at(i, &feature, &present); i++) {
		char name[96];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(feature, "("), feature);
		if (strlen(name) && name[strlen(name) - 1] == ' ')
			name[strlen(name) - 1] = 0;
		vigil_prom_sample(b, "vigil_kernel_feature", present, "feature", name, "state", "present",
				  NULL);
		vigil_prom_sample(b, "vigil_kernel_feature", !present, "feature", name, "state",
				  "missing", NULL);
	}
}

/* Per program, from bpf_prog_info: only where kernel.bpf_stats_enabled is
 * on (its cost is the kernel's, per run), else absent. */
static void prog_stats(struct vigil_buf *b, const struct vigil_agent_view *v)
{
	const struct bpf_object *objs[] = {
		v->bpf->process ? v->bpf->process->obj : NULL,
		v->net && v->net->net ? v->net->net->obj : NULL,
		v->net && v->net->report ? v->net->report->obj : NULL,
	};
	struct bpf_program *prog;
	char on = '0';
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");

	if (f) {
		on = fgetc(f);
		fclose(f);
	}
	if (on != '1')
		return;
	vigil_prom_family(b, "vigil_bpf_prog_runs_total", "counter", "Runs of each vigil program");
	vigil_prom_family(b, "vigil_bpf_prog_run_seconds_total", "counter",
			  "Time each vigil program ran");
	for (unsigned i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		if (!objs[i])
			continue;
		bpf_object__for_each_program(prog, objs[i]) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);
			int fd = bpf_program__fd(prog);

			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
				continue;
			vigil_prom_sample(b, "vigil_bpf_prog_runs_total", info.run_cnt, "prog",
					  bpf_program__name(prog), NULL);
			vigil_prom_sample(b, "vigil_bpf_prog_run_seconds_total", info.run_time_ns / 1e9,
					  "prog", bpf_program__name(prog), NULL);
		}
	}
}

void vigil_agent_metrics(struct vigil_buf *out, const struct vigil_agent_view *v)
{
	uint64_t c[VIGIL_CNT_MAX] = {};

	vigil_counters_read(v->bpf->counters_fd, c);
	out->len = 0;
	build_info(out);
	vigil_prom_one(out, "vigil_up", "gauge", "1 once attached with the policy in force", v->started);
	events(out, v);
	losses(out, v, c);
	ring(out, v);
	process_cache(out, v);
	socket_table(out, v, c);
	sinks(out, v);
	rules(out, v);
	filtered(out, v);
	features(out);
	prog_stats(out, v);
}

bool vigil_agent_readiness(struct vigil_buf *json, const struct vigil_agent_view *v)
{
	uint64_t prod = vigil_ring_producer(&v->pump->ring), bound = v->pump->ring.size / LAG_READY_DIV;
	const char *feature;
	bool present, ready = v->started, degraded = false;
	struct jw w;

	json->len = 0;
	jw_begin(&w, json);
	jw_obj(&w, NULL);
	jw_arr(&w, "reasons");
	if (!v->started)
		jw_cstr(&w, NULL, "not started: programs not attached or policy not in force");
	if (v->local->failing) {
		ready = false;
		jw_cstr(&w, NULL, "the local output cannot be written: events wait in the ring");
	}
	if (prod - v->local->sink.pos > bound) {
		ready = false;
		jw_cstr(&w, NULL, "the local output lags past a quarter of the ring");
	}
	for (unsigned i = 0; i < v->nstreams; i++) {
		const struct vigil_sink_stream *s = &v->streams[i];
		char why[512];

		if (s->state == STREAM_UP && prod - s->sink.pos <= bound)
			continue;
		if (s->spooling && s->state != STREAM_UP) {
			degraded = true;	/* its backlog goes to the spool: nothing lost */
			snprintf(why, sizeof(why), "%s: %s, spooling", s->o.url, stream_states[s->state]);
		} else {
			ready = false;
			snprintf(why, sizeof(why), "%s: %s, %llu bytes behind", s->o.url,
				 stream_states[s->state], (unsigned long long)(prod - s->sink.pos));
		}
		jw_cstr(&w, NULL, why);
	}
	for (unsigned i = 0; vigil_kernel_feature_at(i, &feature, &present); i++)
		if (!present) {
			degraded = true;
			jw_cstr(&w, NULL, feature);
		}
	jw_arr_end(&w);
	jw_cstr(&w, "status", !ready ? "not ready" : degraded ? "degraded" : "ready");
	jw_end(&w);
	vbuf_putc(json, '\n');
	return ready;
}
