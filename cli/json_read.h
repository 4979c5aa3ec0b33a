/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for `vigil events`: one line (an event) into a flat
 * array of tokens, each value's subtree followed by its next sibling, as
 * jsmn does. Enough to find members by path and unescape strings; input is
 * checked for form, never trusted past it (a line may come from any file).
 */
#ifndef VIGIL_CLI_JSON_READ_H
#define VIGIL_CLI_JSON_READ_H

#include <stddef.h>

enum jtype { J_OBJ, J_ARR, J_STR, J_PRIM };

struct jtok {
	enum jtype type;
	int start, end;	/* the text, without a string's quotes */
	int size;	/* members (pairs: key and value count one) or items */
	int next;	/* the token after this value's subtree */
};

#define JTOK_MAX 1024

/* Tokens read from s[0..n), or -1: not one well-formed JSON value. */
int jread(const char *s, size_t n, struct jtok *t, int max);
/* The value of member key in object obj (a dotted path: "process.pid"),
 * or -1. */
int jpath(const char *s, const struct jtok *t, int obj, const char *path);
/* String i unescaped into out (NUL-terminated, cut at n - 1 bytes); a
 * primitive as written. Returns the length. */
size_t jtext(const char *s, const struct jtok *t, int i, char *out, size_t n);

#endif
