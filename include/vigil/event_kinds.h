/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every event kind, once: X(ID, NAME, STRUCT, VARIABLE, CHECK, FORMAT,
 * TETRAGON).
 *   NAME      the kind's short name: counters, logs, docs
 *   STRUCT    its layout: its size, or with VARIABLE 1 its minimum (strings
 *             follow)
 *   CHECK     what its content must hold, past type and size (NULL: nothing
 *             more), run on every record before any field is read
 *   FORMAT    vigil's JSON and the compact line (also keeps the process
 *             cache); every kind has one, or it does not build
 *   TETRAGON  the line in Tetragon's form (NULL: none, docs/events.md)
 * The functions are user space's (lib/event_format.h); BPF only uses the
 * structs. From this list come the stream hello's type table
 * (lib/stream.c), the check and dispatch of every record and the counts by
 * kind (lib/event_format.c), and the list the docs are checked against
 * (tests/event_kinds.c, tests/stream_schema.t). A new kind is a line here,
 * its struct, its functions, and a new minor schema version (events.h); a
 * changed struct is a new major. Either is a new line in
 * tests/schema_digests.
 */
#ifndef VIGIL_EVENT_KINDS_H
#define VIGIL_EVENT_KINDS_H

#include <vigil/events.h>	/* and the network and enforcement kinds */

#define VIGIL_EVENT_KINDS(X)								\
	X(VIGIL_EV_EXEC, exec, vigil_exec, 1, vigil_check_exec, vigil_format_exec,		\
	  vigil_tetragon_exec)									\
	X(VIGIL_EV_EXIT, exit, vigil_exit, 0, NULL, vigil_format_exit, vigil_tetragon_exit)	\
	X(VIGIL_EV_FORK, fork, vigil_fork, 0, NULL, vigil_format_fork, NULL)			\
	X(VIGIL_EV_THROTTLE, throttle, vigil_throttle, 0, NULL, vigil_format_throttle,		\
	  vigil_tetragon_throttle)								\
	X(VIGIL_EV_LOSS, loss, vigil_loss, 0, NULL, vigil_format_loss, vigil_tetragon_loss)	\
	X(VIGIL_EV_CONNECT, connect, vigil_conn, 0, vigil_check_conn, vigil_format_conn,	\
	  vigil_tetragon_conn)									\
	X(VIGIL_EV_ACCEPT, accept, vigil_conn, 0, vigil_check_conn, vigil_format_conn,		\
	  vigil_tetragon_conn)									\
	X(VIGIL_EV_LISTEN, listen, vigil_conn, 0, vigil_check_conn, vigil_format_conn,		\
	  vigil_tetragon_conn)									\
	X(VIGIL_EV_CLOSE, close, vigil_close, 0, vigil_check_conn, vigil_format_close,		\
	  vigil_tetragon_close)									\
	X(VIGIL_EV_RESET, reset, vigil_reset, 0, vigil_check_conn, vigil_format_reset,		\
	  vigil_tetragon_reset)									\
	X(VIGIL_EV_REPORT_PROC, report_proc, vigil_report_proc, 0, NULL,			\
	  vigil_format_report_proc, vigil_tetragon_report_proc)					\
	X(VIGIL_EV_REPORT_REMOTE, report_remote, vigil_report_remote, 0, vigil_check_report_remote,	\
	  vigil_format_report_remote, vigil_tetragon_report_remote)				\
	X(VIGIL_EV_REPORT_END, report_end, vigil_report_end, 0, NULL, vigil_format_report_end,	\
	  vigil_tetragon_report_end)								\
	X(VIGIL_EV_HEARTBEAT, heartbeat, vigil_heartbeat, 0, NULL, vigil_format_heartbeat, NULL)	\
	X(VIGIL_EV_BLIND, blind, vigil_blind, 0, NULL, vigil_format_blind, NULL)		\
	X(VIGIL_EV_TAMPER, tamper, vigil_tamper, 0, NULL, vigil_format_tamper, NULL)		\
	X(VIGIL_EV_PROG_RUNS, prog_runs, vigil_prog_runs, 0, NULL, vigil_format_prog_runs, NULL)	\
	X(VIGIL_EV_HEALTH, health, vigil_health, 1, vigil_check_health, vigil_format_health, NULL)	\
	X(VIGIL_EV_TAMPER_PIN, tamper_pin, vigil_tamper_pin, 0, NULL, vigil_format_tamper_pin,	\
	  NULL)											\
	X(VIGIL_EV_ENFORCE, enforce, vigil_enforce, 0, vigil_check_enforce, vigil_format_enforce,\
	  vigil_tetragon_enforce)								\
	X(VIGIL_EV_POLICY_HIT, policy_hit, vigil_policy_hit, 1, vigil_check_policy_hit,		\
	  vigil_format_policy_hit, vigil_tetragon_policy_hit)

#endif
