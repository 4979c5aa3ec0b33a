// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Checks and formats the net events (include/vigil/net_events.h). */
#include <errno.h>
#include "event_format.h"
#include "json.h"

int vigil_check_net(const void *rec, uint32_t len, const char **why)
{
	(void)rec;
	(void)len;
	*why = "unknown event type";
	return -EINVAL;
}

void vigil_format_net(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
		      struct vigil_buf *compact)
{
	(void)f;
	(void)rec;
	(void)json;
	(void)compact;
}
