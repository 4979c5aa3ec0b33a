// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the stream record parser (lib/stream.c) given a hello.
 * The input is a stream as an agent sends it: a hello, then records. The
 * records are walked as the collector's take() does (collector/conn.c):
 * parse, step by the record's span, stop at the first refusal or at a
 * record cut short. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "event_format.h"
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vigil_stream_peer peer;
	const char *why = NULL;
	int n = vigil_stream_hello_parse(data, size, &peer, &why);
	size_t len, p = 0;
	uint8_t *buf;

	if (n <= 0)
		return 0;
	/* The records in a buffer of exactly their size: ASan sees a read
	 * past what was received. */
	len = size - n;
	buf = malloc(len ? len : 1);
	memcpy(buf, data + n, len);
	for (;;) {
		struct vigil_stream_rec rec;
		int r;

		why = NULL;
		r = vigil_stream_rec_parse(&peer, buf + p, len - p, &rec, &why);
		if (r < 0 && !why)
			abort();	/* a refusal always says why */
		if (r <= 0)
			break;
		if (rec.span < 8 || (rec.span & 7) || rec.span > len - p ||
		    rec.span > VIGIL_STREAM_REC_MAX)
			abort();
		/* What the parser hands on is an event the formatter takes,
		 * or one of a kind this build does not know (a newer minor
		 * schema), which is counted and skipped, never read. */
		if (rec.event && vigil_stream_type_known(((const struct vigil_hdr *)rec.event)->type) &&
		    vigil_event_check(rec.event, rec.len, &why))
			abort();
		p += rec.span;
	}
	free(buf);
	return 0;
}
