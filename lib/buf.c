// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"

int vbuf_reserve(struct vigil_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->len + more < b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap <= b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void vbuf_put(struct vigil_buf *b, const void *s, size_t n)
{
	if (vbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void vbuf_puts(struct vigil_buf *b, const char *s)
{
	vbuf_put(b, s, strlen(s));
}

void vbuf_putc(struct vigil_buf *b, char c)
{
	vbuf_put(b, &c, 1);
}

void vbuf_printf(struct vigil_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (!b->p || (size_t)n >= b->cap - b->len) {
		if (vbuf_reserve(b, n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += n;
}

void vbuf_free(struct vigil_buf *b)
{
	free(b->p);
	*b = (struct vigil_buf){};
}

size_t vigil_u64_dec(char *out, unsigned long long v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void vbuf_put_u64(struct vigil_buf *b, unsigned long long v)
{
	char d[21];

	vbuf_put(b, d, vigil_u64_dec(d, v));
}
