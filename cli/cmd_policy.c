// SPDX-License-Identifier: GPL-2.0
/*
 * vigil policy check|load|unload|reload|list: checks policy files here, and
 * asks the running vigild (over its control socket) to load them, drop them,
 * re-read them or list what is in force. Checking needs no agent; the rest do.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "buf.h"
#include "cmd.h"
#include "control.h"
#include "log.h"
#include "policy_parse.h"
#include "policy_warn.h"
#include "stream.h"

/* Prints a warning for each rule that would refuse vigild's stream to one
 * of the --send URLs given to check (docs/policy.md, "Warnings"). */
static void warn_peers(const struct vigil_policy *p, char **urls, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		struct sockaddr_storage peer;
		unsigned len;
		int socktype;

		if (vigil_stream_url(urls[j], &socktype, &peer, &len))
			continue;
		for (unsigned i = 0; i < p->n_rules; i++)
			if (vigil_rule_covers_peer(&p->rules[i], &peer, socktype))
				fprintf(stderr, "%s:%u: warning: rule '%s' (%s) covers vigild's stream to "
					"%s (--send)%s\n", p->rules[i].file, p->rules[i].line,
					p->rules[i].name, vigil_policy_action_name(p->rules[i].action),
					urls[j], p->rules[i].cgroup ? ", if vigild runs in its cgroup" : "");
	}
}

/* A warning for each rule that can match nothing where it stands. */
static void warn_unreachable(const struct vigil_policy *p)
{
	for (unsigned i = 0; i < p->n_rules; i++) {
		const struct vigil_rule *r = &p->rules[i];
		const char *why = vigil_rule_unreachable(p, r, false);

		if (why)
			fprintf(stderr, "%s:%u: warning: rule '%s': %s: it matches nothing unless "
				"vigild runs with --enforce-on\n", r->file, r->line, r->name, why);
	}
}

static int policy_check(int argc, char **argv)
{
	struct vigil_policy p = {};
	char err[512], *urls[8];
	unsigned nurl = 0;
	int ret = 0;

	while (argc >= 2 && !strcmp(argv[0], "--send")) {
		if (nurl == sizeof(urls) / sizeof(urls[0]))
			return vlog_usage("at most %zu --send", sizeof(urls) / sizeof(urls[0]));
		urls[nurl++] = argv[1];
		argc -= 2, argv += 2;
	}
	if (argc < 1 || argv[0][0] == '-')
		return vlog_usage("usage: vigil policy check [--send URL]... FILE...");
	for (int i = 0; i < argc && !ret; i++) {
		unsigned before = p.n_rules + p.n_prules, fbefore = p.n_filters;

		ret = vigil_policy_add_file(&p, argv[i], err, sizeof(err));
		if (ret)
			fprintf(stderr, "%s\n", err);
		else if (p.n_filters == fbefore)
			printf("%s: %u rules\n", argv[i], p.n_rules + p.n_prules - before);
		else
			printf("%s: %u rules, %u filters\n", argv[i], p.n_rules + p.n_prules - before,
			       p.n_filters - fbefore);
	}
	if (!ret) {
		warn_unreachable(&p);
		warn_peers(&p, urls, nurl);
	}
	vigil_policy_free(&p);
	return ret;
}

/* The agent reads the files: give it paths that do not depend on where
 * this command runs. The folder is resolved, the file's own name is kept:
 * the agent refuses a symbolic link there (a file it re-reads on every
 * reload must be the file named, not whatever a link points at later). */
static int absolute_path(const char *arg, char *out, size_t len)
{
	const char *slash = strrchr(arg, '/'), *base = slash ? slash + 1 : arg;
	char dir[PATH_MAX], real[PATH_MAX];
	int n;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return vlog_refuse(-EINVAL, "%s: not a file name", arg);
	n = snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - arg) + 1 : 1, slash ? arg : ".");
	if (n < 0 || (size_t)n >= sizeof(dir) || !realpath(dir, real))
		return vlog_err(n < 0 || (size_t)n >= sizeof(dir) ? -ENAMETOOLONG : -errno, "%s", arg);
	n = snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base);
	return n < 0 || (size_t)n >= len ? vlog_refuse(-ENAMETOOLONG, "%s", arg) : 0;
}

static int request(const char *verb, int argc, char **argv)
{
	struct vigil_buf req = {};
	char path[PATH_MAX];
	int err = 0;

	vbuf_put(&req, verb, strlen(verb) + 1);
	for (int i = 0; i < argc; i++) {
		if ((err = absolute_path(argv[i], path, sizeof(path))))
			goto out;
		vbuf_put(&req, path, strlen(path) + 1);
	}
	err = req.oom ? -ENOMEM : cli_ask_agent(&req, false);
out:
	vbuf_free(&req);
	return err;
}

/* The rules in force, from the agent; with none running, from the pins
 * (the rules of a stopped agent still enforce). */
static int list(void)
{
	struct vigil_buf req = {};
	int err;

	vbuf_put(&req, "list", sizeof("list"));
	err = req.oom ? -ENOMEM : cli_ask_agent(&req, true);
	vbuf_free(&req);
	if (err == -ENOENT || err == -ECONNREFUSED)
		return cli_policy_list_pinned();
	if (err == -EAGAIN || err == -EPIPE)
		return vlog_err(err, "no reply from vigild");
	return err;
}

int do_policy(int argc, char **argv)
{
	const char *verb = argc >= 2 ? argv[1] : "";

	if (!strcmp(verb, "check"))
		return policy_check(argc - 2, argv + 2);
	if ((!strcmp(verb, "load") || !strcmp(verb, "unload")) && argc >= 3)
		return request(verb, argc - 2, argv + 2);
	if (!strcmp(verb, "list") && argc == 2)
		return list();
	if (!strcmp(verb, "reload") && argc == 2)
		return request(verb, 0, NULL);
	if (!strcmp(verb, "list") && argc == 3 && (!strcmp(argv[2], "-j") || !strcmp(argv[2], "--json")))
		return request("list-json", 0, NULL);
	return vlog_usage("usage: vigil policy check [--send URL]... FILE... | load FILE... | unload FILE... | reload | list [--json]");
}
