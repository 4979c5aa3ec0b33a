/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tamper programs (bpf/tamper.bpf.c): loaded and attached by pinned
 * links at each start (left as they run when already pinned) and told the
 * agent's tgid; their links stay pinned, so they record what is done to
 * the agent also after it is gone. The check of opens against the agent's
 * /proc files moves into a file rule's hook while one is attached to the
 * same call (bpf/lib/tamper.bpf.h): the agent keeps the programs loaded
 * to attach tamper's own open hooks again when it moves back.
 */
#ifndef VIGIL_TAMPER_H
#define VIGIL_TAMPER_H

#include <stdint.h>

struct vigil_tamper_progs;

/* *out is set (NULL on error) to close with vigil_tamper_close. 0 or a
 * negative errno, logged. */
int vigil_tamper_start(struct vigil_tamper_progs **out, const char *pin_dir, uint64_t ring_size);
void vigil_tamper_close(struct vigil_tamper_progs *t);
/* As soon as the pin folder is this agent's (locked): the running tamper
 * programs, an earlier agent's, take this process for the agent, so
 * that its own start (pins, map writes) is not recorded as tampering.
 * Nothing to do in a folder without them. 0 or a negative errno, logged. */
int vigil_tamper_claim(const char *pin_dir);

/* The open calls (bits 1 << VIGIL_VERB_OPEN .. _CREAT; others ignored)
 * whose opens the file rules' hooks check: hooks the caller has attached,
 * running this build's programs, kept attached until it calls this again
 * without them. For each call that moves, both hooks check for an RCU
 * grace period (tamper's own attached again first when it takes the
 * check back), then one; tamper's own hook of a call the rule's hook
 * checks is unpinned. Without t (no tamper programs), nothing moves.
 * 0 or a negative errno, logged; on error every call is still checked
 * (a call whose own hook would not attach stays with the rule's hook). */
int vigil_tamper_fold_opens(struct vigil_tamper_progs *t, uint32_t verbs);
/* The calls whose opens the file rules' hooks check now (a previous
 * agent's choice, when its links stay pinned). */
uint32_t vigil_tamper_folded(const struct vigil_tamper_progs *t);

#endif
