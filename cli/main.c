// SPDX-License-Identifier: GPL-2.0
/*
 * vigil: the command line. One function per verb (do_<verb>), looked up in
 * a table, as bpftool does. Reads what vigild pinned; needs no running agent.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <vigil/events.h>
#include "cmd.h"
#include "log.h"
#include "pins.h"
#include "version.h"

const char *cli_pin_dir = VIGIL_PIN_DIR_DEFAULT;

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "status", do_status, "show the ring, sequence and loss counters" },
	{ "unpin", do_unpin, "remove vigil's pins: detach its programs, free its ring ([--force] while vigild runs)" },
	{ "drain", do_drain, "read the events waiting in the pinned ring out to a file (-o FILE)" },
	{ "policy", do_policy, "check, load, unload, reload or list policies (check FILE... | load FILE... | unload FILE... | reload | list [--json])" },
	{ "events", do_events, "follow vigild's events, or read JSON events from a file or stdin ([--compact|--json|--tetragon] [--kind K]... [--binary B] [--pid P] [--namespace NS] [FILE])" },
	{ "help", do_help, "this text" },
	{ NULL, NULL, NULL },
};

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: vigil [--pin-dir DIR] COMMAND [ARGS]\n"
	       "       vigil --version\n\nCommands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		printf("  %-8s %s\n", c->name, c->help);
	printf("\nOptions:\n"
	       "  --pin-dir DIR  vigild's pin folder (default " VIGIL_PIN_DIR_DEFAULT ")\n"
	       "  -h, --help     this text\n"
	       "  -V, --version  version and event schema\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	int c;

	vlog_prog = "vigil";
	opterr = 0;	/* our own message, named as every other */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': cli_pin_dir = optarg; break;
		case 'h': return do_help(0, NULL);
		case 'V':
			printf("vigil %s (event schema %u.%u)\n", VIGIL_VERSION, VIGIL_SCHEMA_MAJOR,
			       VIGIL_SCHEMA_MINOR);
			return 0;
		default:
			vlog_usage("unrecognized option '%s' (try 'vigil help')", argv[optind - 1]);
			return VIGIL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		do_help(0, NULL);
		return VIGIL_EXIT_USAGE;
	}
	for (const struct cmd *cmd = cmds; cmd->name; cmd++)
		if (!strcmp(cmd->name, argv[optind]))
			return vigil_exit_status(cmd->fn(argc - optind, argv + optind));
	vlog_usage("unknown command '%s' (try 'vigil help')", argv[optind]);
	return VIGIL_EXIT_USAGE;
}
