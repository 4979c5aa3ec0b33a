/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Known bugs not fixed yet, which a fuzz run would otherwise find again
 * every time instead of looking further. Only fuzzing skips them (run.sh
 * fuzz sets VIGIL_FUZZ_SKIP_KNOWN=1); a replay does not, so their
 * reproducers in tests/fuzz/crash/ still crash (tests/fuzz.t runs them as
 * TODO). Remove an entry when its fix lands, and move its reproducer to
 * tests/fuzz/regress/TARGET/.
 */
#ifndef VIGIL_FUZZ_KNOWN_BUGS_H
#define VIGIL_FUZZ_KNOWN_BUGS_H

#include <stdbool.h>
#include <stdlib.h>
#include "json_check.h"
#include "stream.h"

static inline bool skip_known(void)
{
	static int skip = -1;

	if (skip < 0)
		skip = getenv("VIGIL_FUZZ_SKIP_KNOWN") != NULL;
	return skip;
}

/* lib/stream.c vigil_stream_rec_parse: a hello that declares type 0 lets
 * a record of a type above 127 take type 0's size, then index
 * type_variable[128] with its type (tests/fuzz/crash/records/). */
static inline bool known_bug_hello(const struct vigil_stream_peer *peer)
{
	return skip_known() && peer->type_size[0];
}

/* lib/event_format.c compact_args, lib/format_net.c compact_head: compact
 * lines carry an exec's binary path and arguments raw (from the record, and
 * from the process cache in later lines), control bytes (a newline: a forged
 * line) and invalid UTF-8 included (tests/fuzz/crash/event/). An exec whose
 * binary or arguments hold such bytes is not fed to the formatter. */
static inline bool known_bug_text(const unsigned char *s, size_t n, bool nul_ok)
{
	for (size_t i = 0, k; i < n; i += k) {
		k = 1;
		if (!s[i] && nul_ok)
			continue;	/* the arguments' separators */
		if (s[i] < 0x20 || s[i] == 0x7f || !(k = utf8_seq(s + i, n - i)))
			return true;
	}
	return false;
}

static inline bool known_bug_exec(const void *rec, uint32_t len)
{
	const struct vigil_exec *ex = rec;
	const unsigned char *s = (const unsigned char *)ex->data;

	if (!skip_known() || ex->hdr.type != VIGIL_EV_EXEC || len < sizeof(*ex) ||
	    (size_t)ex->binary_len + ex->args_len > len - sizeof(*ex))
		return false;
	return known_bug_text(s, ex->binary_len, false) ||
	       known_bug_text(s + ex->binary_len, ex->args_len, true);
}

/* collector/publish.c vigil_pub_line: batch->p + from while batch->p is
 * still NULL (the first record formats to nothing: a fork), before the
 * check that returns (tests/fuzz/crash/collector/). The batch is given
 * its buffer first. */
static inline void known_bug_batch(struct vigil_buf *batch)
{
	if (skip_known()) {
		vbuf_putc(batch, 0);
		batch->len = 0;
	}
}

#endif
