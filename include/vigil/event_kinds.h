/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every event kind, once: X(ID, STRUCT, VARIABLE). STRUCT is the kind's
 * layout (its size, or with VARIABLE 1 its minimum: strings follow). From
 * this list come the stream hello's type table (lib/stream.c), the size
 * check of every record (lib/event_format.c), and the list the docs are
 * checked against (tests/event_kinds.c, tests/stream_schema.t). A new kind
 * is a line here, its struct, its formatter, and a new minor schema version
 * (events.h); a changed struct is a new major.
 */
#ifndef VIGIL_EVENT_KINDS_H
#define VIGIL_EVENT_KINDS_H

#include <vigil/events.h>	/* and the network and enforcement kinds */

#define VIGIL_EVENT_KINDS(X)						\
	X(VIGIL_EV_EXEC, vigil_exec, 1)					\
	X(VIGIL_EV_EXIT, vigil_exit, 0)					\
	X(VIGIL_EV_FORK, vigil_fork, 0)					\
	X(VIGIL_EV_THROTTLE, vigil_throttle, 0)				\
	X(VIGIL_EV_LOSS, vigil_loss, 0)					\
	X(VIGIL_EV_CONNECT, vigil_conn, 0)				\
	X(VIGIL_EV_ACCEPT, vigil_conn, 0)				\
	X(VIGIL_EV_LISTEN, vigil_conn, 0)				\
	X(VIGIL_EV_CLOSE, vigil_close, 0)				\
	X(VIGIL_EV_RESET, vigil_reset, 0)				\
	X(VIGIL_EV_REPORT_PROC, vigil_report_proc, 0)			\
	X(VIGIL_EV_REPORT_REMOTE, vigil_report_remote, 0)		\
	X(VIGIL_EV_REPORT_END, vigil_report_end, 0)			\
	X(VIGIL_EV_ENFORCE, vigil_enforce, 0)

#endif
