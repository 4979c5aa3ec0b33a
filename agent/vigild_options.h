/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vigild's command line: the options table (lib/opts.h) and the checks that
 * span several options. Nothing here touches the node: a refused command
 * line exits 2 before anything is opened or loaded.
 */
#ifndef VIGILD_OPTIONS_H
#define VIGILD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/loader.h"
#include "enforce/rule_maps.h"
#include "observe/net.h"
#include "stream/sink_stream.h"
#include "format_tetragon.h"
#include "ring.h"

#define VIGILD_ENFORCE_ON_MAX 16

struct vigild_options {
	bool json, compact, unpin_on_exit, no_procfs, track_flows;
	const char *config;	/* --config FILE, read after the command line */
	const char *metrics;	/* --metrics ADDR:PORT */
	bool metrics_binary;	/* --metrics-label binary */
	uint64_t metrics_binaries;	/* --metrics-binaries N */
	const char *export_file;
	uint64_t export_max_bytes;
	uint64_t export_backups;
	uint64_t export_max_age;	/* seconds; 0: no age limit */
	struct vigil_proc_budget_cfg proc_budget;	/* rate 0: none */
	const char *pin_dir;
	char pin_dir_buf[256];	/* --pin-dir without trailing slashes */
	uint64_t ring_size;
	uint64_t wakeup_bytes;
	uint64_t poll_ms;
	char node_name[256];
	double duration;	/* seconds; 0: until stopped */
	char *policy[VIGIL_POLICY_FILES_MAX];	/* --policy files */
	unsigned npolicy;
	const char *enforce_on[VIGILD_ENFORCE_ON_MAX];	/* --enforce-on NETNS/IFNAME[:xdp] */
	unsigned nenforce;
	uint64_t report_interval_s;
	uint64_t heartbeat_s;
	uint64_t max_sockets;
	struct vigil_net_opts net;
	const char *send[VIGIL_MAX_SINKS - 1];	/* --send URLs */
	unsigned nsend;
	double spool_max_mb;
	struct vigil_stream_opts stream;	/* --send-path, --spool-*: for each --send */
	struct vigil_format_opts format;	/* --export-format, --enable-process-* */
};

/* Fills o from argv: 0, VIGIL_OPTS_DONE (--help, --version answered), or
 * a negative errno after one line saying what is wrong. */
int vigild_options_parse(int argc, char **argv, struct vigild_options *o);

#endif
