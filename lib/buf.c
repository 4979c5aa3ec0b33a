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

void vbuf_put_grow(struct vigil_buf *b, const void *s, size_t n)
{
	if (vbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
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
	/* Two digits a division: most numbers in an event are long (times,
	 * ids), and a division costs more than the table's load. */
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	char tmp[20];
	size_t i = sizeof(tmp), n;

	while (v >= 100) {
		unsigned r = v % 100;

		v /= 100;
		i -= 2;
		memcpy(tmp + i, pairs + 2 * r, 2);
	}
	if (v >= 10) {
		i -= 2;
		memcpy(tmp + i, pairs + 2 * v, 2);
	} else {
		tmp[--i] = '0' + v;
	}
	n = sizeof(tmp) - i;
	memcpy(out, tmp + i, n);
	return n;
}

void vbuf_put_u64(struct vigil_buf *b, unsigned long long v)
{
	char d[21];

	vbuf_put(b, d, vigil_u64_dec(d, v));
}
