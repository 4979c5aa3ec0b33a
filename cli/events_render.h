/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vigil events`: which JSON lines to show, and the compact view of one.
 * Reads vigil's form and Tetragon's (docs/operations.md); a line of a kind
 * it does not know still shows, its plain members as key=value.
 */
#ifndef VIGIL_CLI_EVENTS_RENDER_H
#define VIGIL_CLI_EVENTS_RENDER_H

#include <stdbool.h>
#include <stddef.h>

struct vigil_buf;

#define EVENTS_KINDS_MAX 32

struct events_view {
	const char *kinds[EVENTS_KINDS_MAX];	/* none: every kind */
	unsigned nkinds;
	const char *binary;	/* the path, or its last part */
	const char *pid;
	const char *namespace;	/* a pod's namespace or a netns number */
	bool json;		/* the lines as they are, filtered */
	bool color;		/* ANSI colour: on a terminal only */
};

/* Appends line (a JSON event, without '\n') to out as the view shows it,
 * or nothing when the filters leave it out. -1: not a JSON object (said
 * as such in compact, left out in JSON). */
int events_render(const struct events_view *v, const char *line, size_t n, struct vigil_buf *out);

#endif
