/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tells systemd how a Type=notify service stands (sd_notify(3)'s
 * protocol, without libsystemd): one datagram to $NOTIFY_SOCKET. Does
 * nothing when the variable is unset, as outside systemd.
 */
#ifndef VIGIL_SD_NOTIFY_H
#define VIGIL_SD_NOTIFY_H

/* state: "READY=1", "STOPPING=1", "RELOADING=1", "STATUS=...". 1 sent,
 * 0 no socket to send to, -errno. */
int vigil_sd_notify(const char *state);

#endif
