// SPDX-License-Identifier: GPL-2.0
/* A batch of JSON lines goes out: to the export file (or stdout), then to
 * JetStream. Whoever acknowledges agents does so only after this. */
#include "collector.h"
#include "log.h"

int collector_batch_out(struct collector *c)
{
	int err = 0;

	if (c->out.fd >= 0 && c->batch.len &&
	    (err = vigil_export_write(&c->out, c->batch.p, c->batch.len)))
		vlog_err(err, "cannot write events out");
	else
		err = vigil_pub_send(c->pub, &c->batch);
	vigil_pub_forget(c->pub);
	c->batch.len = 0;
	return err;
}
