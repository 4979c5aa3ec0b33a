// SPDX-License-Identifier: GPL-2.0
/* One request to the running agent over its control socket (lib/control.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "buf.h"
#include "cmd.h"
#include "control.h"
#include "log.h"

int cli_agent_pid(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred = {};
	socklen_t len = sizeof(cred);
	int fd, pid = 0;

	if (vigil_control_path(cli_pin_dir, sa.sun_path, sizeof(sa.sun_path)))
		return 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	/* The listener's credentials are the agent's; closing at once is an
	 * empty request, which the agent drops without a word. */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		pid = cred.pid;
	close(fd);
	return pid;
}

/* One request; the reply printed, or into out when out is given. */
static int ask(const struct vigil_buf *req, bool quiet, struct vigil_buf *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *reply = malloc(VIGIL_CONTROL_MSG_MAX + 1);
	int fd = -1, err;
	ssize_t n;

	if (!reply)
		return -ENOMEM;
	err = vigil_control_path(cli_pin_dir, sa.sun_path, sizeof(sa.sun_path));
	if (err) {
		if (!quiet)
			vlog_err(err, "no control socket for pin folder %s", cli_pin_dir);
		goto out;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (!quiet)
			vlog_err(err, "cannot reach vigild at %s (is it running with --pin-dir %s?)",
				 sa.sun_path, cli_pin_dir);
		goto out;
	}
	/* A question asked in passing (vigil status) does not wait long: an
	 * agent answers between two polls of its ring (--poll-ms). */
	if (quiet)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_sec = 1 },
			   sizeof(struct timeval));
	if (send(fd, req->p, req->len, 0) < 0) {
		err = vlog_err(-errno, "cannot send to vigild");
		goto out;
	}
	n = recv(fd, reply, VIGIL_CONTROL_MSG_MAX, 0);
	if (n <= 0) {
		err = n < 0 ? -errno : -EPIPE;
		if (!quiet)
			vlog_err(err, "no reply from vigild");
		goto out;
	}
	reply[n] = 0;
	if (reply[0] == '0' && out) {
		vbuf_puts(out, reply + 1);
		err = out->oom ? -ENOMEM : 0;
	} else if (reply[0] == '0') {
		fputs(reply + 1, stdout);
	} else {
		fprintf(stderr, "vigil: %s", reply + 1);
		err = -EINVAL;
	}
out:
	if (fd >= 0)
		close(fd);
	free(reply);
	return err;
}

int cli_ask_agent(const struct vigil_buf *req, bool quiet)
{
	return ask(req, quiet, NULL);
}

int cli_ask_agent_reply(const struct vigil_buf *req, struct vigil_buf *reply)
{
	return ask(req, true, reply);
}
