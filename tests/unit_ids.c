// SPDX-License-Identifier: GPL-2.0
/* Unit checks (TAP) for the pure functions users see through: container ids
 * from cgroup paths, exec ids, times, the sequence window. */
#include <stdio.h>
#include <string.h>
#include "ids.h"
#include "seq_window.h"

static int n, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	failed |= !cond;
}

static void container(const char *path, const char *want, const char *what)
{
	char out[VIGIL_CONTAINER_ID_MAX] = "";
	size_t len = vigil_container_id(path, strlen(path), out, sizeof(out));

	ok(want ? len && !strcmp(out, want) : !len, what);
	if (want ? !len || strcmp(out, want) : len != 0)
		printf("#   %s -> '%s'\n", path, out);
}

int main(void)
{
	static struct vigil_seq_window w;
	uint64_t gaps;
	const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char buf[512], path[512];

	snprintf(path, sizeof(path), "/system.slice/docker-%s.scope", id);
	container(path, id, "docker under systemd");
	snprintf(path, sizeof(path), "/docker/%s", id);
	container(path, id, "docker with cgroupfs driver");
	snprintf(path, sizeof(path),
		 "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-%s.scope", id);
	container(path, id, "containerd under kubepods");
	snprintf(path, sizeof(path), "/kubepods/besteffort/pod1234/%s", id);
	container(path, id, "containerd with cgroupfs driver");
	snprintf(path, sizeof(path), "/kubepods.slice/crio-%s.scope", id);
	container(path, id, "CRI-O");
	snprintf(path, sizeof(path), "/machine.slice/libpod-%s.scope/container", id);
	container(path, id, "podman, innermost matching component");
	container("/machine.slice/machine-web1.scope", "web1", "systemd-nspawn machine name");
	container("/user.slice/user-0.slice/session-1.scope", NULL, "a login session is no container");
	snprintf(path, sizeof(path), "/docker-%.63s.scope", id);
	container(path, NULL, "63 hex digits are no id");
	container("", NULL, "empty path");

	vigil_exec_id(buf, sizeof(buf), "kind-control-plane", 11428615636901ULL, 51583);
	ok(!strcmp(buf, "a2luZC1jb250cm9sLXBsYW5lOjExNDI4NjE1NjM2OTAxOjUxNTgz"),
	   "exec id as Tetragon builds it");
	vigil_rfc3339(buf, sizeof(buf), 1000000007ULL, 1764754785LL * 1000000000LL);
	ok(!strcmp(buf, "2025-12-03T09:39:46.000000007Z"), "RFC 3339 with nanoseconds");
	{
		/* Three seconds in turn through the two-second date cache. */
		static const char *const want[] = { "2025-12-03T09:39:47.5", "2025-12-04T00:00:00.0",
						    "2025-12-03T09:39:46.0" };
		const uint64_t at[] = { 1500000000ULL, 51614000000000ULL, 0 };
		bool same = true;

		for (int round = 0; round < 3; round++)
			for (int i = 0; i < 3; i++) {
				vigil_rfc3339(buf, sizeof(buf), at[i] + 1000000000ULL, 1764754785LL * 1000000000LL);
				same &= !strncmp(buf, want[i], strlen(want[i]));
			}
		ok(same, "RFC 3339: dates of alternating seconds stay right");
	}
	/* Times past what int64 nanoseconds hold: no overflow, pinned ends. */
	vigil_rfc3339(buf, sizeof(buf), (uint64_t)INT64_MAX - 5, 1764754785LL * 1000000000LL);
	ok(!strcmp(buf, "2262-04-11T23:47:16.854775807Z"), "RFC 3339: a time past 2262 is pinned");
	vigil_rfc3339(buf, sizeof(buf), UINT64_MAX, INT64_MAX);
	ok(!strcmp(buf, "2262-04-11T23:47:16.854775807Z"), "RFC 3339: the largest time is pinned");
	vigil_rfc3339(buf, sizeof(buf), 5, -1000000000LL);
	ok(!strcmp(buf, "1970-01-01T00:00:00.000000000Z"), "RFC 3339: a time before 1970 is pinned");
	ok(!strcmp(vigil_signal_name(9, buf, sizeof(buf)), "SIGKILL") &&
	   vigil_signal_name(0, buf, sizeof(buf)) == NULL, "signal names");

	for (uint64_t s = 100; s < 200000; s++)
		if (s % 1000 != 7)
			vigil_seq_window_add(&w, s, &gaps);
	ok(w.gaps + vigil_seq_window_open_gaps(&w) == 199, "sequence gaps counted once each");
	ok(!vigil_seq_window_add(&w, 199998, &gaps) && w.dups == 1, "a duplicate is refused");
	ok(vigil_seq_window_add(&w, 199007, &gaps), "a late record inside the window is new, not a duplicate");
	ok(w.gaps + vigil_seq_window_open_gaps(&w) == 198, "and it closes its gap");
	vigil_seq_window_add(&w, 10000000, &gaps);
	ok(w.gaps + vigil_seq_window_open_gaps(&w) == 198 + (10000000 - 200000),
	   "a jump far past the window counts every number skipped, once");

	printf("1..%d\n", n);
	return failed;
}
