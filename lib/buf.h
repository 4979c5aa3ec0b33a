/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A growable byte buffer, reused across events so the hot path allocates
 * only when a line is longer than any before it. */
#ifndef VIGIL_BUF_H
#define VIGIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct vigil_buf {
	char *p;
	size_t len;
	size_t cap;
	int oom;	/* an allocation failed: the content is cut */
};

int vbuf_reserve(struct vigil_buf *b, size_t more);
void vbuf_put(struct vigil_buf *b, const void *s, size_t n);
void vbuf_puts(struct vigil_buf *b, const char *s);
void vbuf_putc(struct vigil_buf *b, char c);
void vbuf_printf(struct vigil_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vbuf_free(struct vigil_buf *b);
/* Decimal digits of v into out (at least 21 bytes), no terminator; returns
 * how many. The event path formats many numbers: printf costs too much. */
size_t vigil_u64_dec(char *out, unsigned long long v);
void vbuf_put_u64(struct vigil_buf *b, unsigned long long v);

#endif
