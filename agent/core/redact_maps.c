// SPDX-License-Identifier: GPL-2.0
/* Secret sets into the redaction maps (redact_maps.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <bpf/bpf.h>
#include "log.h"
#include "map_drop.h"
#include "core/redact_maps.h"

static int key_of(struct vigil_redact_key *k, uint32_t gen, const struct vigil_redact_entry *e)
{
	memset(k, 0, sizeof(*k));
	k->gen = gen;
	k->kind = e->kind;
	if (strlen(e->word) >= sizeof(k->word) || (e->comm && strlen(e->comm) >= sizeof(k->comm)))
		return -ENAMETOOLONG;
	memcpy(k->word, e->word, strlen(e->word));
	if (e->comm)
		memcpy(k->comm, e->comm, strlen(e->comm));
	return 0;
}

static bool key_of_gen(const void *key, const void *gen)
{
	return ((const struct vigil_redact_key *)key)->gen == *(const uint32_t *)gen;
}

/* Removes every key of generation gen. */
static int drop_gen(int keys_fd, uint32_t gen)
{
	return vigil_map_drop_if(keys_fd, sizeof(struct vigil_redact_key), key_of_gen, &gen);
}

/* Does generation gen hold exactly set's keys? */
static bool gen_holds(int keys_fd, uint32_t gen, const struct vigil_redact_set *set)
{
	struct vigil_redact_key k, next, *prev = NULL;
	unsigned n = 0;
	uint32_t how;

	while (!bpf_map_get_next_key(keys_fd, prev, &next)) {
		n += next.gen == gen;
		k = next;
		prev = &k;
	}
	if (n != set->n)
		return false;
	for (unsigned i = 0; i < set->n; i++)
		if (key_of(&k, gen, &set->entries[i]) || bpf_map_lookup_elem(keys_fd, &k, &how) ||
		    how != set->entries[i].how)
			return false;
	return true;
}

int vigil_redact_write(int conf_fd, int keys_fd, const struct vigil_redact_set *set)
{
	struct vigil_redact_conf conf = { 0 };
	struct vigil_redact_key k;
	uint32_t zero = 0, gen;
	int err;

	if (bpf_map_lookup_elem(conf_fd, &zero, &conf))
		return vlog_err(-errno, "cannot read the redaction settings");
	/* The same set again (a restart with the same policy) changes nothing. */
	if (conf.written && conf.on == set->on && conf.urls == set->urls &&
	    gen_holds(keys_fd, conf.gen, set))
		return 0;
	gen = !conf.gen;
	/* left by an agent that died mid-write: not to be mixed with this set */
	if ((err = drop_gen(keys_fd, gen)))
		return vlog_err(err, "cannot clear the secret names' generation %u", gen);
	for (unsigned i = 0; i < set->n; i++) {
		uint32_t how = set->entries[i].how;

		if ((err = key_of(&k, gen, &set->entries[i])))
			return vlog_err(err, "secret name '%s' is too long", set->entries[i].word);
		if (bpf_map_update_elem(keys_fd, &k, &how, BPF_ANY))
			return vlog_err(-errno, "cannot write secret name '%s'", set->entries[i].word);
	}
	conf.gen = gen;
	conf.on = set->on;
	conf.urls = set->urls;
	conf.written = 1;
	if (bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY))
		return vlog_err(-errno, "cannot switch the redaction settings");
	/* The old generation is out of force: what stays of it only waits
	 * for the next write, which clears it first. */
	if ((err = drop_gen(keys_fd, !gen)))
		vlog_warn("cannot clear the secret names' old generation %u: %s", !gen,
			  strerror(-err));
	return 0;
}

int vigil_redact_init(int conf_fd, int keys_fd)
{
	struct vigil_redact_conf conf = { 0 };
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(conf_fd, &zero, &conf))
		return vlog_err(-errno, "cannot read the redaction settings");
	return conf.written ? 0 : vigil_redact_write(conf_fd, keys_fd, &vigil_redact_defaults);
}
