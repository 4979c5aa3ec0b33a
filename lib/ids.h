/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Names and times as users see them: Tetragon-style exec ids, RFC 3339
 * times, container ids read from cgroup paths, signal names. */
#ifndef VIGIL_IDS_H
#define VIGIL_IDS_H

#include <stddef.h>
#include <stdint.h>

#define VIGIL_EXEC_ID_MAX 512
#define VIGIL_TIME_MAX 40
#define VIGIL_CONTAINER_ID_MAX 128

/* base64("node:ktime:pid"), as Tetragon names processes. */
void vigil_exec_id(char *out, size_t outsz, const char *node, uint64_t ktime, uint32_t pid);
/* CLOCK_MONOTONIC ns to wall clock, "2026-12-03T09:19:45.123456789Z". */
void vigil_rfc3339(char *out, size_t outsz, uint64_t ktime, int64_t realtime_offset_ns);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, now. */
int64_t vigil_realtime_offset(void);
/* The container id a cgroup path names (docker, containerd, CRI-O, podman,
 * systemd-nspawn layouts), or 0 when it names none. */
size_t vigil_container_id(const char *cgroup, size_t len, char *out, size_t outsz);
/* "SIGKILL" for 9; NULL for 0. */
const char *vigil_signal_name(int sig, char *buf, size_t bufsz);

#endif
