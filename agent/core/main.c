// SPDX-License-Identifier: GPL-2.0
/*
 * vigild: loads and pins vigil's BPF programs, then moves events from the
 * ring to its sinks until stopped. Everything that can be refused cheaply
 * (options, output files, policy files, collector names, namespaces) is
 * checked before anything is loaded, and a start that fails later takes
 * back what it made (vigil_bpf_roll_back): a bad start changes nothing on
 * the node, and leaves an earlier agent's pins as they were.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include "kernel_features.h"
#include "control_socket.h"
#include "control.h"
#include "export_file.h"
#include "opts.h"
#include "enforce_tc.h"
#include "loader.h"
#include "log.h"
#include "loss.h"
#include "net.h"
#include "pins.h"
#include "pump.h"
#include "sink_local.h"
#include "sink_stream.h"
#include "stream.h"
#include "version.h"

struct options {
	bool json, compact, unpin_on_exit, procfs;
	const char *export_file;
	uint64_t export_max_bytes;
	unsigned export_backups;
	uint64_t export_max_age;	/* seconds; 0: no age limit */
	struct vigil_proc_budget_cfg proc_budget;	/* rate 0: none */
	const char *pin_dir;
	char pin_dir_buf[256];	/* --pin-dir without trailing slashes */
	uint64_t ring_size;
	uint64_t wakeup_bytes;
	int poll_ms;
	char node_name[256];
	double duration;	/* seconds; 0: until stopped */
	char *policy[VIGIL_POLICY_FILES_MAX];	/* --policy files */
	unsigned npolicy;
	const char *enforce_on[16];	/* --enforce-on NETNS/IFNAME[:xdp] */
	unsigned nenforce;
	bool track_flows;
	struct vigil_net_opts net;
	const char *send[VIGIL_MAX_SINKS - 1];	/* --send URLs */
	int nsend;
	struct vigil_stream_opts stream;	/* --send-path, --spool-*: for each --send */
	struct vigil_format_opts format;	/* --export-format, --enable-process-* */
};

static volatile sig_atomic_t stop;
static volatile sig_atomic_t hup;	/* re-read the policy files */
static volatile sig_atomic_t hups;	/* SIGHUPs so far: tls:// re-reads its files */
static struct vigil_control control = { .fd = -1 };

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

enum option_code {
	O_MAXSIZE = 256, O_BACKUPS, O_NODE, O_PIN, O_RING, O_WAKE, O_POLL, O_NOPROC,
	O_UNPIN, O_POLICY, O_REPORT_INTERVAL, O_REPORT_ONLY, O_NO_LISTEN, O_NO_LOOPBACK,
	O_MAX_SOCKETS, O_NO_IO_HOOKS, O_SEND, O_SENDPATH, O_SPOOL, O_SPOOLMAX,
	O_TLS_CERT, O_TLS_KEY, O_TLS_CA, O_TLS_NAME, O_ENFORCE_ON, O_TRACK_FLOWS,
	O_MAXAGE, O_PROC_BUDGET, O_PROC_BUDGET_BY, O_FORMAT,
	O_FORMAT_LAST = O_FORMAT + 2,
};

static const char usage_head[] =
	"Usage: vigild [OPTION]...\n"
	"Watch processes from BPF and write their events out.\n"
	"With no output option, events are shown one line each (--compact).\n";

static const struct vigil_opt options[] = {
	{ .help = "Output:" },
	{ "json", 'j', 'j', NULL, "JSON lines (Tetragon's field names) on stdout" },
	{ "compact", 'c', 'c', NULL, "one line per event on stdout" },
	{ "export-file", 'o', 'o', "PATH", "JSON lines appended to PATH, rotated by size" },
	{ "export-file-max-size-mb", 0, O_MAXSIZE, "N",
	  "rotate PATH past N MiB (default 10; 0 never)" },
	{ "export-file-max-backups", 0, O_BACKUPS, "N", "keep N rotated files (default 5)" },
	{ "export-max-age", 0, O_MAXAGE, "SECONDS",
	  "retention by age: no line kept past 1.5 x SECONDS,\n"
	  "none removed by age before SECONDS (default 0)" },
	VIGIL_FORMAT_OPTS(O_FORMAT),
	{ "node-name", 0, O_NODE, "NAME", "node name in events and exec ids (default: hostname)" },
	{ "send", 0, O_SEND, "URL",
	  "stream the ring to a collector, tcp://HOST:PORT,\n"
	  "tls://HOST:PORT (with --tls-*) or udp://HOST:PORT\n"
	  "(repeatable; alone, it turns the terminal view off)" },
	{ "send-path", 0, O_SENDPATH, "PATH", "auto (default), uring, zerocopy or send" },
	{ "spool-dir", 0, O_SPOOL, "DIR",
	  "a collector away past half the ring: its backlog\n"
	  "waits in DIR (default: in the ring only)" },
	{ "spool-max-mb", 0, O_SPOOLMAX, "N", "the spool's bound, per --send (default 256)" },
	{ "tls-cert", 0, O_TLS_CERT, "FILE",
	  "tls:// (mutual TLS 1.3): this node's certificate\n"
	  "(PEM; its first DNS name is the node's identity)" },
	{ "tls-key", 0, O_TLS_KEY, "FILE", "its private key (PEM)" },
	{ "tls-ca", 0, O_TLS_CA, "FILE", "the CA that signs the collector's certificate" },
	{ "tls-server-name", 0, O_TLS_NAME, "NAME",
	  "the name the collector's certificate must carry\n"
	  "(default: the URL's host; an IP as an IP SAN)" },
	{ .help = "Kernel side:" },
	{ "pin-dir", 0, O_PIN, "DIR",
	  "where maps and links are pinned (default " VIGIL_PIN_DIR_DEFAULT ")" },
	{ "ring-size", 0, O_RING, "BYTES",
	  "ring buffer size, a power of two (default 16 MiB;\n"
	  "a ring already pinned keeps its size)" },
	{ "wakeup-bytes", 0, O_WAKE, "N",
	  "bytes waiting in the ring that wake the agent early\n"
	  "(default: an eighth of the ring)" },
	{ "poll-ms", 0, O_POLL, "N", "how often a quiet ring is checked (default 50)" },
	{ "no-procfs", 0, O_NOPROC, NULL, "do not report processes running at start" },
	{ "proc-budget", 0, O_PROC_BUDGET, "RATE[:BURST]",
	  "at most RATE process events a second per cgroup\n"
	  "(bursts of BURST, default RATE); the rest are\n"
	  "counted and reported per cgroup (default: none)" },
	{ "proc-budget-by", 0, O_PROC_BUDGET_BY, "cgroup|uid",
	  "the budget is per cgroup (default) or per uid" },
	{ "unpin-on-exit", 0, O_UNPIN, NULL,
	  "remove the pins when stopping (default: keep them,\n"
	  "so events wait in the ring for the next start)" },
	{ .help = "Network events and reports:" },
	{ "report-interval", 0, O_REPORT_INTERVAL, "SECONDS",
	  "reports built in BPF every SECONDS (default 10; 0 none)" },
	{ "report-only", 0, O_REPORT_ONLY, NULL, "reports only: no per-connection events" },
	{ "no-listen-events", 0, O_NO_LISTEN, NULL, "no events about listening sockets" },
	{ "no-loopback-events", 0, O_NO_LOOPBACK, NULL,
	  "no events for connections within loopback" },
	{ "max-sockets", 0, O_MAX_SOCKETS, "N",
	  "TCP sockets the socket table holds (default 131072,\n"
	  "about 80 bytes each; a table already pinned keeps\n"
	  "its size)" },
	{ "no-io-hooks", 0, O_NO_IO_HOOKS, NULL,
	  "no hook at every send and receive: an accepted\n"
	  "socket's owner is the process that accepted it" },
	{ .help = "Enforcement:" },
	{ "policy", 0, O_POLICY, "FILE",
	  "enforce the rules in FILE (repeatable; docs/policy.md);\n"
	  "SIGHUP and 'vigil policy load' re-read them" },
	{ "enforce-on", 0, O_ENFORCE_ON, "NETNS/IFNAME[:xdp]",
	  "network rules at TC (ingress and egress; with :xdp,\n"
	  "XDP ingress) on IFNAME in NETNS (/run/netns name or\n"
	  "path; the root namespace only as /proc/1/ns/net)" },
	{ "track-flows", 0, O_TRACK_FLOWS, NULL,
	  "keep TCP sequence state of forwarded flows (a router)" },
	{ .help = "" },
	{ "duration", 'd', 'd', "SECONDS", "stop after SECONDS" },
	{ "verbose", 'v', 'v', NULL, "libbpf and agent debug output on stderr" },
	{ "help", 'h', 'h', NULL, "this text" },
	{ "version", 'V', 'V', NULL, "version and event schema" },
};

/* What the running agent adds to `vigil status` (agent/control): its
 * streams, the records it took by kind, what the kernel lacks. */
static struct agent_view {
	struct vigil_sink_stream *s;
	int n;
	const struct vigil_formatter *fmt;	/* the local sink's: every record */
} agent_view;

static void describe_agent(void *ctx, struct vigil_buf *out)
{
	struct agent_view *v = ctx;

	for (int i = 0; i < v->n; i++)
		vigil_sink_stream_describe(&v->s[i], out);
	vbuf_printf(out, "records by kind: ");
	vigil_event_counts_text(v->fmt, out);
	vbuf_putc(out, '\n');
	vigil_kernel_describe(out);
}

static int parse_u64(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		return vlog_err(-EINVAL, "invalid value '%s' for %s", s, opt);
	*out = v;
	return 0;
}

/* RATE[:BURST], events a second, both 1 to 1000000; BURST defaults to RATE. */
static int parse_budget(const char *s, struct vigil_proc_budget_cfg *out)
{
	char rate[32], *colon;
	uint64_t r, b;

	if (strlen(s) >= sizeof(rate))
		return vlog_err(-EINVAL, "invalid value '%s' for --proc-budget", s);
	snprintf(rate, sizeof(rate), "%s", s);
	colon = strchr(rate, ':');
	if (colon)
		*colon = 0;
	if (parse_u64("--proc-budget (rate)", rate, 1000000, &r) ||
	    (colon && parse_u64("--proc-budget (burst)", colon + 1, 1000000, &b)))
		return -EINVAL;
	if (!colon)
		b = r;
	if (!r || !b)
		return vlog_err(-EINVAL, "invalid value '%s' for --proc-budget: rate and burst start at 1",
				s);
	out->rate = r;
	out->burst = b;	/* out->by is --proc-budget-by's */
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	struct vigil_getopt g;
	struct utsname un;
	uint64_t v;
	char *end;
	int c;

	*o = (struct options){
		.export_max_bytes = 10ull << 20,
		.export_backups = 5,
		.pin_dir = VIGIL_PIN_DIR_DEFAULT,
		.stream.spool_max = 256ull << 20,
		.poll_ms = 50,
		.procfs = true,
		.net.report_interval_ns = VIGIL_REPORT_INTERVAL_DEFAULT_S * 1000000000ull,
	};
	if (!uname(&un))
		snprintf(o->node_name, sizeof(o->node_name), "%s", un.nodename);
	if (vigil_getopt_make(&g, options, VIGIL_OPTS_N(options), ""))
		return vlog_err(-E2BIG, "too many options for one table");
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'c': o->compact = true; break;
		case 'o': o->export_file = optarg; break;
		case O_MAXSIZE:
			if (parse_u64("--export-file-max-size-mb", optarg, 1 << 20, &v))
				return -EINVAL;
			o->export_max_bytes = v << 20;
			break;
		case O_BACKUPS:
			if (parse_u64("--export-file-max-backups", optarg, 1000, &v))
				return -EINVAL;
			o->export_backups = v;
			break;
		case O_MAXAGE:
			if (parse_u64("--export-max-age", optarg, 10ull * 365 * 86400, &o->export_max_age))
				return -EINVAL;
			break;
		case O_PROC_BUDGET:
			if (parse_budget(optarg, &o->proc_budget))
				return -EINVAL;
			break;
		case O_PROC_BUDGET_BY:
			if (!strcmp(optarg, "cgroup"))
				o->proc_budget.by = VIGIL_BUDGET_BY_CGROUP;
			else if (!strcmp(optarg, "uid"))
				o->proc_budget.by = VIGIL_BUDGET_BY_UID;
			else
				return vlog_err(-EINVAL, "invalid value '%s' for --proc-budget-by: "
						"cgroup or uid", optarg);
			break;
		case O_FORMAT ... O_FORMAT_LAST:
			if (vigil_format_option(c, O_FORMAT, optarg, &o->format))
				return -EINVAL;
			break;
		case O_NODE:
			if (!*optarg || strlen(optarg) >= sizeof(o->node_name))
				return vlog_err(-EINVAL, "invalid value '%s' for --node-name", optarg);
			snprintf(o->node_name, sizeof(o->node_name), "%s", optarg);
			break;
		case O_PIN: {
			size_t n = strlen(optarg);
			char path[108];

			if (optarg[0] != '/' || n > 200)
				return vlog_err(-EINVAL, "--pin-dir needs an absolute path under 200 bytes, not '%s'", optarg);
			/* One spelling per folder: the control socket is named
			 * after it, and 'x/' must be the agent of 'x'. */
			while (n > 1 && optarg[n - 1] == '/')
				n--;
			if (n == 1)
				return vlog_err(-EINVAL, "--pin-dir /: pins need a folder of their own");
			snprintf(o->pin_dir_buf, sizeof(o->pin_dir_buf), "%.*s", (int)n, optarg);
			if (vigil_control_path(o->pin_dir_buf, path, sizeof(path)))
				return vlog_err(-EINVAL, "--pin-dir '%s': no control socket name for it "
						"(a folder spelled plainly, such as /sys/fs/bpf/vigil)", optarg);
			o->pin_dir = o->pin_dir_buf;
			break;
		}
		case O_RING:
			if (parse_u64("--ring-size", optarg, 1ull << 31, &v))
				return -EINVAL;
			if (v < 4096 || (v & (v - 1)))
				return vlog_err(-EINVAL, "--ring-size %s: needs a power of two of at least 4096", optarg);
			o->ring_size = v;
			break;
		case O_WAKE:
			if (parse_u64("--wakeup-bytes", optarg, 1ull << 31, &o->wakeup_bytes))
				return -EINVAL;
			break;
		case O_POLL:
			if (parse_u64("--poll-ms", optarg, 60000, &v))
				return -EINVAL;
			o->poll_ms = v;
			break;
		case O_NOPROC: o->procfs = false; break;
		case O_UNPIN: o->unpin_on_exit = true; break;
		case O_ENFORCE_ON:
			if (o->nenforce == sizeof(o->enforce_on) / sizeof(o->enforce_on[0]))
				return vlog_err(-E2BIG, "at most 16 --enforce-on");
			o->enforce_on[o->nenforce++] = optarg;
			break;
		case O_TRACK_FLOWS: o->track_flows = true; break;
		case O_POLICY:
			if (o->npolicy == VIGIL_POLICY_FILES_MAX)
				return vlog_err(-E2BIG, "at most %d --policy", VIGIL_POLICY_FILES_MAX);
			o->policy[o->npolicy++] = optarg;
			break;
		case O_REPORT_INTERVAL:
			if (parse_u64("--report-interval", optarg, 86400, &v))
				return -EINVAL;
			o->net.report_interval_ns = v * 1000000000ull;
			break;
		case O_REPORT_ONLY: o->net.report_only = true; break;
		case O_NO_LISTEN: o->net.no_listen = true; break;
		case O_NO_LOOPBACK: o->net.no_loopback = true; break;
		case O_NO_IO_HOOKS: o->net.no_io_hooks = true; break;
		case O_MAX_SOCKETS:
			if (parse_u64("--max-sockets", optarg, 1u << 24, &v))
				return -EINVAL;
			if (v < 1024)
				return vlog_err(-EINVAL, "--max-sockets %s: at least 1024", optarg);
			o->net.max_sockets = v;
			break;
		case O_SEND:
			if (o->nsend == VIGIL_MAX_SINKS - 1)
				return vlog_err(-E2BIG, "at most %d --send", VIGIL_MAX_SINKS - 1);
			o->send[o->nsend++] = optarg;
			break;
		case O_SENDPATH:
			if (vigil_tx_path_parse(optarg, &o->stream.path))
				return vlog_err(-EINVAL, "invalid value '%s' for --send-path", optarg);
			break;
		case O_SPOOL: o->stream.spool_dir = optarg; break;
		case O_SPOOLMAX:
			o->stream.spool_max = strtod(optarg, &end) * (1 << 20);
			if (*end || end == optarg || o->stream.spool_max < 65536 ||
			    o->stream.spool_max > (1ull << 40))
				return vlog_err(-EINVAL, "--spool-max-mb wants 0.0625 to 1048576");
			break;
		case O_TLS_CERT: o->stream.tls.cert = optarg; break;
		case O_TLS_KEY: o->stream.tls.key = optarg; break;
		case O_TLS_CA: o->stream.tls.ca = optarg; break;
		case O_TLS_NAME: o->stream.tls.server_name = optarg; break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || o->duration <= 0)
				return vlog_err(-EINVAL, "invalid value '%s' for --duration", optarg);
			break;
		case 'v': vlog_verbose = 1; break;
		case 'h': vigil_opts_usage(stdout, usage_head, options, VIGIL_OPTS_N(options)); exit(0);
		case 'V':
			printf("vigild %s (event schema %u.%u)\n", VIGIL_VERSION, VIGIL_SCHEMA_MAJOR,
			       VIGIL_SCHEMA_MINOR);
			exit(0);
		default:
			fputs("Try 'vigild --help'.\n", stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		return vlog_err(-EINVAL, "unexpected argument '%s' (try 'vigild --help')", argv[optind]);
	if (!o->json && !o->export_file && !o->nsend)
		o->compact = true;
	if (o->json && o->compact)
		return vlog_err(-EINVAL, "--json and --compact both want stdout: choose one");
	if (o->json && o->export_file)
		return vlog_err(-EINVAL, "--json writes JSON to stdout, --export-file to a file: choose one");
	if (o->proc_budget.by != VIGIL_BUDGET_BY_CGROUP && !o->proc_budget.rate)
		return vlog_err(-EINVAL, "--proc-budget-by says what --proc-budget counts by, which is not given");
	{
		const struct vigil_tls_opts *t = &o->stream.tls;
		bool tls = false;

		for (int i = 0; i < o->nsend; i++)
			tls |= vigil_tls_url(o->send[i]);
		if (!tls && (t->cert || t->key || t->ca || t->server_name))
			return vlog_err(-EINVAL, "--tls-cert, --tls-key, --tls-ca and --tls-server-name "
					"apply to --send tls://HOST:PORT, which is not given");
		/* Under TLS the pages go out with send() through kernel TLS, or
		 * SSL_write: no zero-copy path applies (docs/stream.md). */
		if (tls && (o->stream.path == VIGIL_TX_URING_ZC || o->stream.path == VIGIL_TX_MSG_ZC))
			return vlog_err(-EINVAL, "--send-path %s does not apply to tls://: it sends "
					"through kernel TLS or SSL_write (use auto or send)",
					o->stream.path == VIGIL_TX_URING_ZC ? "uring" : "zerocopy");
	}
	if (o->export_max_age && !o->export_file)
		return vlog_err(-EINVAL, "--export-max-age applies to --export-file, which is not given");
	/* PATH rotates every half age: one rotated file would be overwritten
	 * before its lines were the age old. */
	if (o->export_max_age && o->export_backups < 2)
		return vlog_err(-EINVAL, "--export-max-age needs --export-file-max-backups 2 or more "
				"(PATH rotates every half age), not %u", o->export_backups);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !vlog_verbose)
		return 0;
	if (level == LIBBPF_INFO && !vlog_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(struct vigil_pump *pump, struct vigil_bpf *bpf, const struct options *o,
		struct vigil_loss_monitor *loss, struct vigil_export_file *export)
{
	double start = now_s(), last_loss = 0, last_control = 0;
	bool flowing = false;

	while (!stop) {
		double t;

		flowing = vigil_pump_once(pump) > 0;
		t = now_s();
		if (t - last_loss >= 1.0) {
			last_loss = t;
			if (vigil_loss_check(loss, bpf))
				flowing = true;
			vigil_export_expire(export);	/* between batches */
		}
		if (t - last_control >= 0.05) {
			last_control = t;
			vigil_control_tick(&control);
		}
		if (o->duration && t - start >= o->duration)
			break;
		vigil_pump_wait(pump, flowing);
	}
	vigil_pump_flush(pump);
	vigil_loss_final(loss, bpf);
	vigil_pump_flush(pump);
}

int main(int argc, char **argv)
{
	struct vigil_export_file export = { .fd = -1 };
	struct vigil_loss_monitor loss = {};
	struct vigil_sink_local local;
	struct vigil_buf kinds = {};
	struct vigil_sink_stream streams[VIGIL_MAX_SINKS - 1];
	int nstreams = 0;
	struct vigil_bpf bpf = {};
	struct vigil_enforce_tc *enforce = NULL;
	bool started = false;	/* attached all it was told to */
	struct vigil_net net = {};
	struct vigil_pump pump = { .epfd = -1 };
	struct options o;
	int err;

	vlog_prog = "vigild";
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (parse_options(argc, argv, &o))
		return 2;
	if (o.export_file) {
		err = vigil_export_open(&export, o.export_file, o.export_max_bytes, o.export_backups);
		if (!err)
			vigil_export_max_age(&export, o.export_max_age);
		if (err)
			return vlog_err(err, "cannot open export file %s", o.export_file), 1;
	} else if (o.json) {
		vigil_export_fd(&export, STDOUT_FILENO);
	}
	if (!o.wakeup_bytes)
		o.wakeup_bytes = (o.ring_size ? o.ring_size : 16u << 20) / 8;

	/* A bad policy, a collector's name that does not resolve, a namespace
	 * that is not there: each stops the start before anything is loaded. */
	if (o.npolicy && vigil_control_check(o.policy, o.npolicy))
		return 1;
	o.stream.tls.node_name = o.node_name;
	o.stream.hups = &hups;
	for (int i = 0; i < o.nsend; i++) {
		struct sockaddr_storage addr;
		unsigned addrlen;
		int socktype;

		if (vigil_stream_url(o.send[i], &socktype, &addr, &addrlen) ||
		    (vigil_tls_url(o.send[i]) && vigil_tls_init(NULL, &o.stream.tls, o.send[i])))
			return vlog_err(-EINVAL, "--send %s: refused, nothing started", o.send[i]), 1;
	}
	for (unsigned i = 0; i < o.nenforce; i++)
		if (vigil_enforce_spec_check(o.enforce_on[i]))
			return 1;
	libbpf_set_print(libbpf_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);

	struct vigil_loader_opts lo = {
		.pin_dir = o.pin_dir,
		.ring_size = o.ring_size,
		.wakeup_bytes = o.wakeup_bytes,
		.proc_budget = o.proc_budget,
		.verbose = vlog_verbose,
	};
	err = vigil_bpf_load(&bpf, &lo);
	if (err)
		goto out;
	err = vigil_control_peers(&control, o.send, o.nsend);
	if (!err)
		err = vigil_control_start(&control, o.pin_dir, bpf.ring_size, o.policy, o.npolicy, &hup);
	if (err)
		goto out;
	err = vigil_net_load(&net, &bpf, &o.net);
	if (err || (err = vigil_net_scan_sockets(&net)))
		goto out;
	if (o.nenforce) {
		struct vigil_enforce_tc_opts eo = {
			.pin_dir = o.pin_dir, .ring_size = bpf.ring_size,
			.wakeup_bytes = o.wakeup_bytes, .track_flows = o.track_flows,
		};

		if ((err = vigil_enforce_tc_open(&enforce, &eo)))
			goto out;
		for (unsigned i = 0; i < o.nenforce; i++)
			if ((err = vigil_enforce_tc_attach_spec(enforce, o.enforce_on[i])))
				goto out;
	}
	err = vigil_pump_init(&pump, bpf.ring_fd, o.poll_ms);
	if (err)
		goto out;
	err = vigil_sink_local_init(&local, o.node_name,
				    (o.json || o.export_file) ? &export : NULL,
				    o.compact ? STDOUT_FILENO : -1, bpf.counters_fd);
	if (err)
		goto out;
	local.fmt.opts = o.format;
	vigil_pump_add(&pump, &local.sink);
	for (; nstreams < o.nsend; nstreams++) {
		struct vigil_stream_opts so = o.stream;

		so.url = o.send[nstreams];
		so.node_name = o.node_name;
		so.realtime_offset_ns = local.fmt.realtime_offset_ns;
		err = vigil_sink_stream_init(&streams[nstreams], &so, bpf.ring_fd, pump.epfd);
		if (err)
			goto out_local;
		vigil_pump_add(&pump, &streams[nstreams].sink);
	}
	agent_view = (struct agent_view){ streams, nstreams, &local.fmt };
	control.describe_streams = describe_agent;
	control.streams_ctx = &agent_view;
	{
		/* Interfaces an earlier agent enforced on and this one does not
		 * name: released once this one is sure to run. */
		struct vigil_enforce_tc *keep[] = { enforce, control.policy.tc };

		vigil_enforce_links_prune(o.pin_dir, keep, 2);
		/* Likewise the programs an earlier agent attached that these
		 * options do not want. */
		if ((err = vigil_bpf_detach_unwanted(&bpf)) || (err = vigil_net_detach_unwanted(&net, o.pin_dir)))
			goto out_local;
		started = true;
	}
	vlog_info("%s, pinned at %s; ring %llu bytes", bpf.resumed ? "resumed" : "attached",
		  o.pin_dir, (unsigned long long)pump.ring.size);
	if (o.procfs && (err = vigil_bpf_scan_procfs(&bpf)))
		goto out_local;
	run(&pump, &bpf, &o, &loss, &export);
	/* What a user needs to trust the output: every record accounted for. */
	vlog_info("stopped: %llu records, %llu gaps and %llu duplicates in sequence; "
		  "BPF counted %llu ring-full losses, %llu recursion misses",
		  (unsigned long long)local.seqs.seen,
		  (unsigned long long)(local.seqs.gaps + vigil_seq_window_open_gaps(&local.seqs)),
		  (unsigned long long)local.seqs.dups, (unsigned long long)loss.ring_full,
		  (unsigned long long)loss.recursion_misses);
	vigil_event_counts_text(&local.fmt, &kinds);
	vlog_info("records by kind: %.*s", (int)kinds.len, kinds.p);
	vbuf_free(&kinds);
	if (local.bad_records)
		vlog_info("skipped %llu malformed ring records", (unsigned long long)local.bad_records);
	if (local.dropped_records || local.unwritten_bytes) {
		vlog_info("local output lost events: dropped %llu records (%llu ring bytes) it could "
			  "not write; %llu ring bytes unwritten at stop (%s)",
			  (unsigned long long)local.dropped_records,
			  (unsigned long long)local.dropped_bytes,
			  (unsigned long long)local.unwritten_bytes,
			  o.unpin_on_exit ? "lost: --unpin-on-exit" : "left in the pinned ring");
		err = -EIO;
	}
	vlog_debug("malformed records %llu, polls %llu, wakeups %llu",
		   (unsigned long long)local.bad_records, (unsigned long long)pump.polls,
		   (unsigned long long)pump.wakeups);
out_local:
	while (nstreams--)
		vigil_sink_stream_free(&streams[nstreams]);
	vigil_sink_local_free(&local);
out:
	if (!started) {
		/* A refused start leaves no enforcement it made behind. */
		vigil_enforce_tc_rollback(enforce, 0);
		vigil_enforce_tc_rollback(control.policy.tc, 0);
	}
	vigil_pump_close(&pump);
	vigil_enforce_tc_close(enforce);
	vigil_net_close(&net);
	vigil_control_close(&control);
	if (started)
		vigil_bpf_close(&bpf, o.unpin_on_exit);
	else
		vigil_bpf_roll_back(&bpf);	/* a bad start changes nothing */
	vigil_export_close(&export);
	return err ? 1 : 0;
}
