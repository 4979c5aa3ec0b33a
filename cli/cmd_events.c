// SPDX-License-Identifier: GPL-2.0
/*
 * vigil events: follows a running vigild's events over its control socket
 * (a subscriber: agent/sinks/subscribers.h), or reads JSON lines, vigil's
 * or Tetragon's, from a file or stdin; shows them compact, one line each,
 * or as JSON, filtered.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "buf.h"
#include "cmd.h"
#include "control.h"
#include "events_render.h"
#include "log.h"

#define EVENTS_USAGE "usage: vigil events [--compact|--json|--tetragon] [--kind K]... " \
	"[--binary B] [--pid P] [--namespace NS] [--follow] [FILE|-]"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Writes b out; false once stdout's reader has gone (| head). */
static bool put(struct vigil_buf *b)
{
	size_t done = 0;

	while (done < b->len) {
		ssize_t w = write(STDOUT_FILENO, b->p + done, b->len - done);

		if (w < 0 && errno == EINTR && !stop)
			continue;
		if (w <= 0)
			return false;
		done += w;
	}
	b->len = 0;
	return true;
}

/* Renders each whole line of p[0..n); returns the bytes taken. */
static size_t lines(const struct events_view *v, const char *p, size_t n, struct vigil_buf *out)
{
	size_t at = 0;

	for (const char *nl; (nl = memchr(p + at, '\n', n - at)); at = nl - p + 1)
		if (nl > p + at)
			events_render(v, p + at, nl - p - at, out);
	return at;
}

static int read_file(const struct events_view *v, FILE *f)
{
	struct vigil_buf out = {};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	while (!stop && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n')
			line[n++] = '\n';	/* getline left room for its NUL */
		lines(v, line, n, &out);
		if (out.len > 65536 && !put(&out))
			break;
	}
	if (ferror(f) && !stop)
		err = vlog_err(-errno, "cannot read the events");
	put(&out);
	free(line);
	vbuf_free(&out);
	return err;
}

static int follow(const struct events_view *v, bool tetragon)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *req = tetragon ? "events\0tetragon" : "events\0vigil";
	size_t reqlen = tetragon ? sizeof("events\0tetragon") : sizeof("events\0vigil");
	struct vigil_buf out = {};
	size_t cap = 256 << 10;
	char *msg = malloc(cap);
	int fd = -1, err = 0;
	ssize_t n = 0;

	if (!msg)
		return -ENOMEM;
	if ((err = vigil_control_path(cli_pin_dir, sa.sun_path, sizeof(sa.sun_path))))
		goto out;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = vlog_err(-errno, "cannot reach vigild at %s (is it running with --pin-dir %s?)",
			       sa.sun_path, cli_pin_dir);
		goto out_fd;
	}
	if (send(fd, req, reqlen, 0) < 0 || (n = recv(fd, msg, cap - 1, 0)) <= 0) {
		err = stop ? 0 : vlog_err(n < 0 ? -errno : -EPIPE, "no reply from vigild");
		goto out_fd;
	}
	if (msg[0] != '0') {
		msg[n] = 0;
		err = vlog_refuse(-EBUSY, "vigild refused: %s", msg + 1);
		goto out_fd;
	}
	while (!stop) {
		n = recv(fd, msg, cap, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? vlog_err(-errno, "events from vigild") :
				      vlog_refuse(-EPIPE, "vigild has stopped");
			break;
		}
		lines(v, msg, n, &out);	/* the agent sends whole lines */
		if (!put(&out))
			break;
	}
out_fd:
	if (fd >= 0)
		close(fd);
out:
	vbuf_free(&out);
	free(msg);
	return err;
}

int do_events(int argc, char **argv)
{
	enum { O_KIND = 256, O_BINARY, O_PID, O_NS, O_FOLLOW, O_TETRAGON, O_NO_COLOR };
	static const struct option longopts[] = {
		{ "compact", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "tetragon", no_argument, NULL, O_TETRAGON },
		{ "kind", required_argument, NULL, O_KIND },
		{ "binary", required_argument, NULL, O_BINARY },
		{ "pid", required_argument, NULL, O_PID },
		{ "namespace", required_argument, NULL, O_NS },
		{ "follow", no_argument, NULL, 'f' },
		{ "no-color", no_argument, NULL, O_NO_COLOR },
		{}
	};
	struct events_view v = { .color = isatty(STDOUT_FILENO) };
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: recv returns */
	bool tetragon = false, force_follow = false;
	struct stat st;
	int c;

	optind = 0;	/* 0: getopt starts afresh, permuting (main's stops at verbs) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "cjf", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': v.json = false; break;
		case 'j': v.json = true; break;
		case O_TETRAGON: v.json = tetragon = true; break;
		case O_KIND:
			if (v.nkinds == EVENTS_KINDS_MAX)
				return vlog_usage("at most %d --kind", EVENTS_KINDS_MAX);
			v.kinds[v.nkinds++] = optarg;
			break;
		case O_BINARY: v.binary = optarg; break;
		case O_PID: v.pid = optarg; break;
		case O_NS: v.namespace = optarg; break;
		case 'f': force_follow = true; break;
		case O_NO_COLOR: v.color = false; break;
		default: return vlog_usage(EVENTS_USAGE);
		}
	}
	if (v.json)
		v.color = false;
	if (optind + 1 < argc || (force_follow && optind < argc))
		return vlog_usage(EVENTS_USAGE);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (optind < argc && strcmp(argv[optind], "-")) {
		FILE *f = fopen(argv[optind], "re");
		int err;

		if (!f)
			return vlog_err(-errno, "cannot open %s", argv[optind]);
		err = read_file(&v, f);
		fclose(f);
		return err;
	}
	/* Lines piped or redirected in are read; else the agent is followed. */
	if (optind < argc || (!force_follow && !fstat(STDIN_FILENO, &st) &&
			      (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))))
		return read_file(&v, stdin);
	return follow(&v, tetragon);
}
