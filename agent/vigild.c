// SPDX-License-Identifier: GPL-2.0
/*
 * vigild, the composition root: it parses the command line, starts each
 * part in order, moves events from the ring to the sinks until stopped,
 * and stops them. Only this file knows every part; the parts know only the
 * folders below them (Makefile, docs/architecture.md).
 *
 * A start is checked before it changes anything in force: what can be
 * refused cheaply (options, policy files, collector names, TLS files,
 * namespaces) is refused before anything is loaded; then every fallible
 * step runs, and the policy swap is the last one. A start that fails takes
 * back what it made (vigil_bpf_roll_back) and leaves what it found: an
 * earlier agent's pins, programs and the policy in force stay as they were.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "control/agent_metrics.h"
#include "control/metrics_binary.h"
#include "control/control_socket.h"
#include "core/health_relay.h"
#include "core/heartbeat.h"
#include "core/tamper.h"
#include "core/tamper_maps.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "core/loss.h"
#include "core/pump.h"
#include "enforce/enforce_carried.h"
#include "enforce/enforce_tc.h"
#include "enforce/rule_maps.h"
#include "enforce/filter_maps.h"
#include "observe/net.h"
#include "sinks/sink_local.h"
#include "sinks/subscribers.h"
#include "stream/sink_stream.h"
#include "export_file.h"
#include "http_health.h"
#include "log.h"
#include "pins.h"
#include "sd_notify.h"
#include "stream.h"
#include "vigild_options.h"

static volatile sig_atomic_t stop;
static volatile sig_atomic_t hup;	/* re-read the policy files */
static volatile sig_atomic_t hups;	/* SIGHUPs so far: tls:// re-reads its files */

/* Every part of a running agent, in start order. */
struct vigild {
	struct vigild_options o;
	struct vigil_export_file export;
	struct vigil_bpf bpf;
	struct vigil_control control;
	struct vigil_policy_state policy;
	struct vigil_tamper_progs *tamper;	/* kept: file rules take its open checks over */
	struct vigil_net net;
	struct vigil_enforce_tc *enforce;	/* --enforce-on */
	struct vigil_pump pump;
	struct vigil_sink_local local;
	bool local_up;
	struct vigil_subscribers subs;	/* `vigil events` */
	struct vigil_sink_stream streams[VIGIL_MAX_SINKS - 1];
	unsigned nstreams;
	struct vigil_loss_monitor loss;
	struct vigil_health_relay health;	/* the health ring into the main one */
	bool started;	/* the policy is in force: from here on a stop keeps all */
	struct vigil_http *http;	/* --metrics: /metrics, /livez, /readyz */
	struct vigil_buf metrics, ready;
	struct vigil_metrics_binary *binary;	/* --metrics-label binary */
};

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
	hups++;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* libbpf's lines and the verifier's log are for whoever debugs a load:
 * debug level only (a failed load says so in its own line). */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];

	(void)level;
	if (!vlog_enabled(VLOG_DEBUG))
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	vlog_line(VLOG_DEBUG, line);
	return 0;
}

/* What the running agent adds to `vigil status` (agent/control): its
 * streams, the records it took by kind, what the kernel lacks. */
static void describe_agent(void *ctx, struct vigil_buf *out)
{
	struct vigild *d = ctx;

	for (unsigned i = 0; i < d->nstreams; i++)
		vigil_sink_stream_describe(&d->streams[i], out);
	vbuf_printf(out, "records by kind: ");
	vigil_event_counts_text(&d->local.fmt, out);
	vbuf_putc(out, '\n');
	vigil_filter_describe(d->policy.filters, out);
	vigil_subscribers_describe(&d->subs, out);
	vigil_kernel_describe(out);
}

/* What can be refused before anything is opened or loaded: a bad policy, a
 * collector's name that does not resolve or TLS files that do not load, a
 * namespace or interface that is not there. */
static int check(struct vigild *d)
{
	struct vigild_options *o = &d->o;

	if (o->npolicy && vigil_control_check(o->policy, o->npolicy))
		return -EINVAL;
	o->stream.tls.node_name = o->node_name;
	o->stream.hups = &hups;
	for (unsigned i = 0; i < o->nsend; i++) {
		struct sockaddr_storage addr;
		unsigned addrlen;
		int socktype;

		if (vigil_stream_url(o->send[i], &socktype, &addr, &addrlen) ||
		    (vigil_tls_url(o->send[i]) && vigil_tls_init(NULL, &o->stream.tls, o->send[i])))
			return vlog_refuse(-EINVAL, "--send %s: refused, nothing started", o->send[i]);
	}
	for (unsigned i = 0; i < o->nenforce; i++)
		if (vigil_enforce_spec_check(o->enforce_on[i]))
			return -EINVAL;
	return 0;
}

static int open_export(struct vigild *d)
{
	const struct vigild_options *o = &d->o;
	int err;

	if (o->export_file) {
		err = vigil_export_open(&d->export, o->export_file, o->export_max_bytes,
					o->export_backups);
		if (err)
			return vlog_err(err, "cannot open export file %s", o->export_file);
		vigil_export_max_age(&d->export, o->export_max_age);
	} else if (o->json) {
		vigil_export_fd(&d->export, STDOUT_FILENO);
	}
	return 0;
}

/* The kernel side: the ring and the observing programs, the control socket
 * (which tells whether another agent serves these pins), the enforcement
 * objects (loaded, nothing applied), the --enforce-on interfaces. */
static int start_kernel(struct vigild *d)
{
	const struct vigild_options *o = &d->o;
	struct vigil_loader_opts lo = {
		.pin_dir = o->pin_dir, .ring_size = o->ring_size, .wakeup_bytes = o->wakeup_bytes,
		.proc_budget = o->proc_budget, .procfs = !o->no_procfs, .verbose = vlog_verbose,
	};
	int err;

	if ((err = vigil_tracefs_ready()) ||
	    (err = vigil_bpf_load(&d->bpf, &lo)) ||
	    (err = vigil_heartbeat_start(o->pin_dir, d->bpf.ring_size,
					 o->heartbeat_s * 1000000000ull)) ||
	    (err = vigil_tamper_start(&d->tamper, o->pin_dir, d->bpf.ring_size)) ||
	    (err = vigil_control_start(&d->control, o->pin_dir, &d->policy, &hup)) ||
	    (err = vigil_control_peers(&d->control, o->send, o->nsend)) ||
	    (err = vigil_policy_init(&d->policy, o->pin_dir, d->bpf.ring_size, d->tamper)) ||
	    (err = vigil_net_load(&d->net, &d->bpf, &o->net)) ||
	    (err = vigil_net_scan_sockets(&d->net)))
		return err;
	if (o->nenforce) {
		struct vigil_enforce_tc_opts eo = {
			.pin_dir = o->pin_dir, .ring_size = d->bpf.ring_size,
			.wakeup_bytes = o->wakeup_bytes, .track_flows = o->track_flows,
		};

		if ((err = vigil_enforce_tc_open(&d->enforce, &eo)))
			return err;
		for (unsigned i = 0; i < o->nenforce; i++)
			if ((err = vigil_enforce_tc_attach_spec(d->enforce, o->enforce_on[i])))
				return err;
	}
	return 0;
}

/* The pump and its sinks: the local output and each --send stream (its
 * spool folder, its TLS files). */
static int start_sinks(struct vigild *d)
{
	const struct vigild_options *o = &d->o;
	int err;

	if ((err = vigil_pump_init(&d->pump, d->bpf.ring_fd, o->poll_ms)) ||
	    (err = vigil_health_relay_open(&d->health, o->pin_dir)))
		return err;
	err = vigil_sink_local_init(&d->local, o->node_name,
				    (o->json || o->export_file) ? &d->export : NULL,
				    o->compact ? STDOUT_FILENO : -1, d->bpf.counters_fd);
	if (err)
		return err;
	d->local_up = true;
	d->local.fmt.opts = o->format;
	d->local.subs = &d->subs;
	d->control.subs = &d->subs;
	if (o->metrics_binary) {
		if ((err = vigil_metrics_binary_new(&d->binary, o->metrics_binaries, &d->policy)))
			return err;
		d->local.on_record = vigil_metrics_binary_record;
		d->local.on_record_ctx = d->binary;
	}
	vigil_pump_add(&d->pump, &d->local.sink);
	for (; d->nstreams < o->nsend; d->nstreams++) {
		struct vigil_sink_stream *s = &d->streams[d->nstreams];
		struct vigil_stream_opts so = o->stream;

		so.url = o->send[d->nstreams];
		so.node_name = o->node_name;
		so.realtime_offset_ns = d->local.fmt.realtime_offset_ns;
		if ((err = vigil_sink_stream_init(s, &so, d->bpf.ring_fd, d->pump.epfd)))
			return err;
		vigil_pump_add(&d->pump, &s->sink);
	}
	d->control.describe_streams = describe_agent;
	d->control.streams_ctx = d;
	return 0;
}

/* After the policy swap nothing may fail the start: what an earlier agent
 * attached and these options do not want is released, and a release that
 * fails is said, not taken back. */
static void release_unwanted(struct vigild *d)
{
	struct vigil_enforce_tc *keep[] = { d->enforce, d->policy.tc };
	int err;

	vigil_enforce_links_prune(d->o.pin_dir, keep, 2);
	if ((err = vigil_bpf_detach_unwanted(&d->bpf)) ||
	    (err = vigil_net_detach_unwanted(&d->net, d->o.pin_dir)))
		vlog_err(err, "an earlier agent's program these options do not want stays attached "
			 "(`vigil unpin` and a new start remove it)");
}

static int start(struct vigild *d)
{
	int err;

	/* First: a port in use refuses the start before anything is loaded,
	 * and /livez answers (and /readyz says not ready) while it starts. */
	if (d->o.metrics && !(d->http = vigil_http_start(d->o.metrics, "vigild")))
		return -EADDRINUSE;
	if ((err = start_kernel(d)) || (err = start_sinks(d)))
		return err;
	d->control.packet_path = d->o.nenforce > 0;
	if ((err = vigil_control_enforce(&d->control, d->o.policy, d->o.npolicy)))
		return err;
	d->started = true;
	release_unwanted(d);
	vigil_tamper_maps_sync(d->o.pin_dir);	/* logged; the records then miss map writes */
	vlog_info("%s, pinned at %s; ring %llu bytes", d->bpf.resumed ? "resumed" : "attached",
		  d->o.pin_dir, (unsigned long long)d->pump.ring.size);
	vigil_sd_notify("READY=1");	/* systemd (Type=notify): attached and enforcing */
	return d->o.no_procfs ? 0 : vigil_bpf_scan_procfs(&d->bpf, true);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What --metrics serves, rendered on this loop once a second: the HTTP
 * thread only copies it out. */
static void publish_health(struct vigild *d)
{
	struct vigil_agent_view v = {
		.bpf = &d->bpf, .net = &d->net, .pump = &d->pump, .local = &d->local,
		.streams = d->streams, .nstreams = d->nstreams, .loss = &d->loss,
		.policy = &d->policy, .binary = d->binary, .started = d->started,
	};
	bool ready;

	if (!d->http)
		return;
	vigil_agent_metrics(&d->metrics, &v);
	ready = vigil_agent_readiness(&d->ready, &v);
	if (!d->metrics.oom && !d->ready.oom)
		vigil_http_publish(d->http, d->metrics.p, d->metrics.len, ready, d->ready.p);
}

static void run(struct vigild *d)
{
	double start = now_s(), last_loss = 0, last_control = 0;
	bool flowing = false;

	while (!stop) {
		double t;

		flowing = vigil_pump_once(&d->pump) > 0;
		if (vigil_health_relay_run(&d->health, &d->bpf) > 0)
			flowing = true;
		vigil_http_alive(d->http);
		t = now_s();
		if (t - last_loss >= 1.0) {
			last_loss = t;
			if (vigil_loss_check(&d->loss, &d->bpf))
				flowing = true;
			vigil_export_expire(&d->export);	/* between batches */
			publish_health(d);
		}
		if (t - last_control >= 0.05) {
			last_control = t;
			vigil_control_tick(&d->control);
			vigil_subscribers_tick(&d->subs);
			vigil_deny_carried_tick(&d->policy);
		}
		if (d->o.duration && t - start >= d->o.duration)
			break;
		if (d->local.reader_gone) {
			vlog_info("stdout's reader has gone (a closed pipe): stopping; "
				  "what it did not take waits in the pinned ring");
			break;
		}
		vigil_pump_wait(&d->pump, flowing);
	}
	vigil_health_relay_run(&d->health, &d->bpf);
	vigil_pump_flush(&d->pump);
	vigil_loss_final(&d->loss, &d->bpf);
	vigil_pump_flush(&d->pump);
	vigil_subscribers_tick(&d->subs);	/* what the stop flushed, if they take it */
}

/* What a user needs to trust the output: every record accounted for.
 * -EIO when the local output lost events. */
static int summarise(struct vigild *d)
{
	const struct vigil_sink_local *l = &d->local;
	struct vigil_buf kinds = {};

	vlog_info("stopped: %llu records, %llu gaps and %llu duplicates in sequence; "
		  "BPF counted %llu ring-full losses, %llu recursion misses",
		  (unsigned long long)l->seqs.seen,
		  (unsigned long long)(l->seqs.gaps + vigil_seq_window_open_gaps(&l->seqs)),
		  (unsigned long long)l->seqs.dups, (unsigned long long)d->loss.ring_full,
		  (unsigned long long)d->loss.recursion_misses);
	vigil_event_counts_text(&l->fmt, &kinds);
	vlog_info("records by kind: %.*s", (int)kinds.len, kinds.p);
	/* Filtered events were never records: apart from loss, by filter. */
	kinds.len = 0;
	vigil_filter_describe(d->policy.filters, &kinds);
	vlog_info("filtered before the ring (not lost): %llu;%.*s",
		  (unsigned long long)vigil_filter_total(d->policy.filters),
		  (int)(kinds.len - 1 - strlen("filtered:")), kinds.p + strlen("filtered:"));
	vbuf_free(&kinds);
	if (!d->o.unpin_on_exit)
		vlog_info("the programs stay attached and the ring at %s keeps filling until the "
			  "next start (past its size, events are lost and counted); "
			  "`vigil%s%s unpin` detaches them and frees the ring",
			  d->o.pin_dir, strcmp(d->o.pin_dir, VIGIL_PIN_DIR_DEFAULT) ? " --pin-dir " : "",
			  strcmp(d->o.pin_dir, VIGIL_PIN_DIR_DEFAULT) ? d->o.pin_dir : "");
	if (l->bad_records)
		vlog_info("skipped %llu malformed ring records", (unsigned long long)l->bad_records);
	vlog_debug("malformed records %llu, polls %llu, wakeups %llu",
		   (unsigned long long)l->bad_records, (unsigned long long)d->pump.polls,
		   (unsigned long long)d->pump.wakeups);
	if (!l->dropped_records && (!l->unwritten_bytes || l->reader_gone))
		return 0;
	vlog_info("local output lost events: dropped %llu records (%llu ring bytes) it could "
		  "not write; %llu ring bytes unwritten at stop (%s)",
		  (unsigned long long)l->dropped_records, (unsigned long long)l->dropped_bytes,
		  (unsigned long long)l->unwritten_bytes,
		  d->o.unpin_on_exit ? "lost: --unpin-on-exit" : "left in the pinned ring");
	return -EIO;
}

/* Stops every part. A start that did not reach the policy swap takes back
 * the enforcement and pins it made, and leaves the policy in force. */
static void stop_all(struct vigild *d)
{
	while (d->nstreams--)
		vigil_sink_stream_free(&d->streams[d->nstreams]);
	if (d->local_up)
		vigil_sink_local_free(&d->local);
	if (!d->started) {
		vigil_enforce_tc_rollback(d->enforce, 0);
		vigil_enforce_tc_rollback(d->policy.tc, 0);
	}
	vigil_pump_close(&d->pump);
	vigil_loss_close(&d->loss);
	vigil_health_relay_close(&d->health);
	vigil_enforce_tc_close(d->enforce);
	vigil_net_close(&d->net);
	vigil_control_close(&d->control);
	vigil_subscribers_close(&d->subs);
	vigil_policy_close(&d->policy);
	vigil_tamper_close(d->tamper);
	d->tamper = NULL;
	if (d->started)
		vigil_bpf_close(&d->bpf, d->o.unpin_on_exit);
	else
		vigil_bpf_roll_back(&d->bpf);
	vigil_export_close(&d->export);
	vigil_http_stop(d->http);
	vbuf_free(&d->metrics);
	vbuf_free(&d->ready);
	vigil_metrics_binary_free(d->binary);
}

int main(int argc, char **argv)
{
	static struct vigild d = {
		.export = { .fd = -1 }, .control = { .fd = -1 }, .pump = { .epfd = -1 },
		.health = { .fd = -1 },
	};
	int err;

	vlog_prog = "vigild";
	vlog_daemon();
	setvbuf(stderr, NULL, _IOLBF, 0);
	err = vigild_options_parse(argc, argv, &d.o);
	if (err)
		return err == VIGIL_OPTS_DONE ? VIGIL_EXIT_OK : VIGIL_EXIT_USAGE;
	if (check(&d) || open_export(&d))
		return VIGIL_EXIT_FAIL;
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	err = start(&d);
	if (!err) {
		run(&d);
		vigil_sd_notify("STOPPING=1");
		err = summarise(&d);
	}
	stop_all(&d);
	return vigil_exit_status(err);
}
