/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small streaming JSON writer: objects, strings, numbers, nothing more.
 * Strings are escaped for any byte sequence: quotes, backslashes and control
 * bytes as escapes, invalid UTF-8 as U+FFFD, so every line a hostile process
 * name produces still parses. Tested against jq (tests/json_strings.t).
 */
#ifndef VIGIL_JSON_H
#define VIGIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include "buf.h"

struct jw {
	struct vigil_buf *b;
	unsigned depth;
	uint64_t has_member;	/* bit per depth: a comma is due */
};

void jw_begin(struct jw *w, struct vigil_buf *b);
void jw_obj(struct jw *w, const char *key);	/* key NULL at top level */
void jw_end(struct jw *w);
/* Arrays: elements are written with key NULL (jw_obj, jw_cstr, ...). */
void jw_arr(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *s, size_t n);
void jw_cstr(struct jw *w, const char *key, const char *s);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_bool(struct jw *w, const char *key, bool v);
/* A value already written as JSON (s, n bytes), under key. */
void jw_raw(struct jw *w, const char *key, const char *s, size_t n);

/* Appends s as a JSON string body (no quotes). */
void json_escape(struct vigil_buf *b, const char *s, size_t n);

#endif
