/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vigil-collector's command line: the options table (lib/opts.h) and the
 * checks that span several options. A refused command line exits 2 before
 * anything is opened.
 */
#ifndef VIGIL_COLLECTOR_OPTIONS_H
#define VIGIL_COLLECTOR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "format_tetragon.h"
#include "publish.h"

#define MAX_LISTEN 8

struct options {
	const char *listen[MAX_LISTEN];
	unsigned nlisten;
	const char *config;	/* --config FILE, read after the command line */
	const char *metrics;	/* --metrics ADDR:PORT */
	const char *export_file;
	const char *status_file;
	const char *tls_cert, *tls_key, *tls_ca;
	struct vigil_format_opts format;
	struct vigil_pub_config pub;
	const char *pub_opt;	/* a --publish-* option given, for its check */
	uint64_t max_mb, backups, max_agents, max_conns, max_per_addr, max_handshakes;
	uint64_t proc_cache_mb, max_handshakes_all;
	double hello_timeout, frame_timeout, rebind_after, peer_timeout, forget_after;
	bool fsync;
};

/* Fills o from argv: 0, VIGIL_OPTS_DONE (--help, --version answered), or
 * a negative errno after one line saying what is wrong. stop is the flag
 * a publish waiting for JetStream gives up on. */
int collector_options_parse(int argc, char **argv, struct options *o,
			    volatile sig_atomic_t *stop);

#endif
