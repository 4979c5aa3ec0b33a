// SPDX-License-Identifier: GPL-2.0
/*
 * vigil-collector: receives the streams of many agents (docs/stream.md),
 * checks every byte, writes JSON lines with the agent's own encoder
 * (lib/event_format.c), publishes them to NATS JetStream if asked
 * (publish.h), and acknowledges what it has written.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "collector.h"
#include "conn_tls.h"
#include "listen.h"
#include "log.h"
#include "opts.h"
#include "status.h"
#include "version.h"

#define MAX_LISTEN 8

static volatile sig_atomic_t stop, hup;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

enum option_code {
	O_MAXSIZE = 256, O_BACKUPS, O_AGENTS, O_CONNS, O_PER_ADDR, O_HELLO, O_FRAME,
	O_PEER, O_FORGET, O_REBIND, O_FSYNC, O_PUB, O_PUB_SUBJ, O_PUB_STREAM,
	O_PUB_CREDS, O_PUB_WAIT, O_PUB_CA, O_PUB_CERT, O_PUB_KEY, O_PUB_NAME, O_FORMAT,
	O_FORMAT_LAST = O_FORMAT + 2, O_TLS_CERT, O_TLS_KEY, O_TLS_CA, O_STATUS, O_HANDSHAKES,
};

static const char usage_head[] =
	"Usage: vigil-collector --listen tls://HOST:PORT --tls-cert FILE --tls-key FILE\n"
	"                       --tls-ca FILE [OPTION]...\n"
	"Receive event streams from vigild agents (vigild --send) and write them as JSON lines.\n";

static const struct vigil_opt options[] = {
	{ .help = "" },
	{ "listen", 'l', 'l', "URL",
	  "where agents connect: tls://HOST:PORT (mutual TLS),\n"
	  "tcp://HOST:PORT or udp://HOST:PORT (clear text: for\n"
	  "labs and links already encrypted) (repeatable;\n"
	  "port 0 picks one, printed on stderr)" },
	{ "tls-cert", 0, O_TLS_CERT, "FILE", "the collector's certificate chain (PEM), for tls://" },
	{ "tls-key", 0, O_TLS_KEY, "FILE", "its private key (PEM)" },
	{ "tls-ca", 0, O_TLS_CA, "FILE",
	  "the CA that signs agents' certificates (PEM); an\n"
	  "agent's node name is its certificate's first DNS\n"
	  "subject alternative name" },
	{ "export-file", 'o', 'o', "PATH",
	  "JSON lines appended to PATH, rotated by size\n"
	  "(default: stdout); PATH.state records what was\n"
	  "written, so a restart neither loses nor doubles" },
	{ "export-file-max-size-mb", 0, O_MAXSIZE, "N",
	  "rotate PATH past N MiB (default 10; 0 never)" },
	{ "export-file-max-backups", 0, O_BACKUPS, "N", "keep N rotated files (default 5)" },
	{ "fsync", 0, O_FSYNC, NULL,
	  "write each batch and the state file through to\n"
	  "disk before acknowledging (a power cut then\n"
	  "loses nothing acknowledged)" },
	VIGIL_FORMAT_OPTS(O_FORMAT),
	{ "publish", 0, O_PUB, "URL",
	  "also publish every line to NATS JetStream at URL\n"
	  "(nats://HOST:PORT, comma-separated for a cluster);\n"
	  "agents are acknowledged once JetStream has it. With\n"
	  "no --export-file, nothing is written to stdout" },
	{ "publish-subject", 0, O_PUB_SUBJ, "PREFIX", "subjects PREFIX.NODE.KIND (default vigil)" },
	{ "publish-stream", 0, O_PUB_STREAM, "NAME",
	  "the stream, created for PREFIX.> if missing\n"
	  "(default VIGIL)" },
	{ "publish-creds", 0, O_PUB_CREDS, "FILE", "NATS credentials (user JWT and NKey seed)" },
	{ "publish-tls-ca", 0, O_PUB_CA, "FILE",
	  "TLS to NATS, trusting servers signed by this CA (PEM);\n"
	  "a tls:// URL turns TLS on with the system's CAs" },
	{ "publish-tls-cert", 0, O_PUB_CERT, "FILE",
	  "client certificate chain (PEM), with --publish-tls-key" },
	{ "publish-tls-key", 0, O_PUB_KEY, "FILE", "its private key (PEM)" },
	{ "publish-tls-name", 0, O_PUB_NAME, "NAME",
	  "the name the server's certificate must carry\n"
	  "(default: the URL's host)" },
	{ "publish-wait", 0, O_PUB_WAIT, "S",
	  "seconds an attempt waits for JetStream (default 5)" },
	{ "max-agents", 0, O_AGENTS, "N", "agent streams remembered (default 256)" },
	{ "max-conns", 0, O_CONNS, "N",
	  "connections at once (default 256; each costs 256 KiB,\n"
	  "64 KiB more over TLS); when full, a new one evicts\n"
	  "the longest-idle connection of the address holding\n"
	  "the most" },
	{ "max-conns-per-addr", 0, O_PER_ADDR, "N",
	  "connections of one address (IPv6: one /64) at once\n"
	  "(default 32); past it, a new one evicts that\n"
	  "address's longest-idle connection" },
	{ "max-handshakes-per-addr", 0, O_HANDSHAKES, "N",
	  "TLS handshakes one address (IPv6: one /64) may start\n"
	  "a second, with bursts of twice that (default 50;\n"
	  "0: no limit); past it, connections are closed at once" },
	{ "hello-timeout", 0, O_HELLO, "S",
	  "seconds a new connection has to say hello, TLS\n"
	  "handshake included (default 5)" },
	{ "frame-timeout", 0, O_FRAME, "S",
	  "seconds a started record may stay unfinished (default 10)" },
	{ "rebind-after", 0, O_REBIND, "S",
	  "seconds an agent identity stays bound to the address\n"
	  "that proved it, once its connection ends (default 0:\n"
	  "only while it is connected)" },
	{ "peer-timeout", 0, O_PEER, "S",
	  "seconds before a peer that stopped answering (host\n"
	  "gone, link cut) is dropped: TCP keepalive and\n"
	  "TCP_USER_TIMEOUT (default 60; 2 to 3600)" },
	{ "forget-after", 0, O_FORGET, "DURATION",
	  "forget the recorded offset of an agent stream not\n"
	  "heard for DURATION: N[s|m|h|d] (default 7d)" },
	{ "status-file", 0, O_STATUS, "PATH",
	  "what was accepted from whom, rewritten each second:\n"
	  "listeners, then each agent stream (connected from\n"
	  "where, TLS certificate or clear text, offset, counts)" },
	{ "verbose", 'v', 'v', NULL, "debug output on stderr" },
	{ "help", 'h', 'h', NULL, "this text" },
	{ "version", 'V', 'V', NULL, "version and event schema" },
	{ .help = "SIGHUP reads --tls-cert, --tls-key and --tls-ca again; new connections use them." },
};

struct options {
	const char *listen[MAX_LISTEN];
	int nlisten;
	const char *export_file;
	const char *status_file;
	const char *tls_cert, *tls_key, *tls_ca;
	struct vigil_format_opts format;
	struct vigil_pub_config pub;
	uint64_t max_mb, backups, max_agents, max_conns, max_per_addr, max_handshakes;
	double hello_timeout, frame_timeout, rebind_after, peer_timeout, forget_after;
	bool fsync;
};

static int parse_num(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= max))	/* NaN too */
		return vlog_err(-EINVAL, "invalid value '%s' for %s", s, opt);
	*out = v;
	return 0;
}

/* A duration: a number of seconds, or of minutes, hours, days with the
 * suffix m, h, d (s for seconds also taken); 1 s to 3650 days. */
static int parse_duration(const char *opt, const char *s, double *out)
{
	static const struct { char unit; double secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	char *end;
	double v, mult = 1;

	errno = 0;
	v = strtod(s, &end);
	if (!errno && end != s && *end && !end[1]) {
		mult = 0;
		for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*end == units[i].unit)
				mult = units[i].secs, end++;
	}
	if (errno || end == s || *end || !mult || !(v * mult >= 1 && v * mult <= 3650 * 86400.0))
		return vlog_err(-EINVAL, "invalid value '%s' for %s: want N[s|m|h|d], "
				"1 s to 3650 d", s, opt);
	*out = v * mult;
	return 0;
}

/* tls:// wants all three files; they make no sense without it. */
static int tls_options(const struct options *o)
{
	static const char *const names[] = { "--tls-cert", "--tls-key", "--tls-ca" };
	const char *files[] = { o->tls_cert, o->tls_key, o->tls_ca };
	bool tls = false;

	for (int i = 0; i < o->nlisten; i++)
		tls |= collector_listen_tls(o->listen[i]);
	for (int i = 0; i < 3; i++) {
		if (tls && !files[i])
			return vlog_err(-EINVAL, "a tls:// --listen needs %s", names[i]);
		if (!tls && files[i])
			return vlog_err(-EINVAL, "%s without a tls:// --listen", names[i]);
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	struct vigil_getopt g;
	const char *pub_opt = NULL;	/* a --publish-* option given */
	double v;
	int ch, err;

	*o = (struct options){ .max_mb = 10, .backups = 5, .max_agents = 256, .max_conns = 256,
			       .max_per_addr = 32, .max_handshakes = 50, .hello_timeout = 5,
			       .frame_timeout = 10,
			       .rebind_after = 0, .peer_timeout = 60, .forget_after = 7 * 86400,
			       .pub = { .prefix = "vigil", .stream = "VIGIL", .wait = 5, .stop = &stop } };
	if (vigil_getopt_make(&g, options, VIGIL_OPTS_N(options), ""))
		return vlog_err(-E2BIG, "too many options for one table");
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (o->nlisten == MAX_LISTEN)
				return vlog_err(-E2BIG, "at most %d --listen", MAX_LISTEN);
			o->listen[o->nlisten++] = optarg;
			break;
		case 'o': o->export_file = optarg; break;
		case O_STATUS: o->status_file = optarg; break;
		case O_TLS_CERT: o->tls_cert = optarg; break;
		case O_TLS_KEY: o->tls_key = optarg; break;
		case O_TLS_CA: o->tls_ca = optarg; break;
		case O_MAXSIZE:
			if (parse_num("--export-file-max-size-mb", optarg, 1 << 20, &v))
				return -EINVAL;
			o->max_mb = v;
			break;
		case O_BACKUPS:
			if (parse_num("--export-file-max-backups", optarg, 1000, &v))
				return -EINVAL;
			o->backups = v;
			break;
		case O_FORMAT ... O_FORMAT_LAST:
			if (vigil_format_option(ch, O_FORMAT, optarg, &o->format))
				return -EINVAL;
			break;
		case O_AGENTS:
			if (parse_num("--max-agents", optarg, 65536, &v) || v < 1)
				return vlog_err(-EINVAL, "--max-agents wants 1 to 65536");
			o->max_agents = v;
			break;
		case O_CONNS:
			if (parse_num("--max-conns", optarg, 65536, &v) || v < 1)
				return vlog_err(-EINVAL, "--max-conns wants 1 to 65536");
			o->max_conns = v;
			break;
		case O_PER_ADDR:
			if (parse_num("--max-conns-per-addr", optarg, 65536, &v) || v < 1)
				return vlog_err(-EINVAL, "--max-conns-per-addr wants 1 to 65536");
			o->max_per_addr = v;
			break;
		case O_HANDSHAKES:
			if (parse_num("--max-handshakes-per-addr", optarg, 100000, &v))
				return -EINVAL;
			o->max_handshakes = v;
			break;
		case O_PEER:
			if (parse_num("--peer-timeout", optarg, 3600, &o->peer_timeout) ||
			    o->peer_timeout < 2)
				return vlog_err(-EINVAL, "--peer-timeout wants 2 to 3600 seconds");
			break;
		case O_FORGET:
			if (parse_duration("--forget-after", optarg, &o->forget_after))
				return -EINVAL;
			break;
		case O_HELLO:
			if (parse_num("--hello-timeout", optarg, 3600, &o->hello_timeout))
				return -EINVAL;
			break;
		case O_FRAME:
			if (parse_num("--frame-timeout", optarg, 3600, &o->frame_timeout))
				return -EINVAL;
			break;
		case O_REBIND:
			if (parse_num("--rebind-after", optarg, 86400, &o->rebind_after))
				return -EINVAL;
			break;
		case O_FSYNC: o->fsync = true; break;
		case O_PUB: o->pub.urls = optarg; break;
		case O_PUB_SUBJ: o->pub.prefix = optarg; pub_opt = "--publish-subject"; break;
		case O_PUB_STREAM: o->pub.stream = optarg; pub_opt = "--publish-stream"; break;
		case O_PUB_CREDS: o->pub.creds = optarg; pub_opt = "--publish-creds"; break;
		case O_PUB_CA: o->pub.tls_ca = optarg; pub_opt = "--publish-tls-ca"; break;
		case O_PUB_CERT: o->pub.tls_cert = optarg; pub_opt = "--publish-tls-cert"; break;
		case O_PUB_KEY: o->pub.tls_key = optarg; pub_opt = "--publish-tls-key"; break;
		case O_PUB_NAME: o->pub.tls_name = optarg; pub_opt = "--publish-tls-name"; break;
		case O_PUB_WAIT:
			if (parse_num("--publish-wait", optarg, 3600, &o->pub.wait))
				return -EINVAL;
			if (o->pub.wait < 0.1)
				return vlog_err(-EINVAL, "--publish-wait wants 0.1 to 3600 seconds");
			pub_opt = "--publish-wait";
			break;
		case 'v': vlog_verbose = 1; break;
		case 'h': vigil_opts_usage(stdout, usage_head, options, VIGIL_OPTS_N(options)); exit(0);
		case 'V':
			printf("vigil-collector %s (event schema %u.%u, stream %u)\n", VIGIL_VERSION,
			       VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR, VIGIL_STREAM_VERSION);
			exit(0);
		default:
			fputs("Try 'vigil-collector --help'.\n", stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		return vlog_err(-EINVAL, "unexpected argument '%s'", argv[optind]);
	if (!o->nlisten)
		return vlog_err(-EINVAL, "no --listen given (try 'vigil-collector --help')");
	if ((err = tls_options(o)))
		return err;
	if (pub_opt && !o->pub.urls)
		return vlog_err(-EINVAL, "%s without --publish", pub_opt);
	if (!o->pub.tls_cert != !o->pub.tls_key)
		return vlog_err(-EINVAL, "--publish-tls-cert and --publish-tls-key go together");
	return 0;
}

/* SIGHUP: the TLS files are read again (a certificate, key or CA rotated
 * on disk); new connections use them, connections open keep their session
 * (each holds a reference to the context it began with). Files that cannot
 * be read leave the ones in use, and the log says why. */
static void tls_reload(const struct options *o, struct listener *ls, int nls,
		       struct ssl_ctx_st **tls)
{
	struct ssl_ctx_st *ctx;

	if (!*tls)
		return vlog_info("SIGHUP: no tls:// listener, nothing to read again");
	if (!(ctx = conn_tls_ctx(o->tls_cert, o->tls_key, o->tls_ca)))
		return vlog_info("SIGHUP: keeping the TLS certificate, key and CA read before");
	for (int i = 0; i < nls; i++)
		if (ls[i].tls)
			ls[i].tls = ctx;
	conn_tls_ctx_free(*tls);
	*tls = ctx;
	vlog_info("SIGHUP: TLS certificate %s, key %s and CA %s read again: new connections "
		  "use them", o->tls_cert, o->tls_key, o->tls_ca);
}

static void run(struct collector *c, struct listener *ls, int nls, const struct options *o,
		struct ssl_ctx_st **tls)
{
	struct epoll_event evs[64];
	double last = 0, last_retire = 0;

	while (!stop) {
		if (hup) {
			hup = 0;
			tls_reload(o, ls, nls, tls);
		}
		int n = epoll_wait(c->epfd, evs, 64, collector_listen_resume(c, ls, nls, 500));
		double now;

		for (int i = 0; i < n && !stop; i++) {	/* stopping: no new batch */
			int kind = *(int *)evs[i].data.ptr;

			if (kind == EP_LISTEN_TCP) {
				collector_accept(c, evs[i].data.ptr);
			} else if (kind == EP_LISTEN_UDP) {
				collector_udp_readable(c, ((struct listener *)evs[i].data.ptr)->fd);
			} else {
				struct conn *k = evs[i].data.ptr;

				if (k->fd >= 0)
					collector_conn_readable(c, k);
			}
		}
		collector_conn_reap(c);
		now = vigil_stream_now();
		if (now - last >= 0.25) {
			last = now;
			collector_conn_timeouts(c, now);
			collector_conn_reap(c);
		}
		if (now - last_retire >= 1) {
			last_retire = now;
			vigil_commit_retire(&c->commit);
			if (o->status_file)
				collector_status_write(c, ls, nls, o->status_file);
		}
	}
}

int main(int argc, char **argv)
{
	struct listener listeners[MAX_LISTEN] = {};
	struct collector c = { .epfd = -1, .out = { .fd = -1 }, .commit = { .fd = -1 } };
	struct options o;
	struct ssl_ctx_st *tls = NULL;
	uint64_t pauses = 0, accept_refused = 0;
	int err = 0;

	vlog_prog = "vigil-collector";
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (parse_options(argc, argv, &o))
		return 2;
	if (o.tls_cert && !(tls = conn_tls_ctx(o.tls_cert, o.tls_key, o.tls_ca)))
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, on_hup);
	c.format = o.format;
	c.max_agents = o.max_agents;
	c.max_conns = o.max_conns;
	c.hello_timeout = o.hello_timeout;
	c.frame_timeout = o.frame_timeout;
	c.rebind_after = o.rebind_after;
	c.peer_timeout = o.peer_timeout;
	c.max_per_addr = o.max_per_addr;
	c.max_handshakes = o.max_handshakes;
	c.tls = tls != NULL;
	c.agents = calloc(c.max_agents, sizeof(*c.agents));
	c.conns = calloc(c.max_conns, sizeof(*c.conns));
	c.dead = calloc(2 * c.max_conns, sizeof(*c.dead));
	c.udp_buf = malloc(VIGIL_STREAM_DGRAM_MAX + 1);
	if (!c.agents || !c.conns || !c.dead || !c.udp_buf) {
		err = vlog_err(-ENOMEM, "cannot allocate tables");
		goto out;
	}
	if (o.export_file) {
		err = vigil_export_open(&c.out, o.export_file, o.max_mb << 20, o.backups);
		if (err) {
			vlog_err(err, "cannot open export file %s", o.export_file);
			goto out;
		}
		c.out.sync = o.fsync;
		/* At least --max-conns entries: then a new stream always finds
		 * one with no live connection to take the place of. */
		err = vigil_commit_open(&c.commit, o.export_file, c.out.fd,
					c.max_agents > c.max_conns ? c.max_agents : c.max_conns,
					c.max_agents, o.forget_after);
		if (err)
			goto out;
		c.commit.live = collector_conn_live;
		c.commit.live_ctx = &c;
		if (c.commit.gen && c.out.size > c.commit.export_size)
			c.out.size = c.commit.export_size;	/* cut back at open */
	} else if (!o.pub.urls) {
		vigil_export_fd(&c.out, STDOUT_FILENO);
	}
	if (o.pub.urls && (err = vigil_pub_open(&c.pub, &o.pub)))
		goto out;
	c.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c.epfd < 0) {
		err = vlog_err(-errno, "epoll");
		goto out;
	}
	for (int i = 0; i < o.nlisten; i++)
		if ((err = collector_listen(&c, o.listen[i], tls, &listeners[i])))
			goto out;
	run(&c, listeners, o.nlisten, &o, &tls);
	for (int i = 0; i < o.nlisten; i++) {
		pauses += listeners[i].pauses;
		accept_refused += listeners[i].refused;
	}
	vlog_info("stopping: %llu connections closed for bad input, %llu refused (%llu TLS "
		  "handshakes past --max-handshakes-per-addr); "
		  "accept paused %llu times (%llu attempts out of descriptors or memory); "
		  "%llu datagrams, %llu bad, %llu from agents not yet known",
		  (unsigned long long)c.closed_hostile, (unsigned long long)c.refused,
		  (unsigned long long)c.handshakes_refused,
		  (unsigned long long)pauses, (unsigned long long)accept_refused,
		  (unsigned long long)c.udp_datagrams, (unsigned long long)c.udp_bad,
		  (unsigned long long)c.udp_unknown);
	vlog_info("%llu connections evicted to make room; %llu stream offsets forgotten after "
		  "--forget-after, %llu to make room in the table",
		  (unsigned long long)c.evicted, (unsigned long long)c.commit.retired,
		  (unsigned long long)c.commit.evicted);
out:
	while (c.nconns)
		collector_conn_close(&c, c.conns[0], NULL);
	collector_conn_reap(&c);
	if (c.agents)
		collector_agents_free(&c);
	for (int i = 0; i < MAX_LISTEN; i++)
		if (listeners[i].kind)
			close(listeners[i].fd);
	if (c.epfd >= 0)
		close(c.epfd);
	vigil_commit_close(&c.commit);
	vigil_export_close(&c.out);
	vigil_pub_close(c.pub);
	vbuf_free(&c.batch);
	free(c.agents);
	free(c.conns);
	free(c.dead);
	free(c.udp_buf);
	conn_tls_ctx_free(tls);
	return err ? 1 : 0;
}
