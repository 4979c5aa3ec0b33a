/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live local sockets destroyed when a reset rule lands
 * (bpf/enforce_sockdestroy.bpf.c), in each network namespace the rule names
 * and in no other: the root namespace only when a rule names it.
 */
#ifndef VIGIL_ENFORCE_SOCKDESTROY_H
#define VIGIL_ENFORCE_SOCKDESTROY_H

#include <stddef.h>
#include <stdint.h>

struct vigil_policy_state;
struct vigil_rule;

int vigil_sock_destroy_init(struct vigil_policy_state *s, uint64_t ring_size);
/* Destroys the sockets whose first matching rule is rule id (a reset rule
 * already in the maps); returns how many, or -errno. */
int vigil_sock_destroy_rule(struct vigil_policy_state *s, const struct vigil_rule *r, unsigned id);
void vigil_sock_destroy_close(struct vigil_policy_state *s);

#endif
