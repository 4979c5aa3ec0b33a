// SPDX-License-Identifier: GPL-2.0
/* prog_verify: loads each program of each BPF object alone and prints one
 * line per program: object, program, whether the running kernel's verifier
 * accepts it, its processed instruction count, and on refusal the verifier's
 * last words. docs/kernels.md compares kernels with it (tests/vm/run.sh).
 * Each program is loaded with all others of its object off, so one refusal
 * does not hide the rest; maps are created fresh and never pinned. Read-only
 * settings keep their defaults, so a count can differ somewhat from what
 * vigild's own settings give. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_SIZE (16u << 20)

static char *log_buf;
static char libbpf_said[512];	/* libbpf's first warning of a load */

/* The verifier's count on this kernel: "processed N insns" in its log. */
static long processed(const char *log)
{
	const char *p = strstr(log, "processed ");

	return p ? strtol(p + strlen("processed "), NULL, 10) : -1;
}

/* The last non-empty lines of the log before its statistics, one line. */
static void last_words(const char *log, char *out, size_t size)
{
	const char *end = strstr(log, "processed ");
	const char *p;
	int lines = 0;

	if (!end)
		end = log + strlen(log);
	p = end;
	while (p > log && lines < 2) {
		p--;
		if (*p == '\n' && p + 1 < end)
			lines++;
	}
	if (*p == '\n')
		p++;
	snprintf(out, size, "%.*s", (int)(end - p), p);
	for (char *c = out; *c; c++)
		if (*c == '\n')
			*c = '|';
}

/* Opens path with only program number n to load (*want), maps unpinned and
 * sized. NULL when it cannot be opened or has no program n. */
static struct bpf_object *open_one(const char *path, int n, struct bpf_program **want)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct bpf_map *map;
	int i = 0;

	if (!obj) {
		fprintf(stderr, "prog_verify: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*want = NULL;
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_autoload(prog, i == n);
		if (i++ == n)
			*want = prog;
	}
	if (!*want) {
		bpf_object__close(obj);
		return NULL;
	}
	/* Sizes the agent sets at start: any valid one does here. */
	bpf_object__for_each_map(map, obj) {
		enum bpf_map_type t = bpf_map__type(map);

		/* Local storage has no size (it lives with its task or socket). */
		if (bpf_map__max_entries(map) == 0 && t != BPF_MAP_TYPE_TASK_STORAGE &&
		    t != BPF_MAP_TYPE_SK_STORAGE && t != BPF_MAP_TYPE_INODE_STORAGE)
			bpf_map__set_max_entries(map, t == BPF_MAP_TYPE_RINGBUF ? 1u << 20 : 1024);
		bpf_map__set_pin_path(map, NULL);
	}
	return obj;
}

/* Loads program number n of path alone; prints its line. Returns 0 when the
 * kernel accepts it, 1 when refused, -1 when there is no such program. */
static int verify_one(const char *path, int n)
{
	struct bpf_program *want;
	struct bpf_object *obj = open_one(path, n, &want);
	char words[512];
	int err;

	if (!obj)
		return -1;
	log_buf[0] = 0;
	bpf_program__set_log_buf(want, log_buf, LOG_SIZE);
	bpf_program__set_log_level(want, 4);	/* statistics only */
	err = bpf_object__load(obj);
	if (!err) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		long insns = processed(log_buf);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(want), &info, &len) && info.verified_insns)
			insns = info.verified_insns;
		printf("%s\t%s\tok\t%ld\n", path, bpf_program__name(want), insns);
		bpf_object__close(obj);
		return 0;
	}
	bpf_object__close(obj);

	/* Refused: again with the full log, for the reason. */
	obj = open_one(path, n, &want);
	if (!obj)
		return -1;
	log_buf[0] = 0;
	libbpf_said[0] = 0;
	bpf_program__set_log_buf(want, log_buf, LOG_SIZE);
	bpf_program__set_log_level(want, 1);
	err = bpf_object__load(obj);
	last_words(log_buf, words, sizeof(words));
	printf("%s\t%s\tREFUSED (%s)\t%ld\t%s\n", path, bpf_program__name(want), strerror(-err),
	       processed(log_buf), words[0] ? words : libbpf_said[0] ? libbpf_said : "(no log)");
	bpf_object__close(obj);
	return 1;
}

/* Keeps libbpf's first warning: why a program was refused before the
 * verifier saw it (a kfunc or tracepoint this kernel lacks). */
static int keep_first_warning(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *nl;

	if (level != LIBBPF_WARN || libbpf_said[0])
		return 0;
	vsnprintf(libbpf_said, sizeof(libbpf_said), fmt, ap);
	nl = strchr(libbpf_said, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

int main(int argc, char **argv)
{
	int refused = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s OBJECT.bpf.o...\n", argv[0]);
		return 2;
	}
	libbpf_set_print(keep_first_warning);
	log_buf = malloc(LOG_SIZE);
	if (!log_buf)
		return 1;
	for (int a = 1; a < argc; a++) {
		int r;

		for (int n = 0; (r = verify_one(argv[a], n)) >= 0; n++)
			refused += r;
	}
	free(log_buf);
	return refused ? 1 : 0;
}
