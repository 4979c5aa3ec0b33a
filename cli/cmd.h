/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VIGIL_CLI_CMD_H
#define VIGIL_CLI_CMD_H

#include <stdbool.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

extern const char *cli_pin_dir;

struct vigil_buf;
/* Sends one request to the agent of cli_pin_dir and prints its reply; the
 * reply's status byte decides the return (-EINVAL when refused). quiet: no
 * log line when no agent answers (its absence is the caller's to say). */
int cli_ask_agent(const struct vigil_buf *req, bool quiet);
/* The same, quiet, with the reply's text appended to reply, not printed. */
int cli_ask_agent_reply(const struct vigil_buf *req, struct vigil_buf *reply);

/* The pid of the agent serving cli_pin_dir's control socket, or 0 when none
 * answers. */
int cli_agent_pid(void);
/* Says why the ring at cli_pin_dir cannot be opened (err from
 * vigil_pinned_fd): not pinned, or pinned and not readable here. */
int cli_no_ring(int err);

/* `vigil policy list` with no agent: the rules pinned in cli_pin_dir
 * (cli/policy_pinned.c). */
int cli_policy_list_pinned(void);

int do_status(int argc, char **argv);
int do_unpin(int argc, char **argv);
int do_drain(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_events(int argc, char **argv);

#endif
