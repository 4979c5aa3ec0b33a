// SPDX-License-Identifier: GPL-2.0
/*
 * Unit checks (TAP) for the policy parser (lib/policy_parse.c), one table
 * (policy_cases.h): every spelling the format could allow either means what
 * it reads as (checked field by field) or is refused at its line and column
 * with a message naming what is wrong. Nothing is accepted and then enforces nothing.
 * tests/policy_parse.t keeps what goes through `vigil policy check`: the
 * output, several files at once, the examples in docs/policy.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy_parse.h"
#include "policy_cases.h"

static int n, failed;
static char dir[] = "/tmp/vigil-unit-policy.XXXXXX";

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	failed |= !cond;
}

/* Writes text to a file of the test's folder, as a policy file must be:
 * root's, not writable by others. */
static int put(const char *name, const char *text, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s.yaml", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -EIO;
	}
	return close(fd);
}

static int rule_is(const struct vigil_policy *p, const struct want_rule *w, char *why, size_t len)
{
	const struct vigil_rule *r = p->n_rules ? &p->rules[0] : NULL;
	char cidr[64] = "";

	if (w->n_rules && p->n_rules != w->n_rules)
		return snprintf(why, len, "%u rules", p->n_rules), 0;
	if (!r)
		return 1;
	if (r->n_cidrs)
		vigil_cidr_format(&r->cidrs[0], cidr, sizeof(cidr));
	snprintf(why, len, "action %u direction %u protocol %u ports %u-%u cidr %s cgroup %s",
		 r->action, r->direction, r->protocol, r->port_lo, r->port_hi, cidr,
		 r->cgroup ? r->cgroup : "-");
	return (w->action < 0 || r->action == w->action) &&
	       (w->direction < 0 || r->direction == w->direction) &&
	       (w->protocol < 0 || r->protocol == w->protocol) &&
	       (!w->port_lo && !w->port_hi ? 1 : r->port_lo == w->port_lo && r->port_hi == w->port_hi) &&
	       (!w->cidr || !strcmp(cidr, w->cidr)) &&
	       (!w->cgroup || (r->cgroup && !strcmp(r->cgroup, w->cgroup)));
}

static void run(const struct policy_case *c, unsigned i)
{
	struct vigil_policy p = {};
	char path[256], name[16], err[512], why[256] = "", where[32];
	int r;

	snprintf(name, sizeof(name), "case%u", i);
	if (put(name, c->yaml, path, sizeof(path))) {
		ok(0, c->what);
		return;
	}
	r = vigil_policy_add_file(&p, path, err, sizeof(err));
	if (!c->pos) {
		int good = !r && rule_is(&p, &c->rule, why, sizeof(why));

		ok(good, c->what);
		if (!good)
			printf("#   %s%s\n", r ? err : "read as: ", r ? "" : why);
	} else {
		/* "PATH:L:C: " then the message; p untouched */
		int at = snprintf(where, sizeof(where), ":%s: ", c->pos);
		const char *m = strstr(err, where);
		int good = r == -EINVAL && !p.n_rules && m && m == err + strlen(path) &&
			   strstr(m + at, c->text);

		ok(good, c->what);
		if (!good)
			printf("#   got %d: %s\n#   want %s: ...%s...\n", r, err, c->pos, c->text);
	}
	vigil_policy_free(&p);
	unlink(path);
}

/* Rules and filters without a name are named "<file's name>:<line>",
 * whatever the length of the path they were read from: two of one file
 * never share a name. */
static void default_names(void)
{
	static const char text[] = "rules:\n  - action: drop\n  - action: drop\n"
				   "filters:\n  - action: deny\n  - action: deny\n";
	char path[300], err[512];
	struct vigil_policy p = {};
	int r, good;

	snprintf(path, sizeof(path), "/etc/vigil/%0200d/filters.yaml", 0);
	r = vigil_policy_add_text(&p, path, (const unsigned char *)text, strlen(text), err,
				  sizeof(err));
	good = !r && p.n_rules == 2 && p.n_filters == 2 &&
	       !strcmp(p.rules[1].name, "filters.yaml:3") &&
	       !strcmp(p.filters[0].name, "filters.yaml:5") &&
	       !strcmp(p.filters[1].name, "filters.yaml:6");
	ok(good, "unnamed rules and filters of a long path: '<file>:<line>', unique");
	if (r)
		printf("#   %s\n", err);
	else if (!good && p.n_filters)
		printf("#   filter names: '%s', '%s'\n", p.filters[0].name,
		       p.n_filters > 1 ? p.filters[1].name : "");
	vigil_policy_free(&p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a folder: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned i = 0; i < sizeof(policy_cases) / sizeof(policy_cases[0]); i++)
		run(&policy_cases[i], i);
	default_names();
	rmdir(dir);
	printf("1..%d\n", n);
	return failed;
}
