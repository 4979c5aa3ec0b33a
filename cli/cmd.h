/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VIGIL_CLI_CMD_H
#define VIGIL_CLI_CMD_H

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

extern const char *cli_pin_dir;

int do_status(int argc, char **argv);
int do_unpin(int argc, char **argv);
int do_drain(int argc, char **argv);
int do_policy(int argc, char **argv);

#endif
