// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "json.h"
#include "control/control_socket.h"
#include "control/proc_list.h"
#include "sinks/subscribers.h"
#include "policy_warn.h"
#include "enforce/rule_maps.h"
#include "enforce/enforce_carried.h"
#include "core/kernel_features.h"
#include "log.h"
#include "stream.h"
#define STR_(x) #x
#define STR(x) STR_(x)
/* lib/control.h and agent/control/control_socket.h share a name: take the lib one by path. */
#include "control.h"

static int open_socket(struct vigil_control *c, const char *pin_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err = vigil_control_path(pin_dir, c->path, sizeof(c->path));

	if (err)
		return vlog_err(err, "no control socket name for pin folder %s", pin_dir);
	if (mkdir(VIGIL_CONTROL_DIR, 0700) && errno != EEXIST)
		return vlog_err(-errno, "cannot create %s", VIGIL_CONTROL_DIR);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vlog_err(-errno, "cannot create the control socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	/* A socket that answers belongs to a running agent (one whose pin
	 * folder has the same name): never take it over. One that does not
	 * was left by an agent that did not stop cleanly. */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || errno == EAGAIN) {
		err = vlog_refuse(-EADDRINUSE, "another vigild serves %s", c->path);
		goto fail;
	}
	unlink(c->path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(c->path, 0600) || listen(fd, 8)) {
		err = vlog_err(-errno, "cannot listen on %s", c->path);
		goto fail;
	}
	c->fd = fd;	/* from here on, close unlinks the path */
	return 0;
fail:
	close(fd);
	return err;
}

int vigil_control_peers(struct vigil_control *c, const char *const *urls, unsigned n)
{
	unsigned len;
	int err;

	for (c->n_peers = 0; c->n_peers < n && c->n_peers < VIGIL_CONTROL_PEERS; c->n_peers++) {
		unsigned i = c->n_peers;

		err = vigil_stream_url(urls[i], &c->peer_socktype[i], &c->peers[i], &len);
		if (err)
			return err;
		c->peer_url[i] = urls[i];
	}
	return 0;
}

/* vigild's own cgroup, as a path on the cgroup v2 mount; -errno if unknown. */
static int own_cgroup(char *out, size_t len)
{
	char line[PATH_MAX + 8], mnt[256];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::/", 4) && !vigil_cgroup2_mount(mnt, sizeof(mnt)))
			err = (size_t)snprintf(out, len, "%s%s", mnt, line + 3) < len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return err;
}

/* Is own (a path on the mount) the rule's cgroup or below it? */
static bool cgroup_holds(const char *rule_cgroup, const char *own)
{
	struct vigil_cgroup_ref ref;
	char why[256];
	size_t n;

	if (vigil_cgroup_resolve(rule_cgroup, &ref, why, sizeof(why)))
		return false;
	n = strlen(ref.path);
	return !strncmp(own, ref.path, n) && (own[n] == '/' || !own[n]);
}

static void warn_line(struct vigil_buf *out, const char *line)
{
	vlog_info("policy: %s", line);
	if (out)
		vbuf_printf(out, "%s\n", line);
}

/* Rules accepted on a kernel that lacks part of what they do: what holds
 * and what does not (docs/policy.md, docs/kernels.md). */
static void warn_kernel(const struct vigil_rule *r, struct vigil_buf *out)
{
	static int sock_destroy = -1;
	char line[PATH_MAX + 256];

	if (sock_destroy < 0)
		sock_destroy = vigil_kernel_has_kfunc("bpf_sock_destroy");
	if (r->n_interfaces && !vigil_kernel_has_tcx()) {
		snprintf(line, sizeof(line), "%s:%u: warning: rule '%s': this kernel has no TCX "
			 "links (6.6+): its interfaces get clsact filters, removed when vigild stops",
			 r->file, r->line, r->name);
		warn_line(out, line);
	}
	if (r->action == VIGIL_ACT_RESET && r->n_netns && !sock_destroy) {
		snprintf(line, sizeof(line), "%s:%u: warning: rule '%s': this kernel has no "
			 "bpf_sock_destroy (6.5+): flows are reset by packets, live local sockets "
			 "are not destroyed", r->file, r->line, r->name);
		warn_line(out, line);
	}
}

/* Rules that can match nothing where they stand (lib/policy_warn.h). */
static void warn_unreachable(const struct vigil_control *c, const struct vigil_rule *r,
			     struct vigil_buf *out)
{
	const char *why = vigil_rule_unreachable(&c->policy->in_force, r, c->packet_path);
	char line[PATH_MAX + 512];

	if (!why)
		return;
	snprintf(line, sizeof(line), "%s:%u: warning: rule '%s': %s, and vigild has no "
		 "--enforce-on: it matches nothing", r->file, r->line, r->name, why);
	warn_line(out, line);
}

/* The warnings of every load, per rule: what this kernel lacks for it, a
 * rule that can match nothing, and rules that would cut vigild off from its
 * own work: refusing its stream to a collector (--send), or scoped to the
 * cgroup vigild runs in. Warned about, not refused (an operator may mean
 * it): logged, and added to out when a reply is being written. The control socket is a unix socket, which
 * no rule can match, so it needs no check. */
static void warn_rules(struct vigil_control *c, struct vigil_buf *out)
{
	const struct vigil_policy *p = &c->policy->in_force;
	char own[PATH_MAX], line[PATH_MAX + 256];
	bool know_own = !own_cgroup(own, sizeof(own));

	for (unsigned i = 0; i < p->n_rules; i++) {
		const struct vigil_rule *r = &p->rules[i];
		bool mine = !r->cgroup || (know_own && cgroup_holds(r->cgroup, own));

		warn_kernel(r, out);
		warn_unreachable(c, r, out);
		if (r->cgroup && mine) {
			snprintf(line, sizeof(line), "%s:%u: warning: rule '%s' covers vigild's own "
				 "cgroup (%s): its connects that the rule matches are refused",
				 r->file, r->line, r->name, own);
			warn_line(out, line);
		}
		for (unsigned j = 0; j < c->n_peers && mine; j++) {
			if (!vigil_rule_covers_peer(r, &c->peers[j], c->peer_socktype[j]))
				continue;
			snprintf(line, sizeof(line), "%s:%u: warning: rule '%s' (%s) covers vigild's "
				 "stream to %s (--send)", r->file, r->line, r->name,
				 vigil_policy_action_name(r->action), c->peer_url[j]);
			warn_line(out, line);
		}
	}
}

int vigil_control_check(char *const *files, unsigned n)
{
	char why[1024];
	int err = vigil_policy_check(files, n, why, sizeof(why));

	return err ? vlog_refuse(err, "policy refused: %s", why) : 0;
}

int vigil_control_start(struct vigil_control *c, const char *pin_dir, struct vigil_policy_state *p,
			volatile sig_atomic_t *hup)
{
	c->fd = -1;
	c->hup = hup;
	c->policy = p;
	return open_socket(c, pin_dir);
}

int vigil_control_enforce(struct vigil_control *c, char *const *files, unsigned n)
{
	char why[1024];
	int err = vigil_policy_apply(c->policy, files, n, why, sizeof(why));

	if (err)
		return vlog_refuse(err, "policy refused: %s", why);
	warn_rules(c, NULL);
	return 0;
}

static void list_rules(struct vigil_control *c, struct vigil_buf *out)
{
	const struct vigil_policy *p = &c->policy->in_force;

	vbuf_printf(out, "%-3s %-20s %-7s %-8s %-5s %-11s %10s %10s %10s  %s\n", "id", "name",
		    "action", "dir", "proto", "port", "hits", "replies", "suppressed", "match");
	for (unsigned i = 0; i < p->n_rules; i++) {
		const struct vigil_rule *r = &p->rules[i];
		struct vigil_rule_stats st;
		char port[16] = "any";

		vigil_policy_rule_stats(c->policy, i, &st);
		if (r->port_lo != 0 || r->port_hi != 65535)
			snprintf(port, sizeof(port), r->port_lo == r->port_hi ? "%u" : "%u-%u",
				 r->port_lo, r->port_hi);
		vbuf_printf(out, "%-3u %-20s %-7s %-8s %-5s %-11s %10" PRIu64 " %10" PRIu64
			    " %10" PRIu64 " ", c->policy->slot[i], r->name, vigil_policy_action_name(r->action),
			    vigil_policy_dir_name(r->direction), vigil_policy_proto_name(r->protocol),
			    port, (uint64_t)st.hits, (uint64_t)st.replies,
			    (uint64_t)(st.replies_suppressed + st.events_suppressed));
		if (!r->n_cidrs)
			vbuf_puts(out, " any address");
		for (unsigned j = 0; j < r->n_cidrs; j++) {
			char cidr[64];

			vigil_cidr_format(&r->cidrs[j], cidr, sizeof(cidr));
			vbuf_printf(out, " %s", cidr);
		}
		for (unsigned j = 0; j < r->n_interfaces; j++)
			vbuf_printf(out, " if=%s", r->interfaces[j]);
		for (unsigned j = 0; j < r->n_netns; j++)
			vbuf_printf(out, " netns=%s", r->netns[j]);
		if (r->cgroup)
			vbuf_printf(out, " cgroup=%s", r->cgroup);
		vbuf_printf(out, "  (%s:%u)\n", r->file, r->line);
	}
	vigil_list_proc_rules(c->policy, out, false);
	if (!p->n_rules && !p->n_prules)
		vbuf_puts(out, "no rules in force\n");
}

/* Appends ,"key":["a","b"] to the object w has open (not its first member). */
static void json_list(struct vigil_buf *out, const char *key, char **items, unsigned n)
{
	vbuf_printf(out, ",\"%s\":[", key);
	for (unsigned i = 0; i < n; i++) {
		vbuf_puts(out, i ? ",\"" : "\"");
		json_escape(out, items[i], strlen(items[i]));
		vbuf_putc(out, '"');
	}
	vbuf_putc(out, ']');
}

/* The same as list_rules, one JSON object a line, for scripts. */
static void list_rules_json(struct vigil_control *c, struct vigil_buf *out)
{
	const struct vigil_policy *p = &c->policy->in_force;

	for (unsigned i = 0; i < p->n_rules; i++) {
		const struct vigil_rule *r = &p->rules[i];
		struct vigil_rule_stats st;
		struct jw w;

		vigil_policy_rule_stats(c->policy, i, &st);
		jw_begin(&w, out);
		jw_obj(&w, NULL);
		jw_u64(&w, "id", c->policy->slot[i]);
		jw_cstr(&w, "name", r->name);
		jw_cstr(&w, "action", vigil_policy_action_name(r->action));
		jw_cstr(&w, "direction", vigil_policy_dir_name(r->direction));
		jw_cstr(&w, "protocol", vigil_policy_proto_name(r->protocol));
		jw_u64(&w, "port_lo", r->port_lo);
		jw_u64(&w, "port_hi", r->port_hi);
		if (r->cgroup)
			jw_cstr(&w, "cgroup", r->cgroup);
		jw_cstr(&w, "file", r->file);
		jw_u64(&w, "line", r->line);
		jw_u64(&w, "hits", st.hits);
		jw_u64(&w, "replies", st.replies);
		jw_u64(&w, "replies_suppressed", st.replies_suppressed);
		jw_u64(&w, "events", st.events);
		jw_u64(&w, "events_suppressed", st.events_suppressed);
		vbuf_puts(out, ",\"cidr\":[");	/* addresses need no escaping */
		for (unsigned j = 0; j < r->n_cidrs; j++) {
			char cidr[64];

			vigil_cidr_format(&r->cidrs[j], cidr, sizeof(cidr));
			vbuf_printf(out, "%s\"%s\"", j ? "," : "", cidr);
		}
		vbuf_putc(out, ']');
		json_list(out, "interfaces", r->interfaces, r->n_interfaces);
		json_list(out, "netns", r->netns, r->n_netns);
		jw_end(&w);
		vbuf_putc(out, '\n');
	}
	vigil_list_proc_rules(c->policy, out, true);
}

/* Serves one request on conn; the reply goes in out (status byte first). */
static void serve(struct vigil_control *c, const char *req, size_t len, struct vigil_buf *out)
{
	char *args[VIGIL_POLICY_FILES_MAX], why[1024];
	const char *verb = req, *p = req + strlen(req) + 1, *end = req + len;
	unsigned n = 0;
	int err;

	while (p < end && n < VIGIL_POLICY_FILES_MAX) {
		args[n++] = (char *)p;
		p += strlen(p) + 1;
	}
	if (p < end) {
		vbuf_printf(out, "1at most %d policy files\n", VIGIL_POLICY_FILES_MAX);
		return;
	}
	if (!strcmp(verb, "streams")) {
		vbuf_putc(out, '0');
		if (c->describe_streams)
			c->describe_streams(c->streams_ctx, out);
		return;
	}
	if (!strcmp(verb, "list") || !strcmp(verb, "list-json")) {
		vbuf_putc(out, '0');
		(verb[4] ? list_rules_json : list_rules)(c, out);
		return;
	}
	if (!strcmp(verb, "load") && n)
		err = vigil_policy_apply(c->policy, args, n, why, sizeof(why));
	else if (!strcmp(verb, "unload") && n)
		err = vigil_policy_unload(c->policy, args, n, why, sizeof(why));
	else if (!strcmp(verb, "reload"))
		err = vigil_policy_reload(c->policy, why, sizeof(why));
	else
		err = -EINVAL, snprintf(why, sizeof(why), "unknown request '%.32s'", verb);
	if (err) {
		vlog_refuse(err, "policy %s refused: %s", verb, why);
		vbuf_printf(out, "1%s (the policy in force is unchanged)\n", why);
	} else {
		vbuf_printf(out, "0%u rules in force\n",
			    c->policy->in_force.n_rules + c->policy->in_force.n_prules);
		warn_rules(c, out);
	}
}

/* Monotonic milliseconds: a waiting client's deadline. */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop_client(struct vigil_control *c, unsigned i)
{
	if (c->clients[i].fd >= 0)
		close(c->clients[i].fd);
	c->clients[i] = c->clients[--c->n_clients];
}

/* An "events" request: client i becomes a subscriber (its fd moves to
 * c->subs), or is told why not. */
static void subscribe(struct vigil_control *c, unsigned i, const char *req, size_t len)
{
	const char *form = req + sizeof("events");
	enum vigil_sub_form f = VIGIL_SUB_VIGIL;
	const char *why = NULL;
	char reply[128];

	if ((size_t)(form - req) < len && !strcmp(form, "tetragon"))
		f = VIGIL_SUB_TETRAGON;
	if (!c->subs)
		why = "this agent serves no event subscribers";
	else if (c->subs->n == VIGIL_SUBSCRIBERS_MAX)
		why = "every subscriber place is taken (" STR(VIGIL_SUBSCRIBERS_MAX) ")";
	if (!why) {
		if (send(c->clients[i].fd, "0", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 &&
		    !vigil_subscribers_add(c->subs, c->clients[i].fd, f))
			c->clients[i].fd = -1;	/* the subscriber's now */
		return;
	}
	snprintf(reply, sizeof(reply), "1%s\n", why);
	send(c->clients[i].fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Reads the request of client i if it has come, serves it and closes the
 * connection; never waits. Returns true when the client is done with. */
static bool try_serve(struct vigil_control *c, unsigned i, uint64_t now)
{
	struct vigil_buf out = {};
	int conn = c->clients[i].fd;
	ssize_t n = recv(conn, c->req, VIGIL_CONTROL_MSG_MAX - 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		if (now < c->clients[i].deadline_ms)
			return false;
		vlog_info("control: a client sent no request within %d ms: dropped",
			  VIGIL_CONTROL_CLIENT_MS);
		return true;
	}
	if (n <= 0)
		return true;
	c->req[n] = 0;
	if (!strcmp(c->req, "events")) {
		subscribe(c, i, c->req, n);
		return true;
	}
	serve(c, c->req, n, &out);
	if (!out.oom && send(conn, out.p, out.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		vlog_err(-errno, "control: cannot reply");
	vbuf_free(&out);
	return true;
}

/* Takes a new connection: checked for root at once, then it waits in
 * clients[] for its request. When every place is taken, the oldest client
 * makes room: idle connections cannot lock out the operator. */
static void admit(struct vigil_control *c, int conn, uint64_t now)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		vlog_info("control: refused a request from uid %u", (unsigned)cred.uid);
		close(conn);
		return;
	}
	if (c->n_clients == VIGIL_CONTROL_CLIENTS) {
		unsigned oldest = 0;

		for (unsigned i = 1; i < c->n_clients; i++)
			if (c->clients[i].deadline_ms < c->clients[oldest].deadline_ms)
				oldest = i;
		drop_client(c, oldest);
	}
	c->clients[c->n_clients++] = (struct vigil_control_client){
		.fd = conn, .deadline_ms = now + VIGIL_CONTROL_CLIENT_MS };
}

/* A connection waits. Asked first because a refused accept4 is no cheap
 * answer: the kernel makes the new socket and its file before it looks
 * at the queue (about 20 us here, 20 times a second for an idle socket). */
static bool connection_waits(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

void vigil_control_tick(struct vigil_control *c)
{
	uint64_t now = now_ms();
	char why[1024];
	int conn;

	if (*c->hup) {
		*c->hup = 0;
		if (vigil_policy_reload(c->policy, why, sizeof(why)))
			vlog_info("SIGHUP: policy refused, the policy in force is unchanged: %s", why);
		else
			warn_rules(c, NULL);
	}
	if (!c->req && !(c->req = malloc(VIGIL_CONTROL_MSG_MAX)))
		return;
	while (c->fd >= 0 && connection_waits(c->fd) &&
	       (conn = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
		admit(c, conn, now);
	for (unsigned i = 0; i < c->n_clients;)
		if (try_serve(c, i, now))
			drop_client(c, i);
		else
			i++;
}

void vigil_control_close(struct vigil_control *c)
{
	if (c->fd >= 0) {
		close(c->fd);
		unlink(c->path);
	}
	c->fd = -1;
	while (c->n_clients)
		drop_client(c, 0);
	free(c->req);
	c->req = NULL;
}
