// SPDX-License-Identifier: GPL-2.0
/* See json_read.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "json_read.h"

struct reader {
	const char *s;
	size_t n, at;
	struct jtok *t;
	int nt, max, depth;
};

static void skip_ws(struct reader *r)
{
	while (r->at < r->n && strchr(" \t\r\n", r->s[r->at]))
		r->at++;
}

static int value(struct reader *r);

static int string(struct reader *r)
{
	int i = r->nt++;

	if (i >= r->max)
		return -1;
	r->t[i] = (struct jtok){ J_STR, (int)++r->at, 0, 0, 0 };
	while (r->at < r->n && r->s[r->at] != '"') {
		if ((unsigned char)r->s[r->at] < 0x20)
			return -1;
		r->at += r->s[r->at] == '\\' ? 2 : 1;
	}
	if (r->at >= r->n)
		return -1;
	r->t[i].end = (int)r->at++;
	r->t[i].next = r->nt;
	return i;
}

static int container(struct reader *r, enum jtype type, char close)
{
	int i = r->nt++;

	if (i >= r->max || ++r->depth > 64)
		return -1;
	r->t[i] = (struct jtok){ type, (int)r->at++, 0, 0, 0 };
	skip_ws(r);
	if (r->at < r->n && r->s[r->at] == close) {
		r->at++;
	} else {
		for (;;) {
			skip_ws(r);
			if (type == J_OBJ) {
				if (r->at >= r->n || r->s[r->at] != '"' || string(r) < 0)
					return -1;
				skip_ws(r);
				if (r->at >= r->n || r->s[r->at++] != ':')
					return -1;
			}
			if (value(r) < 0)
				return -1;
			r->t[i].size++;
			skip_ws(r);
			if (r->at < r->n && r->s[r->at] == ',') {
				r->at++;
				continue;
			}
			if (r->at < r->n && r->s[r->at] == close) {
				r->at++;
				break;
			}
			return -1;
		}
	}
	r->depth--;
	r->t[i].end = (int)r->at;
	r->t[i].next = r->nt;
	return i;
}

static int value(struct reader *r)
{
	int i;

	skip_ws(r);
	if (r->at >= r->n)
		return -1;
	switch (r->s[r->at]) {
	case '{': return container(r, J_OBJ, '}');
	case '[': return container(r, J_ARR, ']');
	case '"': return string(r);
	}
	i = r->nt++;
	if (i >= r->max)
		return -1;
	r->t[i] = (struct jtok){ J_PRIM, (int)r->at, 0, 0, 0 };
	while (r->at < r->n && (strchr("+-.eE", r->s[r->at]) ||
				(r->s[r->at] >= '0' && r->s[r->at] <= '9') ||
				(r->s[r->at] >= 'a' && r->s[r->at] <= 'z')))
		r->at++;
	if (r->at == (size_t)r->t[i].start)
		return -1;
	r->t[i].end = (int)r->at;
	r->t[i].next = r->nt;
	return i;
}

int jread(const char *s, size_t n, struct jtok *t, int max)
{
	struct reader r = { .s = s, .n = n, .t = t, .max = max };

	if (value(&r) < 0)
		return -1;
	skip_ws(&r);
	return r.at == n ? r.nt : -1;
}

static int member(const char *s, const struct jtok *t, int obj, const char *key, size_t klen)
{
	int i = obj + 1;

	if (obj < 0 || t[obj].type != J_OBJ)
		return -1;
	for (int m = 0; m < t[obj].size; m++) {
		int v = t[i].next;

		if ((size_t)(t[i].end - t[i].start) == klen && !memcmp(s + t[i].start, key, klen))
			return v;
		i = t[v].next;
	}
	return -1;
}

int jpath(const char *s, const struct jtok *t, int obj, const char *path)
{
	while (obj >= 0 && *path) {
		size_t len = strcspn(path, ".");

		obj = member(s, t, obj, path, len);
		path += len + (path[len] == '.');
	}
	return obj;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80)
		return out[0] = cp, 1;
	if (cp < 0x800)
		return out[0] = 0xc0 | cp >> 6, out[1] = 0x80 | (cp & 0x3f), 2;
	if (cp < 0x10000)
		return out[0] = 0xe0 | cp >> 12, out[1] = 0x80 | ((cp >> 6) & 0x3f),
		       out[2] = 0x80 | (cp & 0x3f), 3;
	return out[0] = 0xf0 | cp >> 18, out[1] = 0x80 | ((cp >> 12) & 0x3f),
	       out[2] = 0x80 | ((cp >> 6) & 0x3f), out[3] = 0x80 | (cp & 0x3f), 4;
}

size_t jtext(const char *s, const struct jtok *t, int i, char *out, size_t n)
{
	size_t o = 0;

	if (!n)
		return 0;
	for (int p = t[i].start; p < t[i].end && o + 5 < n; p++) {
		unsigned cp;
		char c = s[p];

		if (t[i].type != J_STR || c != '\\' || p + 1 >= t[i].end) {
			out[o++] = c;
			continue;
		}
		switch ((c = s[++p])) {
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'u':
			if (p + 4 < t[i].end && sscanf(s + p + 1, "%4x", &cp) == 1) {
				o += put_utf8(out + o, cp);
				p += 4;
			}
			break;
		default: out[o++] = c; break;
		}
	}
	out[o] = 0;
	return o;
}
