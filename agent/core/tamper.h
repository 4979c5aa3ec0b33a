/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tamper programs (bpf/tamper.bpf.c): loaded and attached by pinned
 * links at each start (left as they run when already pinned), told the
 * agent's tgid, and let go: they record what is done to the agent also
 * after it is gone.
 */
#ifndef VIGIL_TAMPER_H
#define VIGIL_TAMPER_H

#include <stdint.h>

/* 0 or a negative errno, logged. */
int vigil_tamper_start(const char *pin_dir, uint64_t ring_size);
/* As soon as the pin folder is this agent's (locked): the running tamper
 * programs, an earlier agent's, take this process for the agent, so
 * that its own start (pins, map writes) is not recorded as tampering.
 * Nothing to do in a folder without them. 0 or a negative errno, logged. */
int vigil_tamper_claim(const char *pin_dir);

#endif
