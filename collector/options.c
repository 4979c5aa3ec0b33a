// SPDX-License-Identifier: GPL-2.0
/* vigil-collector's command line (options.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http_health.h"
#include "listen.h"
#include "log.h"
#include "opts.h"
#include "options.h"
#include "stream.h"
#include "version.h"

#define AT(field) .off = offsetof(struct options, field)
#define STR(field) .set = vigil_opt_str, AT(field)
#define PUB(field) .set = set_pub, AT(field)
#define U64(field, lo, hi) .set = vigil_opt_u64, AT(field), .min = (lo), .max = (hi)
#define SECS(field, lo, hi) .set = vigil_opt_double, AT(field), .min = (lo), .max = (hi)

static vigil_opt_set_fn set_pub, set_pub_wait, set_pub_layout, set_duration, set_version;

static const char usage_head[] =
	"Usage: vigil-collector --listen tls://HOST:PORT --tls-cert FILE --tls-key FILE\n"
	"                       --tls-ca FILE [OPTION]...\n"
	"Receive event streams from vigild agents (vigild --send) and write them as JSON lines.\n";

static const struct vigil_opt options[] = {
	{ .help = "" },
	{ "listen", 'l', 0, "URL",
	  "where agents connect: tls://HOST:PORT (mutual TLS),\n"
	  "tcp://HOST:PORT or udp://HOST:PORT (clear text: for\n"
	  "labs and links already encrypted) (repeatable;\n"
	  "port 0 picks one, printed on stderr)",
	  .set = vigil_opt_list, AT(listen), .count_off = offsetof(struct options, nlisten), .max = MAX_LISTEN },
	{ "tls-cert", 0, 0, "FILE", "the collector's certificate chain (PEM), for tls://",
	  STR(tls_cert) },
	{ "tls-key", 0, 0, "FILE", "its private key (PEM)",
	  STR(tls_key) },
	{ "tls-ca", 0, 0, "FILE",
	  "the CA that signs agents' certificates (PEM); an\n"
	  "agent's node name is its certificate's first DNS\n"
	  "subject alternative name",
	  STR(tls_ca) },
	{ "export-file", 'o', 0, "PATH",
	  "JSON lines appended to PATH, rotated by size\n"
	  "(default: stdout); PATH.state records what was\n"
	  "written, so a restart neither loses nor doubles",
	  STR(export_file) },
	{ "export-file-max-size-mb", 0, 0, "N",
	  "rotate PATH past N MiB (default 10; 0 never)",
	  U64(max_mb, 0, 1 << 20) },
	{ "export-file-max-backups", 0, 0, "N", "keep N rotated files (default 5)",
	  U64(backups, 0, 1000) },
	{ "fsync", 0, 0, NULL,
	  "write each batch and the state file through to\n"
	  "disk before acknowledging (a power cut then\n"
	  "loses nothing acknowledged)",
	  .set = vigil_opt_flag, AT(fsync) },
	VIGIL_FORMAT_OPTS(0, offsetof(struct options, format)),
	{ "publish", 0, 0, "URL",
	  "also publish every line to NATS JetStream at URL\n"
	  "(nats://HOST:PORT, comma-separated for a cluster);\n"
	  "agents are acknowledged once JetStream has it. With\n"
	  "no --export-file, nothing is written to stdout",
	  STR(pub.urls) },
	{ "publish-subject", 0, 0, "PREFIX", "subjects PREFIX.NODE.KIND (default vigil)",
	  PUB(pub.prefix) },
	{ "publish-stream", 0, 0, "NAME",
	  "the stream, created for PREFIX.> if missing\n"
	  "(default VIGIL)",
	  PUB(pub.stream) },
	{ "publish-creds", 0, 0, "FILE", "NATS credentials (user JWT and NKey seed)",
	  PUB(pub.creds) },
	{ "publish-tls-ca", 0, 0, "FILE",
	  "TLS to NATS, trusting servers signed by this CA (PEM);\n"
	  "a tls:// URL turns TLS on with the system's CAs",
	  PUB(pub.tls_ca) },
	{ "publish-tls-cert", 0, 0, "FILE",
	  "client certificate chain (PEM), with --publish-tls-key",
	  PUB(pub.tls_cert) },
	{ "publish-tls-key", 0, 0, "FILE", "its private key (PEM)",
	  PUB(pub.tls_key) },
	{ "publish-tls-name", 0, 0, "NAME",
	  "the name the server's certificate must carry\n"
	  "(default: the URL's host)",
	  PUB(pub.tls_name) },
	{ "publish-wait", 0, 0, "S",
	  "seconds an attempt waits for JetStream (default 5)",
	  .set = set_pub_wait, AT(pub.wait), .min = 0.1, .max = 3600 },
	{ "publish-layout", 0, 0, "LAYOUT",
	  "event: one message per event, on PREFIX.NODE.KIND\n"
	  "(default); batch: consecutive events of one agent\n"
	  "ring per message, on PREFIX.batch.NODE.BOOT.RING,\n"
	  "resumable across collectors (docs/stream.md)",
	  .set = set_pub_layout, AT(pub.batch) },
	{ "publish-min-window", 0, 0, "S",
	  "the stream's duplicate window should cover an\n"
	  "agent's longest reconnect plus spool replay: warned\n"
	  "about when shorter; set on a stream created\n"
	  "(default 600)",
	  .set = set_pub_wait, AT(pub.min_window), .min = 1, .max = 86400 * 30 },
	{ "max-agents", 0, 0, "N", "agent streams remembered (default 256)",
	  U64(max_agents, 1, 65536) },
	{ "proc-cache-mb", 0, 0, "N",
	  "memory each agent stream's process cache may hold,\n"
	  "in MiB (default 1): as many processes as fit, up to\n"
	  "the agent's own 65536",
	  U64(proc_cache_mb, 1, 1024) },
	{ "max-conns", 0, 0, "N",
	  "connections at once (default 256; each costs 256 KiB,\n"
	  "64 KiB more over TLS); when full, a new one evicts\n"
	  "the longest-idle connection of the address holding\n"
	  "the most",
	  U64(max_conns, 1, 65536) },
	{ "max-conns-per-addr", 0, 0, "N",
	  "connections of one address (IPv6: one /64) at once\n"
	  "(default 32); past it, a new one evicts that\n"
	  "address's longest-idle connection",
	  U64(max_per_addr, 1, 65536) },
	{ "max-handshakes-per-addr", 0, 0, "N",
	  "TLS handshakes one address (IPv6: one /64) may start\n"
	  "a second, with bursts of twice that (default 50;\n"
	  "0: no limit); past it, connections are closed at once",
	  U64(max_handshakes, 0, 100000) },
	{ "max-handshakes", 0, 0, "N",
	  "TLS handshakes all addresses together may start a\n"
	  "second, with bursts of twice that (default 100; 0: no\n"
	  "limit); addresses not seen completing one before get\n"
	  "at most half of the burst: the rest is for agents",
	  U64(max_handshakes_all, 0, 100000) },
	{ "hello-timeout", 0, 0, "S",
	  "seconds a new connection has to say hello, TLS\n"
	  "handshake included (default 5)",
	  SECS(hello_timeout, 0, 3600) },
	{ "frame-timeout", 0, 0, "S",
	  "seconds a started record may stay unfinished (default 10)",
	  SECS(frame_timeout, 0, 3600) },
	{ "rebind-after", 0, 0, "S",
	  "seconds an agent identity stays bound to the address\n"
	  "that proved it, once its connection ends (default 0:\n"
	  "only while it is connected)",
	  SECS(rebind_after, 0, 86400) },
	{ "peer-timeout", 0, 0, "S",
	  "seconds before a peer that stopped answering (host\n"
	  "gone, link cut) is dropped: TCP keepalive and\n"
	  "TCP_USER_TIMEOUT (default 60; 2 to 3600)",
	  SECS(peer_timeout, 2, 3600) },
	{ "forget-after", 0, 0, "DURATION",
	  "forget the recorded offset of an agent stream not\n"
	  "heard for DURATION: N[s|m|h|d] (default 7d)",
	  .set = set_duration, AT(forget_after) },
	{ "status-file", 0, 0, "PATH",
	  "what was accepted from whom, rewritten each second:\n"
	  "listeners, then each agent stream (connected from\n"
	  "where, TLS certificate or clear text, offset, counts)",
	  STR(status_file) },
	VIGIL_METRICS_OPT(offsetof(struct options, metrics)),
	{ "config", 0, 0, "FILE",
	  "options from FILE, one 'name = value' a line by\n"
	  "long name (the command line wins)", STR(config) },
	VIGIL_LOG_OPTS,
	VIGIL_HELP_OPT(usage_head),
	{ "version", 'V', 0, NULL, "version and event schema",
	  .set = set_version },
	{ .help = "SIGHUP reads --tls-cert, --tls-key and --tls-ca again; new connections use them." },
};


static struct options *opts(void *base)
{
	return base;
}

static int set_pub(const struct vigil_opt *opt, void *base, const char *arg)
{
	opts(base)->pub_opt = opt->name;
	return vigil_opt_str(opt, base, arg);
}

static int set_pub_wait(const struct vigil_opt *opt, void *base, const char *arg)
{
	opts(base)->pub_opt = opt->name;
	return vigil_opt_double(opt, base, arg);
}

static int set_pub_layout(const struct vigil_opt *opt, void *base, const char *arg)
{
	opts(base)->pub_opt = opt->name;
	if (strcmp(arg, "event") && strcmp(arg, "batch"))
		return vlog_refuse(-EINVAL, "invalid value '%s' for --%s: want event or batch", arg, opt->name);
	opts(base)->pub.batch = !strcmp(arg, "batch");
	return 0;
}

/* A duration: a number of seconds, or of minutes, hours, days with the
 * suffix m, h, d (s for seconds also taken); 1 s to 3650 days. */
static int set_duration(const struct vigil_opt *opt, void *base, const char *arg)
{
	static const struct { char unit; double secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	char *end;
	double v, mult = 1;

	errno = 0;
	v = strtod(arg, &end);
	if (!errno && end != arg && *end && !end[1]) {
		mult = 0;
		for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].unit)
				mult = units[i].secs, end++;
	}
	if (errno || end == arg || *end || !mult || !(v * mult >= 1 && v * mult <= 3650 * 86400.0))
		return vlog_usage("invalid value '%s' for --%s: want N[s|m|h|d], "
				"1 s to 3650 d", arg, opt->name);
	*(double *)((char *)base + opt->off) = v * mult;
	return 0;
}

static int set_version(const struct vigil_opt *opt, void *base, const char *arg)
{
	(void)opt, (void)base, (void)arg;
	printf("vigil-collector %s (event schema %u.%u, stream %u)\n", VIGIL_VERSION,
	       VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR, VIGIL_STREAM_VERSION);
	return VIGIL_OPTS_DONE;
}

/* tls:// wants all three files; they make no sense without it. */
static int check_tls(const struct options *o)
{
	static const char *const names[] = { "--tls-cert", "--tls-key", "--tls-ca" };
	const char *files[] = { o->tls_cert, o->tls_key, o->tls_ca };
	bool tls = false;

	for (unsigned i = 0; i < o->nlisten; i++)
		tls |= collector_listen_tls(o->listen[i]);
	for (int i = 0; i < 3; i++) {
		if (tls && !files[i])
			return vlog_usage("a tls:// --listen needs %s", names[i]);
		if (!tls && files[i])
			return vlog_usage("%s without a tls:// --listen", names[i]);
	}
	return 0;
}

int collector_options_parse(int argc, char **argv, struct options *o,
			    volatile sig_atomic_t *stop)
{
	int err;

	*o = (struct options){ .max_mb = 10, .backups = 5, .max_agents = 256, .max_conns = 256,
			       .proc_cache_mb = 1, .max_handshakes_all = 100,
			       .max_per_addr = 32, .max_handshakes = 50, .hello_timeout = 5,
			       .frame_timeout = 10, .peer_timeout = 60, .forget_after = 7 * 86400,
			       .pub = { .prefix = "vigil", .stream = "VIGIL", .wait = 5, .min_window = 600,
				       .stop = stop } };
	err = vigil_opts_parse(options, VIGIL_OPTS_N(options), argc, argv, o, "vigil-collector");
	if (err)
		return err;
	if (!o->nlisten)
		return vlog_usage("no --listen given (try 'vigil-collector --help')");
	for (unsigned i = 0; i < o->nlisten; i++)
		if (vigil_stream_url_check(o->listen[i]))
			return -VIGIL_EUSAGE;
	if ((err = check_tls(o)))
		return err;
	if (o->pub_opt && !o->pub.urls)
		return vlog_usage("--%s without --publish", o->pub_opt);
	if (!o->pub.tls_cert != !o->pub.tls_key)
		return vlog_usage("--publish-tls-cert and --publish-tls-key go together");
	return 0;
}
