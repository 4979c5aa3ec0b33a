/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Serves the control socket (lib/control.h) from the agent's main loop, and
 * re-reads the policy on SIGHUP: `vigil policy load|list|reload`. Requests
 * are served one at a time between ring polls; none blocks the loop long.
 */
#ifndef VIGIL_AGENT_CONTROL_H
#define VIGIL_AGENT_CONTROL_H

#include <signal.h>
#include <stdint.h>
#include "policy_state.h"

struct vigil_control {
	int fd;
	char path[108];
	struct vigil_policy_state policy;
	volatile sig_atomic_t *hup;	/* set by the SIGHUP handler */
};

/* Checks the --policy files before anything is loaded; logs what is wrong. */
int vigil_control_check(char *const *files, unsigned n);
/* Loads the enforcement objects, puts the files in force (a bad file stops
 * the start, changing nothing), and opens the control socket. */
int vigil_control_start(struct vigil_control *c, const char *pin_dir, uint64_t ring_size,
			char *const *files, unsigned n, volatile sig_atomic_t *hup);
/* Handles a pending SIGHUP and waiting requests; cheap when there are none. */
void vigil_control_tick(struct vigil_control *c);
void vigil_control_close(struct vigil_control *c);

#endif
