/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Masks secrets in an exec's arguments in its scratch record, before the
 * copy into the ring, so no secret ever reaches the ring, the agent, a
 * file or the wire (vigil/redact.h says what names one). No regular
 * expressions: one pass over argv's bytes (bpf_loop) tokenises on NUL,
 * builds each argument's word (up to '=') and its last two '_'-suffixes as
 * it goes, looks them up in vigil_redact_keys and notes the spans to mask;
 * a second pass writes '*' over them. A masked value keeps its length.
 *
 * All the walk's state lives in the per-CPU scratch (struct
 * vigil_redact_work), not in the loop's stack context: the verifier knows
 * nothing of map values, so 6.1's single look at the callback cannot take
 * a starting value for a constant (loop.bpf.h).
 */
#ifndef VIGIL_REDACT_BPF_H
#define VIGIL_REDACT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include <vigil/redact.h>

#define REDACT_NONE 0xffffu
#define REDACT_IDX (VIGIL_ARGS_MAX * 2 - 1)	/* masks an index into argv's bytes */
#define REDACT_WORD_IDX (VIGIL_REDACT_WORD_MAX - 1)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_redact_conf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_redact_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_REDACT_KEYS_MAX);
	__type(key, struct vigil_redact_key);
	__type(value, __u32);	/* enum vigil_redact_how */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_redact_keys SEC(".maps");

struct vigil_redact_work {
	struct vigil_redact_key word, sfx1, sfx2, scoped;
	__u32 wlen, s1len, s2len;
	__u32 tok;		/* where the argument began */
	__u32 dashes;		/* its leading dashes */
	__u32 in_word;		/* no '=' yet */
	__u32 mask_from;	/* masking from here to the argument's end */
	__u32 pending;		/* the last argument's NEXT: how to mask this one */
	__u32 want_colon;	/* mask after this argument's first ':' */
	__u32 url, colon;	/* in a URL's authority; its first ':' */
	__u32 p1, p2;		/* the two bytes before */
	__u32 urls;
	__u32 n, overflow;
	__u32 cur;		/* the mask pass's span */
	__u16 start[VIGIL_REDACT_RANGES], end[VIGIL_REDACT_RANGES];
};

struct redact_ctx {
	struct vigil_redact_work *w;
	char *args;
	__u32 len;
};

static __always_inline void redact_span(struct vigil_redact_work *w, __u32 a, __u32 b)
{
	__u32 n = w->n;

	if (b <= a)
		return;
	if (n >= VIGIL_REDACT_RANGES) {
		w->overflow = 1;
		return;
	}
	w->start[n & (VIGIL_REDACT_RANGES - 1)] = a;
	w->end[n & (VIGIL_REDACT_RANGES - 1)] = b;
	w->n = n + 1;
}

static __always_inline void redact_zero(struct vigil_redact_key *k)
{
	__u64 *q = (__u64 *)k->word;

	q[0] = 0;
	q[1] = 0;
	q[2] = 0;
	q[3] = 0;
}

static __always_inline void redact_copy(struct vigil_redact_key *to, struct vigil_redact_key *from)
{
	__u64 *t = (__u64 *)to->word, *f = (__u64 *)from->word;

	t[0] = f[0];
	t[1] = f[1];
	t[2] = f[2];
	t[3] = f[3];
}

static __always_inline __u32 redact_how(struct vigil_redact_key *k)
{
	__u32 *how = bpf_map_lookup_elem(&vigil_redact_keys, k);

	return how ? *how : 0;
}

/* The word, or a suffix of it, names a secret whose value follows '='. */
static __always_inline bool redact_eq(struct vigil_redact_work *w)
{
	if (w->wlen && w->wlen < VIGIL_REDACT_WORD_MAX && (redact_how(&w->word) & VIGIL_REDACT_EQ))
		return true;
	if (w->s1len > 1 && w->s1len < VIGIL_REDACT_WORD_MAX &&
	    (redact_how(&w->sfx1) & VIGIL_REDACT_EQ))
		return true;
	return w->s2len > 1 && w->s2len < VIGIL_REDACT_WORD_MAX &&
	       (redact_how(&w->sfx2) & VIGIL_REDACT_EQ);
}

/* The same word for the program in scoped (its comm set once). */
static __always_inline __u32 redact_scoped(struct vigil_redact_work *w, __u32 kind)
{
	w->scoped.kind = kind;
	redact_copy(&w->scoped, &w->word);
	return redact_how(&w->scoped);
}

static __always_inline void redact_token_end(struct vigil_redact_work *w, __u32 i)
{
	__u32 how = 0;

	if (w->mask_from != REDACT_NONE) {
		redact_span(w, w->mask_from, i);
	} else if (w->in_word && w->dashes && w->wlen && w->wlen < VIGIL_REDACT_WORD_MAX) {
		how = redact_how(&w->word);
		if (!(how & VIGIL_REDACT_NEXT))
			how = redact_scoped(w, VIGIL_REDACT_WORD);
	}
	w->pending = how & VIGIL_REDACT_NEXT ? how : 0;
	w->tok = i + 1;
	w->wlen = 0;
	w->s1len = 0;
	w->s2len = 0;
	w->dashes = 0;
	w->in_word = 1;
	w->mask_from = REDACT_NONE;
	w->want_colon = 0;
	w->url = 0;
	w->p1 = 0;
	w->p2 = 0;
	redact_zero(&w->word);
	redact_zero(&w->sfx1);
	redact_zero(&w->sfx2);
}

static __always_inline void redact_word_char(struct vigil_redact_work *w, __u32 i, char c)
{
	__u32 pos = i - w->tok;

	if (c == '=') {
		w->in_word = 0;
		if (w->mask_from == REDACT_NONE && redact_eq(w))
			w->mask_from = i + 1;
		return;
	}
	if (c == '-' && pos == w->dashes) {
		w->dashes++;
		return;
	}
	/* -pVALUE: one dash, one letter, then the value */
	if (w->dashes == 1 && pos == 2 && w->mask_from == REDACT_NONE &&
	    (redact_scoped(w, VIGIL_REDACT_ATTACHED) & VIGIL_REDACT_REST))
		w->mask_from = i;
	if (c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	if (c == '-')
		c = '_';
	if (w->wlen < VIGIL_REDACT_WORD_MAX)
		w->word.word[w->wlen & REDACT_WORD_IDX] = c;
	w->wlen++;
	if (c == '_') {
		if (w->s1len) {
			redact_copy(&w->sfx2, &w->sfx1);
			w->s2len = w->s1len;
		}
		redact_zero(&w->sfx1);
		w->sfx1.word[0] = '_';
		w->s1len = 1;
		return;
	}
	if (w->s1len) {
		if (w->s1len < VIGIL_REDACT_WORD_MAX)
			w->sfx1.word[w->s1len & REDACT_WORD_IDX] = c;
		w->s1len++;
	}
	if (w->s2len) {
		if (w->s2len < VIGIL_REDACT_WORD_MAX)
			w->sfx2.word[w->s2len & REDACT_WORD_IDX] = c;
		w->s2len++;
	}
}

/* scheme://user:PASSWORD@host: the span is known at '@'. */
static __always_inline void redact_url_char(struct vigil_redact_work *w, __u32 i, char c)
{
	if (!w->url) {
		if (c == '/' && w->p1 == '/' && w->p2 == ':') {
			w->url = 1;
			w->colon = REDACT_NONE;
		}
	} else if (c == '/') {
		w->url = 0;
	} else if (c == ':' && w->colon == REDACT_NONE) {
		w->colon = i;
	} else if (c == '@') {
		if (w->colon != REDACT_NONE && w->mask_from == REDACT_NONE)
			redact_span(w, w->colon + 1, i);
		w->url = 0;
	}
	w->p2 = w->p1;
	w->p1 = (__u8)c;
}

static long redact_step(__u32 i, void *data)
{
	struct redact_ctx *x = data;
	struct vigil_redact_work *w = x->w;
	char c = 0;

	if (i < x->len)
		c = x->args[i & REDACT_IDX];
	if (!c) {
		redact_token_end(w, i);
		return 0;
	}
	if (i == w->tok && w->pending) {
		if (w->pending & VIGIL_REDACT_AFTER_COLON)
			w->want_colon = 1;
		else
			w->mask_from = i;
		w->pending = 0;
	}
	if (w->want_colon && c == ':' && w->mask_from == REDACT_NONE) {
		w->mask_from = i + 1;
		w->want_colon = 0;
	}
	if (w->in_word)
		redact_word_char(w, i, c);
	if (w->urls)
		redact_url_char(w, i, c);
	return 0;
}

static long redact_mask_step(__u32 i, void *data)
{
	struct redact_ctx *x = data;
	struct vigil_redact_work *w = x->w;
	__u32 r = w->cur;	/* the span at or after i */

	if (r >= w->n)
		return 1;
	if (i >= w->end[r & (VIGIL_REDACT_RANGES - 1)]) {
		r++;
		w->cur = r;
		if (r >= w->n)
			return 1;
	}
	if (i >= w->start[r & (VIGIL_REDACT_RANGES - 1)])
		x->args[i & REDACT_IDX] = '*';
	return 0;
}

/* Masks the secrets in args[0, len) (argv, NUL-separated) of the program
 * named comm. Returns the new length: len, or 0 when there were more spans
 * than it can hold (then no argument is sent). *redacted is set when
 * anything was masked or dropped. */
static __always_inline __u32 vigil_redact_args(struct vigil_redact_work *w, char *args, __u32 len,
					       const char *comm, bool *redacted)
{
	struct redact_ctx x = { .w = w, .args = args, .len = len };
	struct vigil_redact_conf *conf;
	__u32 zero = 0;

	*redacted = false;
	conf = bpf_map_lookup_elem(&vigil_redact_conf, &zero);
	if (!conf || !conf->on || !len)
		return len;
	w->word.gen = w->sfx1.gen = w->sfx2.gen = w->scoped.gen = conf->gen & 1;
	w->word.kind = VIGIL_REDACT_WORD;
	w->sfx1.kind = w->sfx2.kind = VIGIL_REDACT_SUFFIX;
	bpf_probe_read_kernel(w->scoped.comm, sizeof(w->scoped.comm), comm);
	w->urls = conf->urls;
	w->n = 0;
	w->overflow = 0;
	w->pending = 0;
	w->mask_from = REDACT_NONE;
	w->wlen = 0;
	redact_token_end(w, (__u32)-1);	/* the first argument starts at 0 */
	bpf_loop(len + 1, redact_step, &x, 0);
	if (w->overflow) {
		*redacted = true;
		return 0;
	}
	if (!w->n)
		return len;
	w->cur = 0;
	bpf_loop(len, redact_mask_step, &x, 0);
	*redacted = true;
	return len;
}

#endif
