// SPDX-License-Identifier: GPL-2.0
/*
 * Loads the BPF object OBJ, attaches its program PROG where its section
 * says and pins the link at PATH, then exits: the pin holds the program on
 * its hook (tests/tamper_proc.t puts another build's hook under a vigil
 * link's name this way).
 *   pin_hook OBJ PROG PATH
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	int err;

	if (argc != 4) {
		fprintf(stderr, "usage: pin_hook OBJ PROG PATH\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "pin_hook: cannot load %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "pin_hook: cannot attach %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	err = bpf_link__pin(link, argv[3]);
	if (err)
		fprintf(stderr, "pin_hook: cannot pin %s: %s\n", argv[3], strerror(-err));
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return err ? 1 : 0;
}
