// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the event checker and formatters (lib/event_format.c,
 * lib/format_process.c, lib/format_net.c, lib/format_enforce.c, and
 * lib/format_tetragon.c for inputs of odd length). The input is records one after
 * the other, each as long as its header's size says, so the process cache
 * carries state from one to the next (an exec, then its connect...). Every
 * record the checker takes is formatted to JSON and to the compact line;
 * the JSON line must be valid JSON, and neither output may carry a control
 * byte or invalid UTF-8. A second formatter, which keeps no process
 * object (struct vigil_process_memo: the first does), must write the same
 * bytes, also after the node name and the clock offset change midway. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_format.h"
#include "json_check.h"

/* Shows the bad output (escaped) before the crash that reports it. */
static void bad(const char *what, const struct vigil_buf *b)
{
	fprintf(stderr, "fuzz_event: bad %s output: ", what);
	for (size_t i = 0; i < b->len; i++) {
		unsigned char c = b->p[i];

		fprintf(stderr, c >= 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x", c);
	}
	fputc('\n', stderr);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vigil_formatter f, fresh;
	struct vigil_buf json = { 0 }, compact = { 0 }, json_fresh = { 0 }, compact_fresh = { 0 };
	size_t p = 0;

	if (vigil_formatter_init(&f, "fuzz-node", 64))
		return 0;
	if (vigil_formatter_init(&fresh, "fuzz-node", 64)) {
		vigil_formatter_free(&f);
		return 0;
	}
	vigil_formatter_memo(&f, true);
	f.realtime_offset_ns = 1764754785LL * 1000000000LL;
	f.opts.format = size & 1 ? VIGIL_EXPORT_TETRAGON : VIGIL_EXPORT_VIGIL;
	f.opts.process_ns = f.opts.process_cred = size & 2;
	fresh.realtime_offset_ns = f.realtime_offset_ns;
	fresh.opts = f.opts;
	for (unsigned nrec = 0; p < size && size - p >= sizeof(struct vigil_hdr); nrec++) {
		struct vigil_hdr h;
		const char *why = NULL;
		uint32_t len;
		void *rec;

		memcpy(&h, data + p, sizeof(h));
		len = h.size < sizeof(h) ? sizeof(h) : h.size;
		if (len > size - p)
			len = size - p;
		/* Exactly len bytes, 8-aligned as in the ring. */
		rec = malloc(len);
		memcpy(rec, data + p, len);
		if (nrec == 4) {	/* a collector's stream renamed by its certificate */
			vigil_formatter_node_name(&f, "fuzz-node-2");
			vigil_formatter_node_name(&fresh, "fuzz-node-2");
		} else if (nrec == 6) {	/* the clock stepped */
			f.realtime_offset_ns += 1000000000LL;
			fresh.realtime_offset_ns = f.realtime_offset_ns;
		}
		if (!vigil_event_check(rec, len, &why)) {
			json.len = compact.len = 0;
			vigil_event_format(&f, rec, &json, &compact);
			if (json.len && json_line_check(json.p, json.len))
				bad("JSON", &json);
			if (compact.len && text_line_check(compact.p, compact.len))
				bad("compact", &compact);
			json_fresh.len = compact_fresh.len = 0;
			vigil_event_format(&fresh, rec, &json_fresh, &compact_fresh);
			if (json_fresh.len != json.len ||
			    (json.len && memcmp(json_fresh.p, json.p, json.len))) {
				fprintf(stderr, "fuzz_event: written fresh: %.*s\n",
					(int)json_fresh.len, json_fresh.p);
				bad("JSON (memo)", &json);
			}
		} else if (!why) {
			abort();	/* a refusal always says why */
		}
		free(rec);
		p += (len + 7) & ~7u;
	}
	vbuf_free(&json);
	vbuf_free(&compact);
	vbuf_free(&json_fresh);
	vbuf_free(&compact_fresh);
	vigil_formatter_free(&f);
	vigil_formatter_free(&fresh);
	return 0;
}
