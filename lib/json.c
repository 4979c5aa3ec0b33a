// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "json.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void json_escape(struct vigil_buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run = 0;

	if (vbuf_reserve(b, n + 2))
		return;
	while (i < n) {
		unsigned c = s[i];
		size_t len;
		char esc[7];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;	/* the common case: plain ASCII */
			run++;
			continue;
		}
		len = utf8_seq(s + i, n - i);

		if (len && c >= 0x20 && c != '"' && c != '\\') {
			i += len;
			run += len;
			continue;
		}
		vbuf_put(b, s + i - run, run);
		run = 0;
		if (!len) {
			vbuf_put(b, "\\ufffd", 6);
		} else if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = c;
			vbuf_put(b, esc, 2);
		} else if (c == '\n') {
			vbuf_put(b, "\\n", 2);
		} else if (c == '\t') {
			vbuf_put(b, "\\t", 2);
		} else if (c == '\r') {
			vbuf_put(b, "\\r", 2);
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			vbuf_put(b, esc, 6);
		}
		i++;
	}
	vbuf_put(b, s + i - run, run);
}

void jw_begin(struct jw *w, struct vigil_buf *b)
{
	w->b = b;
	w->depth = 0;
	w->has_member = 0;
}

static void member(struct jw *w, const char *key)
{
	uint64_t bit = 1ULL << (w->depth & 63);

	if (w->has_member & bit)
		vbuf_putc(w->b, ',');
	w->has_member |= bit;
	if (key) {
		vbuf_putc(w->b, '"');
		vbuf_puts(w->b, key);	/* keys are ours: never need escaping */
		vbuf_put(w->b, "\":", 2);
	}
}

void jw_obj(struct jw *w, const char *key)
{
	member(w, key);
	vbuf_putc(w->b, '{');
	w->depth++;
	w->has_member &= ~(1ULL << (w->depth & 63));
}

void jw_end(struct jw *w)
{
	vbuf_putc(w->b, '}');
	w->depth--;
}

void jw_arr(struct jw *w, const char *key)
{
	member(w, key);
	vbuf_putc(w->b, '[');
	w->depth++;
	w->has_member &= ~(1ULL << (w->depth & 63));
}

void jw_arr_end(struct jw *w)
{
	vbuf_putc(w->b, ']');
	w->depth--;
}

void jw_str(struct jw *w, const char *key, const char *s, size_t n)
{
	member(w, key);
	vbuf_putc(w->b, '"');
	json_escape(w->b, s, n);
	vbuf_putc(w->b, '"');
}

void jw_cstr(struct jw *w, const char *key, const char *s)
{
	jw_str(w, key, s, strlen(s));
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	member(w, key);
	vbuf_put_u64(w->b, v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	member(w, key);
	if (v < 0)
		vbuf_putc(w->b, '-');
	vbuf_put_u64(w->b, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	member(w, key);
	vbuf_puts(w->b, v ? "true" : "false");
}

void jw_raw(struct jw *w, const char *key, const char *s, size_t n)
{
	member(w, key);
	vbuf_put(w->b, s, n);
}
