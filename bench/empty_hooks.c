// SPDX-License-Identifier: GPL-2.0
/*
 * Attaches bench/bpf/empty_hooks.bpf.c's programs that do nothing to the
 * hooks of exec and file rules, until SIGTERM or SIGINT (bench/proc_policy.sh,
 * configuration (a)). Prints "attached" on stderr once they are. Its links
 * are not pinned: they go with this process.
 *   empty_hooks exec|open
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_empty_hooks.skel.h"

static volatile sig_atomic_t stop;

static unsigned prog_id(const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) ? 0 : info.id;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bench_empty_hooks_bpf *skel;
	bool exec;

	if (argc != 2 || (strcmp(argv[1], "exec") && strcmp(argv[1], "open"))) {
		fprintf(stderr, "usage: empty_hooks exec|open\n");
		return 2;
	}
	exec = !strcmp(argv[1], "exec");
	skel = bench_empty_hooks_bpf__open_and_load();
	if (!skel) {
		perror("empty_hooks: load");
		return 1;
	}
	/* The hooks exec rules or file rules attach (all four file verbs). */
	struct bpf_program *progs[] = {
		skel->progs.empty_exec, skel->progs.empty_open, skel->progs.empty_openat,
		skel->progs.empty_openat2, skel->progs.empty_creat,
	};
	struct bpf_link *links[sizeof(progs) / sizeof(progs[0])] = {};
	unsigned from = exec ? 0 : 1, to = exec ? 1 : sizeof(progs) / sizeof(progs[0]);
	int rc = 0;

	for (unsigned i = from; i < to && !rc; i++)
		if (!(links[i] = bpf_program__attach(progs[i]))) {
			perror("empty_hooks: attach");
			rc = 1;
		}
	if (rc)
		goto out;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	/* The ids, for bench/proc_policy.sh's run-time figures (its own
	 * programs only: others may run on the machine). */
	fprintf(stderr, "empty_hooks: attached, programs");
	for (unsigned i = from; i < to; i++)
		fprintf(stderr, " %u", prog_id(progs[i]));
	fprintf(stderr, "\n");
	while (!stop)
		pause();
out:
	for (unsigned i = 0; i < to; i++)
		bpf_link__destroy(links[i]);
	bench_empty_hooks_bpf__destroy(skel);
	return rc;
}
