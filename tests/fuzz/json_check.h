/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets ask of a formatter's output for one record: one
 * line, ended by '\n' and holding no other. A JSON line is one valid JSON
 * value (RFC 8259; strings valid UTF-8, no raw control bytes); a text line
 * carries no control byte and only valid UTF-8 (a name that could end the
 * line or move the terminal's cursor could forge the lines after it). A small strict validator, here rather than a
 * library, so the check reads in one place. 0 when good, -1 when not.
 */
#ifndef VIGIL_FUZZ_JSON_CHECK_H
#define VIGIL_FUZZ_JSON_CHECK_H

#include <stddef.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF refused). */
static inline size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], need, min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n < need + 1)
		return 0;
	for (unsigned i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

struct json_in {
	const unsigned char *s;
	size_t n, i;
	int depth;
};

static inline void json_ws(struct json_in *j)
{
	while (j->i < j->n && strchr(" \t\r", j->s[j->i]) && j->s[j->i])
		j->i++;
}

static inline int json_lit(struct json_in *j, const char *w)
{
	size_t l = strlen(w);

	if (j->n - j->i < l || memcmp(j->s + j->i, w, l))
		return -1;
	j->i += l;
	return 0;
}

static inline int json_string(struct json_in *j)
{
	if (j->i >= j->n || j->s[j->i] != '"')
		return -1;
	for (j->i++; j->i < j->n;) {
		unsigned char c = j->s[j->i];
		size_t k;

		if (c == '"')
			return j->i++, 0;
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			if (++j->i >= j->n)
				return -1;
			c = j->s[j->i++];
			if (c == 'u') {
				if (j->n - j->i < 4)
					return -1;
				for (int h = 0; h < 4; h++, j->i++)
					if (!strchr("0123456789abcdefABCDEF", j->s[j->i]) || !j->s[j->i])
						return -1;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return -1;
			}
			continue;
		}
		if (!(k = utf8_seq(j->s + j->i, j->n - j->i)))
			return -1;
		j->i += k;
	}
	return -1;
}

static inline int json_number(struct json_in *j)
{
	size_t start = j->i, digits;

	if (j->i < j->n && j->s[j->i] == '-')
		j->i++;
	digits = j->i;
	while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
		j->i++;
	if (j->i == digits || (j->s[digits] == '0' && j->i - digits > 1))
		return -1;
	if (j->i < j->n && j->s[j->i] == '.') {
		digits = ++j->i;
		while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
			j->i++;
		if (j->i == digits)
			return -1;
	}
	if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		digits = j->i;
		while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
			j->i++;
		if (j->i == digits)
			return -1;
	}
	return j->i > start ? 0 : -1;
}

static inline int json_value(struct json_in *j)
{
	int r = 0;

	json_ws(j);
	if (j->i >= j->n || ++j->depth > 64)
		return -1;
	switch (j->s[j->i]) {
	case '{':
	case '[': {
		char close = j->s[j->i] == '{' ? '}' : ']';

		j->i++;
		json_ws(j);
		if (j->i < j->n && j->s[j->i] == close) {
			j->i++;
			break;
		}
		for (;;) {
			if (close == '}') {
				json_ws(j);
				if (json_string(j))
					return -1;
				json_ws(j);
				if (j->i >= j->n || j->s[j->i++] != ':')
					return -1;
			}
			if (json_value(j))
				return -1;
			json_ws(j);
			if (j->i >= j->n)
				return -1;
			if (j->s[j->i] == close) {
				j->i++;
				break;
			}
			if (j->s[j->i++] != ',')
				return -1;
		}
		break;
	}
	case '"': r = json_string(j); break;
	case 't': r = json_lit(j, "true"); break;
	case 'f': r = json_lit(j, "false"); break;
	case 'n': r = json_lit(j, "null"); break;
	default: r = json_number(j); break;
	}
	j->depth--;
	return r;
}

/* p[0..n) is one JSON value and a '\n'. */
static inline int json_line_check(const char *p, size_t n)
{
	struct json_in j = { (const unsigned char *)p, n - 1, 0, 0 };

	if (!n || p[n - 1] != '\n' || json_value(&j))
		return -1;
	json_ws(&j);
	return j.i == j.n ? 0 : -1;
}

/* p[0..n) is valid UTF-8 without control bytes, then a '\n'. */
static inline int text_line_check(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;

	if (!n || p[n - 1] != '\n')
		return -1;
	for (size_t i = 0, k; i < n - 1; i += k)
		if (s[i] < 0x20 || s[i] == 0x7f || !(k = utf8_seq(s + i, n - 1 - i)))
			return -1;
	return 0;
}

#endif
