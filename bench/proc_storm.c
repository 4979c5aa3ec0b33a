// SPDX-License-Identifier: GPL-2.0
/*
 * The storms of bench/proc_policy.sh and bench/exec_storm.sh, uncapped:
 *   open: openat(AT_FDCWD, PATH, O_RDONLY) and close, PATH a file four
 *         folders below the benchmark's own (its path: 8 components)
 *   exec: fork, exec PATH (a tiny binary), wait for its exit 0
 *   unlink: unlinkat(AT_FDCWD, PATH, 0) of a PATH that does not exist
 *         (ENOENT after the walk: the smallest unlink, so the hooks'
 *         share of it is the largest)
 *   syscall: getppid, hooked by nothing (PATH is not used): what any
 *         syscall pays when syscall tracepoints are on, the traced
 *         syscall path, alone
 * THREADS threads, each doing OPS of them, one after the other. Prints one
 * line: "ops wall_s cpu_s", cpu the process's own user+system time and its
 * waited-for children's (an exec's fork, exec and exit run in the child),
 * where the BPF programs on these hooks also run: CPU per operation is
 * what a hook adds, whatever else the machine's cores are doing.
 *
 *   proc_storm open|exec|unlink|syscall THREADS OPS PATH
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *path;
static long ops;
static bool exec_mode, unlink_mode, syscall_mode;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static void *run(void *arg)
{
	(void)arg;
	for (long i = 0; i < ops; i++) {
		if (exec_mode) {
			pid_t pid = fork();
			int st;

			if (pid < 0)
				return "fork";
			if (!pid) {
				execl(path, path, "storm", (char *)NULL);
				_exit(127);
			}
			if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				return "child failed";
		} else if (syscall_mode) {
			getppid();
		} else if (unlink_mode) {
			if (!unlinkat(AT_FDCWD, path, 0))
				return "unlinkat (PATH exists)";
		} else {
			int fd = openat(AT_FDCWD, path, O_RDONLY);

			if (fd < 0)
				return "openat";
			close(fd);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	long threads;
	double t0, c0;
	int rc = 0;

	if (argc != 5 || (strcmp(argv[1], "open") && strcmp(argv[1], "exec") &&
			  strcmp(argv[1], "unlink") && strcmp(argv[1], "syscall")) ||
	    (threads = atol(argv[2])) < 1 || threads > 64 || (ops = atol(argv[3])) < 1 ||
	    ops > 100000000) {
		fprintf(stderr, "usage: proc_storm open|exec|unlink|syscall THREADS (1..64) OPS PATH\n");
		return 2;
	}
	exec_mode = !strcmp(argv[1], "exec");
	unlink_mode = !strcmp(argv[1], "unlink");
	syscall_mode = !strcmp(argv[1], "syscall");
	path = argv[4];
	t0 = now();
	c0 = cpu(RUSAGE_SELF) + cpu(RUSAGE_CHILDREN);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, run, NULL)) {
			fprintf(stderr, "proc_storm: cannot start thread %ld\n", i);
			return 1;
		}
	for (long i = 0; i < threads; i++) {
		void *err;

		pthread_join(th[i], &err);
		if (err) {
			fprintf(stderr, "proc_storm: %s failed\n", (const char *)err);
			rc = 1;
		}
	}
	printf("%ld %.6f %.6f\n", threads * ops, now() - t0,
	       cpu(RUSAGE_SELF) + cpu(RUSAGE_CHILDREN) - c0);
	return rc;
}
