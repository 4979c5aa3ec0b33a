/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A growable byte buffer, reused across events so the hot path allocates
 * only when a line is longer than any before it. */
#ifndef VIGIL_BUF_H
#define VIGIL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct vigil_buf {
	char *p;
	size_t len;
	size_t cap;
	int oom;	/* an allocation failed: the content is cut */
};

int vbuf_reserve(struct vigil_buf *b, size_t more);
void vbuf_put_grow(struct vigil_buf *b, const void *s, size_t n);

/* Inline: an event's line is made of some hundred small puts, most of a
 * constant size, and the agent's formatting is most of its CPU. The room
 * check is the whole fast path; growing is vbuf_put_grow's. */
static inline void vbuf_put(struct vigil_buf *b, const void *s, size_t n)
{
	if (__builtin_expect(b->len + n >= b->cap, 0))
		return vbuf_put_grow(b, s, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static inline void vbuf_puts(struct vigil_buf *b, const char *s)
{
	vbuf_put(b, s, strlen(s));
}

static inline void vbuf_putc(struct vigil_buf *b, char c)
{
	if (__builtin_expect(b->len + 1 >= b->cap, 0))
		return vbuf_put_grow(b, &c, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

void vbuf_printf(struct vigil_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vbuf_free(struct vigil_buf *b);
/* Decimal digits of v into out (at least 21 bytes), no terminator; returns
 * how many. The event path formats many numbers: printf costs too much. */
size_t vigil_u64_dec(char *out, unsigned long long v);
void vbuf_put_u64(struct vigil_buf *b, unsigned long long v);

#endif
