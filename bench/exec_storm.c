// SPDX-License-Identifier: GPL-2.0
/*
 * A fork+exec storm: N short processes, one after the other, each exec'ing
 * a tiny binary and exiting. Prints the wall time in seconds. The agent's
 * cost shows as the ratio of this time with and without vigild running
 * (bench/exec_storm.sh runs both, interleaved).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	const char *bin = argc > 2 ? argv[2] : "/bin/true";
	struct timespec a, b;

	if (n <= 0 || n > 1000000) {
		fprintf(stderr, "usage: exec_storm [COUNT (1..1000000)] [BINARY]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			execl(bin, bin, "storm", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "exec_storm: child failed\n");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
