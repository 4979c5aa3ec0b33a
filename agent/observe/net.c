// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include "core/kernel_features.h"
#include "core/loader.h"
#include "log.h"
#include "observe/net.h"
#include "net.skel.h"
#include "report.skel.h"

static int write_config(struct vigil_net *n, const struct vigil_net_opts *o)
{
	struct vigil_net_config c = {
		.flags = (o->report_only ? VIGIL_NET_REPORT_ONLY : 0) |
			 (o->no_listen ? VIGIL_NET_NO_LISTEN : 0) |
			 (o->no_loopback ? VIGIL_NET_NO_LOOPBACK : 0),
	};
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(n->net->maps.vigil_net_config), &zero, &c, 0))
		return vlog_err(-errno, "cannot write the network event settings");
	return 0;
}

/* Arms the report timer, or re-arms the one a previous agent left running
 * (its periods and counters carry on). */
static int start_reports(struct vigil_net *n, uint64_t interval_ns)
{
	struct vigil_report_start in = { .interval_ns = interval_ns };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &in, .ctx_size_in = sizeof(in));
	int err = bpf_prog_test_run_opts(bpf_program__fd(n->report->progs.report_start), &opts);

	if (err)
		return vlog_err(-errno, "cannot run report_start");
	if (opts.retval)
		return vlog_err((int)opts.retval, "cannot arm the report timer");
	return 0;
}

/* The socket table is an array of sets, so its size is memory taken up
 * front (about 80 bytes a socket): --max-sockets sets it, in whole sets,
 * and a pinned table keeps its own (vigil unpin starts afresh). The
 * programs' set count follows it; the spill hash (two entries a set,
 * allocated when used) keeps its own size if pinned. */
static int size_socket_table(struct vigil_net *n, const char *pin_dir, uint64_t size)
{
	uint64_t sets, spill = 0;
	int err;

	size = (size + VIGIL_SOCK_WAYS - 1) / VIGIL_SOCK_WAYS * VIGIL_SOCK_WAYS;
	if ((err = vigil_pinned_size(pin_dir, n->net->maps.vigil_socks, VIGIL_SOCK_WAYS, &size)) ||
	    (err = vigil_pinned_size(pin_dir, n->net->maps.vigil_socks_spill, 1, &spill)))
		return err;
	sets = (size ?: VIGIL_SOCKS_DEFAULT) / VIGIL_SOCK_WAYS;
	if ((err = bpf_map__set_max_entries(n->net->maps.vigil_socks, sets)) ||
	    (err = bpf_map__set_max_entries(n->net->maps.vigil_socks_spill, spill ?: sets * 2)))
		return vlog_err(err, "socket table size %llu refused", (unsigned long long)size);
	n->net->rodata->vigil_sock_sets = sets;
	return 0;
}

/* One of the two programs on tcp_send_reset: with the reset's reason where
 * the tracepoint passes it, else without (Debian 12's 6.1). */
static void choose_rst_out_hook(struct vigil_net *n)
{
	bool reason = vigil_kernel_tracepoint_args("tcp_send_reset") != 2;

	bpf_program__set_autoload(n->net->progs.net_rst_out, reason);
	bpf_program__set_autoload(n->net->progs.net_rst_out_noreason, !reason);
	if (!reason)
		vigil_kernel_lacks("reason in tcp_send_reset", "resets sent carry reason 0");
}

/* Before 6.3 the send/receive hooks' tracepoints do not exist: the pair is
 * not even loaded, and owners are named at accept() as with --no-io-hooks.
 * Called before the load; false when the pair is out. */
static bool io_hooks_exist(struct vigil_net *n, const struct vigil_net_opts *o)
{
	if (vigil_kernel_has_tracepoint("sock_send_length"))
		return true;
	if (!o->no_io_hooks)
		vigil_kernel_lacks("sock:sock_send_length tracepoint (6.3+)",
				   "no hook at every send and receive: an accepted socket's owner "
				   "is the process that accepted it (as --no-io-hooks)");
	bpf_program__set_autoload(n->net->progs.net_send, false);
	bpf_program__set_autoload(n->net->progs.net_recv, false);
	return false;
}

/* An accepted socket's owner is named, and its accept event written, at
 * accept() (net_accept4, net_accept: always attached); other owners at each
 * socket's first send or receive (net_send, net_recv), unless
 * --no-io-hooks. A pair an earlier agent left that this start does not
 * want is detached once the start cannot fail (vigil_net_detach_unwanted). */
static void choose_owner_hooks(struct vigil_net *n, bool io_hooks)
{
	bpf_program__set_autoattach(n->net->progs.net_send, io_hooks);
	bpf_program__set_autoattach(n->net->progs.net_recv, io_hooks);
}

int vigil_net_detach_unwanted(struct vigil_net *n, const char *pin_dir)
{
	int err = vigil_obj_detach_unwanted(n->net->obj, pin_dir);

	return err ? err : vigil_obj_detach_unwanted(n->report->obj, pin_dir);
}

int vigil_net_load(struct vigil_net *n, const struct vigil_bpf *b, const struct vigil_net_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = b->pin_dir);
	bool io_hooks;
	int err;

	memset(n, 0, sizeof(*n));
	n->net = net_bpf__open_opts(&oo);
	n->report = report_bpf__open_opts(&oo);
	if (!n->net || !n->report)
		return vlog_err(-errno, "cannot open the network BPF objects");
	if ((err = size_socket_table(n, b->pin_dir, o->max_sockets)) ||
	    (err = vigil_obj_prepare(n->net->obj, b->ring_size)) ||
	    (err = vigil_obj_prepare(n->report->obj, b->ring_size)))
		return err;
	n->net->rodata->vigil_wakeup_bytes = b->wakeup_bytes;
	n->report->rodata->vigil_wakeup_bytes = b->wakeup_bytes;
	err = libbpf_num_possible_cpus();
	if (err < 0)
		return vlog_err(err, "cannot count the possible CPUs");
	n->report->rodata->vigil_nr_cpus = err;
	io_hooks = io_hooks_exist(n, o) && !o->no_io_hooks;
	choose_rst_out_hook(n);
	if ((err = net_bpf__load(n->net)))
		return vlog_err(err, "cannot load BPF object net (run with -v for the verifier log)");
	if ((err = report_bpf__load(n->report)))
		return vlog_err(err, "cannot load BPF object report (run with -v for the verifier log)");
	/* Settings first, so programs attached now never run on stale ones. */
	if ((err = write_config(n, o)))
		return err;
	choose_owner_hooks(n, io_hooks);
	if ((err = vigil_obj_attach(n->net->obj, b->pin_dir, &n->resumed)) ||
	    (err = vigil_obj_attach(n->report->obj, b->pin_dir, &n->resumed)))
		return err;
	return start_reports(n, o->report_interval_ns);
}

#define NETNS_MAX 4096

/* A namespace that cannot be scanned is logged once and skipped: its old
 * sockets are then reported as they close only if they do I/O first. */
struct netns_scan {
	int link_fd;
	ino_t seen[NETNS_MAX];
	unsigned nseen, scanned, failed;
};

/* Runs the iterator in the namespace path names, once per namespace. */
static void scan_one(struct netns_scan *s, const char *path)
{
	char buf[64];
	struct stat st;
	int fd, it;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;	/* the process is gone */
	if (fstat(fd, &st))
		goto out;
	for (unsigned i = 0; i < s->nseen; i++)
		if (s->seen[i] == st.st_ino)
			goto out;
	if (s->nseen == NETNS_MAX) {
		if (!s->failed++)
			vlog_refuse(-E2BIG, "more than %d network namespaces: "
				 "sockets of the others are not marked", NETNS_MAX);
		goto out;
	}
	s->seen[s->nseen++] = st.st_ino;
	/* setns moves this thread only; the iterator reads the namespace of
	 * the thread that creates it. */
	if (setns(fd, CLONE_NEWNET)) {
		if (!s->failed++)
			vlog_err(-errno, "cannot enter network namespace %s", path);
		goto out;
	}
	it = bpf_iter_create(s->link_fd);
	if (it < 0) {
		if (!s->failed++)
			vlog_err(-errno, "cannot create the TCP socket iterator in %s", path);
		goto out;
	}
	while (read(it, buf, sizeof(buf)) > 0)
		;
	close(it);
	s->scanned++;
out:
	close(fd);
}

static void *scan_thread(void *arg)
{
	struct netns_scan *s = arg;
	char path[300];
	struct dirent *de;
	DIR *d;

	if ((d = opendir("/run/netns"))) {	/* named, perhaps with no process */
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
				scan_one(s, path);
			}
		closedir(d);
	}
	if (!(d = opendir("/proc")))
		return NULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		scan_one(s, path);
	}
	closedir(d);
	return NULL;
}

int vigil_net_scan_sockets(struct vigil_net *n)
{
	struct bpf_link *link = bpf_program__attach_iter(n->net->progs.net_preexisting, NULL);
	struct netns_scan *s;
	pthread_t th;
	int err;

	if (!link)
		return vlog_err(-errno, "cannot attach the TCP socket iterator");
	s = calloc(1, sizeof(*s));
	if (!s) {
		bpf_link__destroy(link);
		return vlog_refuse(-ENOMEM, "cannot scan network namespaces");
	}
	s->link_fd = bpf_link__fd(link);
	err = pthread_create(&th, NULL, scan_thread, s);
	if (err) {
		err = vlog_err(-err, "cannot start the socket scan thread");
	} else {
		pthread_join(th, NULL);
		vlog_debug("marked pre-existing TCP sockets in %u network namespaces (%u not scanned)",
			   s->scanned, s->failed);
	}
	free(s);
	bpf_link__destroy(link);
	return err;
}

void vigil_net_close(struct vigil_net *n)
{
	net_bpf__destroy(n->net);
	report_bpf__destroy(n->report);
	n->net = NULL;
	n->report = NULL;
}
