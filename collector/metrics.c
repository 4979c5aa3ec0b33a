// SPDX-License-Identifier: GPL-2.0
/* vigil-collector's metrics and readiness (metrics.h). */
#include <stdio.h>
#include "collector.h"
#include "json.h"
#include "metrics.h"
#include "prom.h"
#include "publish.h"
#include "version.h"

struct totals {
	uint64_t agents, connected, records, resent, gaps, lost_bytes, unknown_kinds;
	uint64_t cache_full, cache_missed;
};

static struct totals sum_agents(const struct collector *c)
{
	struct totals t = {};

	for (unsigned i = 0; i < c->max_agents; i++) {
		const struct agent *a = &c->agents[i];

		if (!a->used)
			continue;
		t.agents++;
		t.connected += a->conn != NULL;
		t.records += a->records;
		t.resent += a->resent;
		t.gaps += a->gap_events;
		t.lost_bytes += a->lost_bytes;
		t.unknown_kinds += a->unknown_kinds;
		t.cache_full += a->fmt.cache.misses;
		t.cache_missed += a->fmt.cache.lookups_missed;
	}
	return t;
}

/* --publish: JetStream's side (absent without it). */
static void publishing(struct vigil_buf *out, const struct collector *c)
{
	struct vigil_pub_counts p;

	if (!c->pub)
		return;
	vigil_pub_counts(c->pub, &p);
	vigil_prom_one(out, "vigil_collector_jetstream_published_total", "counter",
		       "Events JetStream acknowledged", p.published);
	vigil_prom_one(out, "vigil_collector_jetstream_messages_total", "counter",
		       "Messages JetStream acknowledged (batch layout: many events each)",
		       p.messages);
	vigil_prom_one(out, "vigil_collector_jetstream_pending", "gauge",
		       "Events of the batch JetStream has not acknowledged yet", p.pending);
	vigil_prom_one(out, "vigil_collector_jetstream_refusals_total", "counter",
		       "Publish attempts JetStream refused or did not acknowledge in time (each "
		       "retried: nothing is lost, agents wait)", p.refusals);
	vigil_prom_one(out, "vigil_collector_jetstream_holding", "gauge",
		       "1 while agents are held because JetStream does not acknowledge", p.holding);
}

void collector_metrics(struct vigil_buf *out, const struct collector *c)
{
	struct totals t = sum_agents(c);
	char schema[16];

	out->len = 0;
	snprintf(schema, sizeof(schema), "%u.%u", VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR);
	vigil_prom_family(out, "vigil_collector_build_info", "gauge",
			  "vigil-collector's version and event schema (1)");
	vigil_prom_sample(out, "vigil_collector_build_info", 1, "version", VIGIL_VERSION, "schema",
			  schema, NULL);
	vigil_prom_one(out, "vigil_collector_agents", "gauge", "Agent streams in the table", t.agents);
	vigil_prom_one(out, "vigil_collector_agents_connected", "gauge",
		       "Agent streams with a live connection", t.connected);
	vigil_prom_one(out, "vigil_collector_connections", "gauge", "Connections open", c->nconns);
	vigil_prom_one(out, "vigil_collector_records_total", "counter",
		       "Records taken from agents and written", t.records);
	vigil_prom_one(out, "vigil_collector_duplicates_total", "counter",
		       "Records an agent sent again that were written already (dropped)", t.resent);
	vigil_prom_one(out, "vigil_collector_gaps_total", "counter",
		       "vigil_gap events: sequence numbers an agent's stream never carried",
		       t.gaps);
	vigil_prom_one(out, "vigil_collector_lost_bytes_total", "counter",
		       "Stream bytes agents said they dropped (a spool past its bound)",
		       t.lost_bytes);
	vigil_prom_one(out, "vigil_collector_unknown_kinds_total", "counter",
		       "Records of event kinds this build does not know (a newer agent), skipped",
		       t.unknown_kinds);
	vigil_prom_one(out, "vigil_collector_process_cache_full_total", "counter",
		       "Processes not cached for lack of room (their later events lack details)",
		       t.cache_full);
	vigil_prom_one(out, "vigil_collector_process_lookups_missed_total", "counter",
		       "Events whose process or parent the cache did not know (written as miss)",
		       t.cache_missed);
	vigil_prom_family(out, "vigil_collector_refused_total", "counter",
			  "Connections and handshakes refused or closed, by reason");
	vigil_prom_sample(out, "vigil_collector_refused_total", c->closed_hostile, "reason",
			  "bad_input", NULL);
	vigil_prom_sample(out, "vigil_collector_refused_total", c->refused, "reason", "refused",
			  NULL);
	vigil_prom_sample(out, "vigil_collector_refused_total", c->handshakes_refused, "reason",
			  "handshake_rate", NULL);
	vigil_prom_sample(out, "vigil_collector_refused_total", c->handshakes_refused_all, "reason",
			  "handshake_rate_all", NULL);
	vigil_prom_sample(out, "vigil_collector_refused_total", c->evicted, "reason", "evicted",
			  NULL);
	if (c->tls) {
		vigil_prom_family(out, "vigil_collector_tls_refusals_total", "counter",
				  "tls:// peers refused, by reason (each also a bad_input refusal)");
		for (unsigned r = 0; r < TLS_REFUSED_N; r++)
			vigil_prom_sample(out, "vigil_collector_tls_refusals_total",
					  c->tls_refusals[r], "reason", conn_tls_refusal_name(r), NULL);
	}
	vigil_prom_family(out, "vigil_collector_datagrams_total", "counter",
			  "udp:// datagrams, by what became of them");
	vigil_prom_sample(out, "vigil_collector_datagrams_total", c->udp_datagrams, "result",
			  "received", NULL);
	vigil_prom_sample(out, "vigil_collector_datagrams_total", c->udp_bad, "result", "bad", NULL);
	vigil_prom_sample(out, "vigil_collector_datagrams_total", c->udp_unknown, "result",
			  "unknown_agent", NULL);
	vigil_prom_one(out, "vigil_collector_stream_offsets_forgotten_total", "counter",
		       "Stream offsets forgotten (--forget-after, or to make room)",
		       c->commit.retired + c->commit.evicted);
	publishing(out, c);
}

bool collector_readiness(struct vigil_buf *json, const struct collector *c)
{
	struct vigil_pub_counts p = {};
	struct jw w;

	if (c->pub)
		vigil_pub_counts(c->pub, &p);
	json->len = 0;
	jw_begin(&w, json);
	jw_obj(&w, NULL);
	jw_arr(&w, "reasons");
	if (p.holding)
		jw_cstr(&w, NULL, "JetStream does not acknowledge: agents are held");
	jw_arr_end(&w);
	jw_cstr(&w, "status", p.holding ? "not ready" : "ready");
	jw_end(&w);
	vbuf_putc(json, '\n');
	return !p.holding;
}
