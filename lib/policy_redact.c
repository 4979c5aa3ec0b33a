// SPDX-License-Identifier: GPL-2.0
/*
 * A policy's `redact:` section (docs/policy.md, "Secrets in arguments"):
 * which argument words name secrets, checked whole like the rules and
 * written with them (agent/enforce/rule_maps.c). Only reads and checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "policy_yaml.h"

static const struct word bools[] = { { "true", 1 }, { "false", 0 }, {} };

/* A word: lower case letters, digits, '_' and '-' (read as '_'), as the
 * BPF side folds them, shorter than VIGIL_REDACT_WORD_MAX. */
static int word_item(struct pctx *c, yaml_node_t *n, void *arr, unsigned i)
{
	char **out = arr;
	const char *s = scalar(n);
	size_t len = strlen(s);
	char *w;

	if (!len || len >= VIGIL_REDACT_WORD_MAX)
		return fail(c, n, "a secret word has 1 to %d characters", VIGIL_REDACT_WORD_MAX - 1);
	if (!(w = strdup(s)))
		return -ENOMEM;
	for (char *p = w; *p; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p += 'a' - 'A';
		if (*p == '-')
			*p = '_';
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) {
			free(w);
			return fail(c, n, "a secret word holds letters, digits, '-' and '_' only");
		}
	}
	out[i] = w;
	return 0;
}

static int add_words(struct vigil_redact_policy *r, char **w, unsigned n, uint32_t kind,
		     uint32_t how)
{
	struct vigil_redact_entry *e = realloc(r->entries, (r->set.n + n + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	r->entries = e;
	for (unsigned i = 0; i < n; i++)
		e[r->set.n++] = (struct vigil_redact_entry){ kind, how, NULL, w[i] };
	return 0;
}

int parse_redact(struct pctx *c, yaml_node_t *n, struct vigil_redact_policy **out)
{
	struct vigil_redact_policy *r = calloc(1, sizeof(*r));
	unsigned on = 1, urls = 1, defaults = 1, nw = 0, ns = 0;
	char **words = NULL, **sfx = NULL;
	int err = 0;

	if (!r)
		return -ENOMEM;
	if (n->type != YAML_MAPPING_NODE) {
		err = fail(c, n, "'redact' is a mapping (enabled, defaults, urls, words, suffixes), "
			   "not %s", node_kind(n));
		goto out;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && !err;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		const char *key = k->type == YAML_SCALAR_NODE ? scalar(k) : "";

		if (!strcmp(key, "enabled"))
			err = want_word(c, v, key, bools, &on);
		else if (!strcmp(key, "urls"))
			err = want_word(c, v, key, bools, &urls);
		else if (!strcmp(key, "defaults"))
			err = want_word(c, v, key, bools, &defaults);
		else if (!strcmp(key, "words") && !words)
			err = parse_list(c, v, key, sizeof(char *), word_item, (void **)&words, &nw);
		else if (!strcmp(key, "suffixes") && !sfx)
			err = parse_list(c, v, key, sizeof(char *), word_item, (void **)&sfx, &ns);
		else
			err = fail(c, k, "unknown or repeated key in 'redact' (known: enabled, "
				   "defaults, urls, words, suffixes)");
	}
	r->set.on = on;
	r->set.urls = urls;
	if (!err && defaults)
		for (unsigned i = 0; i < vigil_redact_defaults.n && !err; i++) {
			const struct vigil_redact_entry *d = &vigil_redact_defaults.entries[i];
			char *w = strdup(d->word);

			err = w ? add_words(r, &w, 1, d->kind, d->how) : -ENOMEM;
			if (err)
				free(w);
			else
				r->entries[r->set.n - 1].comm = d->comm;
		}
	if (!err && !(err = add_words(r, words, nw, VIGIL_REDACT_WORD,
				      VIGIL_REDACT_EQ | VIGIL_REDACT_NEXT)))
		nw = 0;	/* the entries own them now */
	if (!err && !(err = add_words(r, sfx, ns, VIGIL_REDACT_SUFFIX, VIGIL_REDACT_EQ)))
		ns = 0;
	if (!err && r->set.n > VIGIL_REDACT_KEYS_MAX / 2)
		err = fail(c, n, "too many secret words: at most %d", VIGIL_REDACT_KEYS_MAX / 2);
out:
	for (unsigned i = 0; i < nw; i++)
		free(words[i]);
	for (unsigned i = 0; i < ns; i++)
		free(sfx[i]);
	free(words);
	free(sfx);
	r->set.entries = r->entries;
	if (err) {
		vigil_redact_policy_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void vigil_redact_policy_free(struct vigil_redact_policy *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->set.n; i++)
		free((char *)r->entries[i].word);
	free(r->entries);
	free(r);
}
