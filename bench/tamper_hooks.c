// SPDX-License-Identifier: GPL-2.0
/*
 * bench/tamper_hooks.sh's switch: the tamper programs on hot paths (the
 * exits of open, openat, openat2; unlink, unlinkat, rename, renameat,
 * renameat2 and their exits: bpf/tamper.bpf.c), loaded against a running
 * agent's pin folder (its maps: the agent's tgid, the calls in flight) with
 * the folder as the unlink records compare it, and attached or detached on
 * command, so that storms with and without them alternate against one
 * agent. Reads "on" or "off" lines on stdin, answers each with "ok".
 *
 *   tamper_hooks PIN_DIR
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "tamper.skel.h"

#define HOT_MAX 16

static bool hot(const char *name)
{
	static const char *const hot_progs[] = { "tamper_open", "tamper_unlink", "tamper_rename" };

	for (size_t i = 0; i < sizeof(hot_progs) / sizeof(hot_progs[0]); i++)
		if (!strncmp(name, hot_progs[i], strlen(hot_progs[i])))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct bpf_link *links[HOT_MAX] = {};
	struct bpf_program *prog;
	struct tamper_bpf *t;
	char dir[PATH_MAX], line[32];
	unsigned n = 0;

	if (argc != 2 || !realpath(argv[1], dir) || strlen(dir) >= sizeof(t->rodata->vigil_pin_dir)) {
		fprintf(stderr, "usage: tamper_hooks PIN_DIR (an agent's, at most 127 bytes)\n");
		return 2;
	}
	oo.pin_root_path = argv[1];
	if (!(t = tamper_bpf__open_opts(&oo))) {
		perror("tamper_hooks: open");
		return 1;
	}
	memcpy((char *)t->rodata->vigil_pin_dir, dir, strlen(dir));
	t->rodata->vigil_pin_dir_len = strlen(dir);
	bpf_object__for_each_program(prog, t->obj)
		bpf_program__set_autoload(prog, hot(bpf_program__name(prog)));
	if (tamper_bpf__load(t)) {
		perror("tamper_hooks: load");
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		bool on = !strcmp(line, "on\n");

		for (unsigned i = 0; i < n; i++)
			bpf_link__destroy(links[i]);
		n = 0;
		bpf_object__for_each_program(prog, t->obj) {
			if (!on || !hot(bpf_program__name(prog)) || n == HOT_MAX)
				continue;
			if (!(links[n++] = bpf_program__attach(prog))) {
				perror("tamper_hooks: attach");
				return 1;
			}
		}
		printf("ok\n");
		fflush(stdout);
	}
	for (unsigned i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	tamper_bpf__destroy(t);
	return 0;
}
