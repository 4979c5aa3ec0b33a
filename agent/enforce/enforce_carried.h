/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets carried into a cgroup a deny rule names (bpf/enforce_carried.bpf.c):
 * made outside it, so its hooks never run for them. When a policy with deny
 * rules lands, those connected to a destination the rule denies are
 * destroyed in their namespace (the root namespace only when the rule names
 * it in `netns`, as for reset), and packet sockets, which no hook covers,
 * are reported. Then again every VIGIL_CARRIED_RESCAN_S seconds while a
 * deny rule is in force, for sockets carried in since; and meanwhile, at
 * each tick, those that a task of the cgroup sent on or read from though
 * no file table holds them (an io_uring fixed file, a descriptor in flight
 * in a unix socket). docs/policy.md, "What deny covers".
 */
#ifndef VIGIL_ENFORCE_CARRIED_H
#define VIGIL_ENFORCE_CARRIED_H

#include <stdbool.h>
#include <stdint.h>

#define VIGIL_CARRIED_RESCAN_S 5

struct vigil_policy_state;

int vigil_deny_carried_init(struct vigil_policy_state *s, uint64_t ring_size);
/* A policy landed (s->carried_rescan says whether a deny rule is in force):
 * the send and receive hooks attached or detached, and with deny rules a
 * fresh scan. 0, or the first -errno. */
int vigil_deny_carried_landed(struct vigil_policy_state *s);
/* One scan of every task's open files, then the destroy passes; returns
 * how many sockets were destroyed, or -errno. fresh: the policy changed,
 * so packet sockets already reported are reported again. */
int vigil_deny_carried_scan(struct vigil_policy_state *s, bool fresh);
/* The rescan when it is due, else the sockets the send and receive hooks
 * found since the last tick (s->carried_rescan: a deny rule is in force). */
void vigil_deny_carried_tick(struct vigil_policy_state *s);
void vigil_deny_carried_close(struct vigil_policy_state *s);

#endif
