/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vigild's local control socket, shared by the agent (which serves it) and
 * the CLI: a SOCK_SEQPACKET unix socket, one request and one reply per
 * connection, root only (the folder is 0700, the socket 0600, and the peer's
 * credentials are checked).
 *
 * Request: the verb and its arguments, each NUL-terminated ("load\0/a.yaml\0").
 * Reply: one status byte ('0' done, '1' refused), then text for the user.
 */
#ifndef VIGIL_CONTROL_H
#define VIGIL_CONTROL_H

#include <stddef.h>

#define VIGIL_CONTROL_DIR "/run/vigil"
#define VIGIL_CONTROL_MSG_MAX (256 * 1024)

/* The socket of the agent pinned at pin_dir: /run/vigil/<pin folder name>.sock */
int vigil_control_path(const char *pin_dir, char *out, size_t len);

#endif
