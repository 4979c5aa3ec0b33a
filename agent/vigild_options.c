// SPDX-License-Identifier: GPL-2.0
/* vigild's command line (vigild_options.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <vigil/events.h>
#include "control.h"
#include "http_health.h"
#include "log.h"
#include "opts.h"
#include "pins.h"
#include "stream.h"
#include "version.h"
#include "core/heartbeat.h"
#include "control/metrics_binary.h"
#include "vigild_options.h"

#define AT(field) .off = offsetof(struct vigild_options, field)
#define FLAG(field) .set = vigil_opt_flag, AT(field)
#define STR(field) .set = vigil_opt_str, AT(field)
#define U64(field, lo, hi) .set = vigil_opt_u64, AT(field), .min = (lo), .max = (hi)
#define LIST(field, n, cap) .set = vigil_opt_list, AT(field), \
	.count_off = offsetof(struct vigild_options, n), .max = (cap)

static vigil_opt_set_fn set_ring_size, set_metrics_label, set_budget, set_budget_by, set_node,
	set_pin_dir, set_send_path, set_duration, set_version;

static const char usage_head[] =
	"Usage: vigild [OPTION]...\n"
	"Watch processes from BPF and write their events out.\n"
	"With no output option, events are shown one line each (--compact).\n";

static const struct vigil_opt options[] = {
	{ .help = "Output:" },
	{ "json", 'j', 0, NULL, "JSON lines (Tetragon's field names) on stdout", FLAG(json) },
	{ "compact", 'c', 0, NULL, "one line per event on stdout", FLAG(compact) },
	{ "export-file", 'o', 0, "PATH", "JSON lines appended to PATH, rotated by size",
	  STR(export_file) },
	{ "export-file-max-size-mb", 0, 0, "N", "rotate PATH past N MiB (default 10; 0 never)",
	  U64(export_max_bytes, 0, 1 << 20), .shift = 20 },
	{ "export-file-max-backups", 0, 0, "N", "keep N rotated files (default 5)",
	  U64(export_backups, 0, 1000) },
	{ "export-max-age", 0, 0, "SECONDS",
	  "retention by age: no line kept past 1.5 x SECONDS,\n"
	  "none removed by age before SECONDS (default 0)",
	  U64(export_max_age, 0, 10.0 * 365 * 86400) },
	VIGIL_FORMAT_OPTS(0, offsetof(struct vigild_options, format)),
	{ "node-name", 0, 0, "NAME", "node name in events and exec ids (default: hostname)",
	  .set = set_node },
	{ "send", 0, 0, "URL",
	  "stream the ring to a collector, tcp://HOST:PORT,\n"
	  "tls://HOST:PORT (with --tls-*) or udp://HOST:PORT\n"
	  "(repeatable; alone, it turns the terminal view off)",
	  LIST(send, nsend, VIGIL_MAX_SINKS - 1) },
	{ "send-path", 0, 0, "PATH", "auto (default), uring, zerocopy or send",
	  .set = set_send_path },
	{ "spool-dir", 0, 0, "DIR",
	  "a collector away past half the ring: its backlog\n"
	  "waits in DIR (default: in the ring only)", STR(stream.spool_dir) },
	{ "spool-max-mb", 0, 0, "N", "the spool's bound, per --send (default 256)",
	  .set = vigil_opt_double, AT(spool_max_mb), .min = 0.0625, .max = 1048576 },
	{ "tls-cert", 0, 0, "FILE",
	  "tls:// (mutual TLS 1.3): this node's certificate\n"
	  "(PEM; its first DNS name is the node's identity)", STR(stream.tls.cert) },
	{ "tls-key", 0, 0, "FILE", "its private key (PEM)", STR(stream.tls.key) },
	{ "tls-ca", 0, 0, "FILE", "the CA that signs the collector's certificate",
	  STR(stream.tls.ca) },
	{ "tls-server-name", 0, 0, "NAME",
	  "the name the collector's certificate must carry\n"
	  "(default: the URL's host; an IP as an IP SAN)", STR(stream.tls.server_name) },
	{ .help = "Kernel side:" },
	{ "pin-dir", 0, 0, "DIR",
	  "where maps and links are pinned (default " VIGIL_PIN_DIR_DEFAULT ")",
	  .set = set_pin_dir },
	{ "ring-size", 0, 0, "BYTES",
	  "ring buffer size, a power of two (default 16 MiB;\n"
	  "a ring already pinned keeps its size)", .set = set_ring_size, AT(ring_size),
	  .min = 4096, .max = 1ull << 31 },
	{ "wakeup-bytes", 0, 0, "N",
	  "bytes waiting in the ring that wake the agent early\n"
	  "(default: an eighth of the ring)", U64(wakeup_bytes, 0, 1ull << 31) },
	{ "poll-ms", 0, 0, "N", "how often a quiet ring is checked (default 50)",
	  U64(poll_ms, 0, 60000) },
	{ "no-procfs", 0, 0, NULL, "do not report processes running at start", FLAG(no_procfs) },
	{ "proc-budget", 0, 0, "RATE[:BURST]",
	  "at most RATE process events a second per cgroup\n"
	  "(bursts of BURST, default RATE); the rest are\n"
	  "counted and reported per cgroup (default: none)", .set = set_budget },
	{ "proc-budget-by", 0, 0, "cgroup|uid",
	  "the budget is per cgroup (default) or per uid", .set = set_budget_by },
	{ "unpin-on-exit", 0, 0, NULL,
	  "remove the pins when stopping (default: keep them,\n"
	  "so events wait in the ring for the next start)", FLAG(unpin_on_exit) },
	{ .help = "Network events and reports:" },
	{ "report-interval", 0, 0, "SECONDS",
	  "reports built in BPF every SECONDS (default 10; 0 none)",
	  U64(report_interval_s, 0, 86400) },
	{ "heartbeat-interval", 0, 0, "SECONDS",
	  "a heartbeat from BPF every SECONDS, agent or not, and a blind record when "
	  "the ring's reader stood still (default 5; 0 none)",
	  U64(heartbeat_s, 0, 3600) },
	{ "report-only", 0, 0, NULL, "reports only: no per-connection events",
	  FLAG(net.report_only) },
	{ "no-listen-events", 0, 0, NULL, "no events about listening sockets", FLAG(net.no_listen) },
	{ "no-loopback-events", 0, 0, NULL, "no events for connections within loopback",
	  FLAG(net.no_loopback) },
	{ "max-sockets", 0, 0, "N",
	  "TCP sockets the socket table holds (default 131072,\n"
	  "about 80 bytes each; a table already pinned keeps\n"
	  "its size)", U64(max_sockets, 1024, 1u << 24) },
	{ "no-io-hooks", 0, 0, NULL,
	  "no hook at every send and receive: an accepted\n"
	  "socket's owner is the process that accepted it", FLAG(net.no_io_hooks) },
	{ .help = "Enforcement:" },
	{ "policy", 0, 0, "FILE",
	  "enforce the rules in FILE (repeatable; docs/policy.md);\n"
	  "SIGHUP and 'vigil policy load' re-read them",
	  LIST(policy, npolicy, VIGIL_POLICY_FILES_MAX) },
	{ "enforce-on", 0, 0, "NETNS/IFNAME[:xdp]",
	  "network rules at TC (ingress and egress; with :xdp,\n"
	  "XDP ingress) on IFNAME in NETNS (/run/netns name or\n"
	  "path; the root namespace only as /proc/1/ns/net)",
	  LIST(enforce_on, nenforce, VIGILD_ENFORCE_ON_MAX) },
	{ "track-flows", 0, 0, NULL,
	  "keep TCP sequence state of forwarded flows (a router)", FLAG(track_flows) },
	{ .help = "Operations:" },
	VIGIL_METRICS_OPT(offsetof(struct vigild_options, metrics)),
	{ "metrics-label", 0, 0, "LABEL",
	  "add LABEL to the per-event-type and policy series:\n"
	  "binary (off by default: few series)", .set = set_metrics_label },
	{ "metrics-binaries", 0, 0, "N",
	  "binary label values: the first N binaries seen, the\n"
	  "rest \"other\" (default 64)",
	  U64(metrics_binaries, 1, VIGIL_METRICS_BINARIES_MAX) },
	{ .help = "" },
	{ "config", 0, 0, "FILE",
	  "options from FILE, one 'name = value' a line by\n"
	  "long name (the command line wins; man vigild)", STR(config) },
	{ "duration", 'd', 0, "SECONDS", "stop after SECONDS", .set = set_duration },
	VIGIL_LOG_OPTS,
	VIGIL_HELP_OPT(usage_head),
	{ "version", 'V', 0, NULL, "version and event schema", .set = set_version },
};

static struct vigild_options *opts(void *base)
{
	return base;
}

static int set_ring_size(const struct vigil_opt *opt, void *base, const char *arg)
{
	uint64_t v;

	if (vigil_opt_u64(opt, base, arg))
		return -EINVAL;
	v = opts(base)->ring_size;
	if (v & (v - 1))
		return vlog_refuse(-EINVAL, "--ring-size %s: needs a power of two of at least 4096", arg);
	return 0;
}

/* RATE[:BURST], events a second, both 1 to 1000000; BURST defaults to RATE. */
static int set_budget(const struct vigil_opt *opt, void *base, const char *arg)
{
	static const struct vigil_opt rate = { "proc-budget (rate)", .min = 1, .max = 1000000 };
	static const struct vigil_opt burst = { "proc-budget (burst)", .min = 1, .max = 1000000 };
	struct vigil_proc_budget_cfg *b = &opts(base)->proc_budget;
	uint64_t r, n;
	char s[32], *colon;

	(void)opt;
	if (strlen(arg) >= sizeof(s))
		return vlog_usage("invalid value '%s' for --proc-budget", arg);
	snprintf(s, sizeof(s), "%s", arg);
	if ((colon = strchr(s, ':')))
		*colon = 0;
	if (vigil_opt_u64(&rate, &r, s) || (colon && vigil_opt_u64(&burst, &n, colon + 1)))
		return -EINVAL;
	b->rate = r;
	b->burst = colon ? n : r;	/* b->by is --proc-budget-by's */
	return 0;
}

static int set_budget_by(const struct vigil_opt *opt, void *base, const char *arg)
{
	(void)opt;
	if (!strcmp(arg, "cgroup"))
		opts(base)->proc_budget.by = VIGIL_BUDGET_BY_CGROUP;
	else if (!strcmp(arg, "uid"))
		opts(base)->proc_budget.by = VIGIL_BUDGET_BY_UID;
	else
		return vlog_usage("invalid value '%s' for --proc-budget-by: cgroup or uid", arg);
	return 0;
}

/* The labels an operator may add: only binary (Tetragon's filter also
 * knows namespace, workload and pod, which vigil's events do not carry). */
static int set_metrics_label(const struct vigil_opt *opt, void *base, const char *arg)
{
	(void)opt;
	if (strcmp(arg, "binary"))
		return vlog_usage("invalid value '%s' for --metrics-label: binary", arg);
	opts(base)->metrics_binary = true;
	return 0;
}

static int set_node(const struct vigil_opt *opt, void *base, const char *arg)
{
	struct vigild_options *o = opts(base);

	if (!*arg || strlen(arg) >= sizeof(o->node_name))
		return vlog_usage("invalid value '%s' for --%s", arg, opt->name);
	snprintf(o->node_name, sizeof(o->node_name), "%s", arg);
	return 0;
}

static int set_pin_dir(const struct vigil_opt *opt, void *base, const char *arg)
{
	struct vigild_options *o = opts(base);
	size_t n = strlen(arg);
	char path[108];

	(void)opt;
	if (arg[0] != '/' || n > 200)
		return vlog_usage("--pin-dir needs an absolute path under 200 bytes, not '%s'", arg);
	/* One spelling per folder: the control socket is named after it, and
	 * 'x/' must be the agent of 'x'. */
	while (n > 1 && arg[n - 1] == '/')
		n--;
	if (n == 1)
		return vlog_usage("--pin-dir /: pins need a folder of their own");
	snprintf(o->pin_dir_buf, sizeof(o->pin_dir_buf), "%.*s", (int)n, arg);
	if (vigil_control_path(o->pin_dir_buf, path, sizeof(path)))
		return vlog_usage("--pin-dir '%s': no control socket name for it "
				"(a folder spelled plainly, such as /sys/fs/bpf/vigil)", arg);
	o->pin_dir = o->pin_dir_buf;
	return 0;
}

static int set_send_path(const struct vigil_opt *opt, void *base, const char *arg)
{
	if (vigil_tx_path_parse(arg, &opts(base)->stream.path))
		return vlog_usage("invalid value '%s' for --%s", arg, opt->name);
	return 0;
}

static int set_duration(const struct vigil_opt *opt, void *base, const char *arg)
{
	static const struct vigil_opt d = { "duration", .min = 0, .max = 1e9,
					    .off = offsetof(struct vigild_options, duration) };

	(void)opt;
	if (vigil_opt_double(&d, base, arg))
		return -EINVAL;
	if (opts(base)->duration <= 0)
		return vlog_usage("invalid value '%s' for --duration", arg);
	return 0;
}

static int set_version(const struct vigil_opt *opt, void *base, const char *arg)
{
	(void)opt, (void)base, (void)arg;
	printf("vigild %s (event schema %u.%u)\n", VIGIL_VERSION, VIGIL_SCHEMA_MAJOR,
	       VIGIL_SCHEMA_MINOR);
	return VIGIL_OPTS_DONE;
}

static void set_defaults(struct vigild_options *o)
{
	struct utsname un;

	*o = (struct vigild_options){
		.export_max_bytes = 10ull << 20,
		.export_backups = 5,
		.pin_dir = VIGIL_PIN_DIR_DEFAULT,
		.spool_max_mb = 256,
		.poll_ms = 50,
		.report_interval_s = VIGIL_REPORT_INTERVAL_DEFAULT_S,
		.heartbeat_s = VIGIL_HEARTBEAT_DEFAULT_S,
		.metrics_binaries = VIGIL_METRICS_BINARIES_DEFAULT,
	};
	if (!uname(&un))
		snprintf(o->node_name, sizeof(o->node_name), "%s", un.nodename);
}

/* The outputs: one for stdout at most, and the terminal view by default. */
static int check_outputs(struct vigild_options *o)
{
	if (!o->json && !o->export_file && !o->nsend)
		o->compact = true;
	if (o->json && o->compact)
		return vlog_usage("--json and --compact both want stdout: choose one");
	if (o->json && o->export_file)
		return vlog_usage("--json writes JSON to stdout, --export-file to a file: choose one");
	if (o->export_max_age && !o->export_file)
		return vlog_usage("--export-max-age applies to --export-file, which is not given");
	/* PATH rotates every half age: one rotated file would be overwritten
	 * before its lines were the age old. */
	if (o->export_max_age && o->export_backups < 2)
		return vlog_usage("--export-max-age needs --export-file-max-backups 2 or more "
				"(PATH rotates every half age), not %llu",
				(unsigned long long)o->export_backups);
	return 0;
}

static int check_tls(const struct vigild_options *o)
{
	const struct vigil_tls_opts *t = &o->stream.tls;
	bool tls = false;

	for (unsigned i = 0; i < o->nsend; i++)
		tls |= vigil_tls_url(o->send[i]);
	if (!tls && (t->cert || t->key || t->ca || t->server_name))
		return vlog_usage("--tls-cert, --tls-key, --tls-ca and --tls-server-name "
				"apply to --send tls://HOST:PORT, which is not given");
	/* Under TLS the pages go out with send() through kernel TLS, or
	 * SSL_write: no zero-copy path applies (docs/stream.md). */
	if (tls && (o->stream.path == VIGIL_TX_URING_ZC || o->stream.path == VIGIL_TX_MSG_ZC))
		return vlog_usage("--send-path %s does not apply to tls://: it sends "
				"through kernel TLS or SSL_write (use auto or send)",
				o->stream.path == VIGIL_TX_URING_ZC ? "uring" : "zerocopy");
	return 0;
}

/* The streams: each URL well formed and given once, each --send-path and
 * --spool-dir one that can work for them. A collector's name is resolved
 * later (vigild.c check): a name that does not resolve is not a bad
 * command line. */
static int check_streams(const struct vigild_options *o)
{
	struct stat st;

	for (unsigned i = 0; i < o->nsend; i++) {
		if (vigil_stream_url_check(o->send[i]))
			return -VIGIL_EUSAGE;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(o->send[i], o->send[j]))
				return vlog_usage("--send %s is given twice: one stream per collector",
						  o->send[i]);
		if (!strncmp(o->send[i], "udp://", 6) &&
		    (o->stream.path == VIGIL_TX_URING_ZC || o->stream.path == VIGIL_TX_MSG_ZC))
			return vlog_usage("--send-path %s does not apply to udp://: datagrams go "
					  "out with sendmsg (use auto or send)",
					  o->stream.path == VIGIL_TX_URING_ZC ? "uring" : "zerocopy");
	}
	if (o->stream.spool_dir && !o->nsend)
		return vlog_usage("--spool-dir applies to --send, which is not given");
	if (o->stream.spool_dir && !stat(o->stream.spool_dir, &st) && !S_ISDIR(st.st_mode))
		return vlog_usage("--spool-dir %s is not a folder: it holds one spool file per "
				  "--send", o->stream.spool_dir);
	return 0;
}

/* Values other parts take in their own units. */
static void convert(struct vigild_options *o)
{
	o->net.report_interval_ns = o->report_interval_s * 1000000000ull;
	o->net.max_sockets = o->max_sockets;
	o->stream.spool_max = o->spool_max_mb * (1 << 20);
	if (!o->wakeup_bytes)
		o->wakeup_bytes = (o->ring_size ? o->ring_size : 16u << 20) / 8;
}

int vigild_options_parse(int argc, char **argv, struct vigild_options *o)
{
	int err;

	set_defaults(o);
	err = vigil_opts_parse(options, VIGIL_OPTS_N(options), argc, argv, o, "vigild");
	if (err)
		return err;
	if (o->proc_budget.by != VIGIL_BUDGET_BY_CGROUP && !o->proc_budget.rate)
		return vlog_usage("--proc-budget-by says what --proc-budget counts by, which is not given");
	if (o->wakeup_bytes > (o->ring_size ? o->ring_size : 16u << 20))
		return vlog_usage("--wakeup-bytes %llu is larger than the ring (%llu bytes): "
				  "the agent would never be woken early",
				  (unsigned long long)o->wakeup_bytes,
				  (unsigned long long)(o->ring_size ? o->ring_size : 16u << 20));
	if ((err = check_outputs(o)) || (err = check_tls(o)) || (err = check_streams(o)))
		return err;
	if (o->metrics_binary && !o->metrics)
		return vlog_usage("--metrics-label adds a label to --metrics, which is not given");
	convert(o);
	return 0;
}
