// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the stream hello parser (lib/stream.c), on bytes as a
 * collector reads them, whole and cut at every length a read may stop at. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vigil_stream_peer peer;
	/* A copy of exactly size bytes, so ASan sees any read past them. */
	uint8_t *p = malloc(size ? size : 1);
	const char *why = NULL;
	int n;

	memcpy(p, data, size);
	n = vigil_stream_hello_parse(p, size, &peer, &why);
	if (n < 0 && !why)
		abort();	/* a refusal always says why */
	if (n > 0 && ((size_t)n > size || (n & 7) || !peer.node_name[0]))
		abort();
	/* A hello accepted whole is also accepted, or waited for, when it
	 * arrives cut short: a shorter prefix is never refused. */
	if (n > 0)
		for (size_t k = 0; k < (size_t)n; k += 7) {
			why = NULL;
			if (vigil_stream_hello_parse(p, k, &peer, &why) < 0)
				abort();
		}
	free(p);
	return 0;
}
