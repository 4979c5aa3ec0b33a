// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the event catalogue (vigil/event_kinds.h) one kind a line, as the
 * table in docs/stream.md writes it: `| ID | NAME | struct STRUCT | SIZE |`,
 * SIZE "at least N" for a kind with strings after its fixed part.
 *
 * With --layout OBJ, prints instead every field of those structs, and of
 * the structs they hold, as docs/stream.md's record layouts write them:
 * `| struct S | field | offset | size | type |`, read from the BTF of OBJ
 * (tests/bpf/event_layout.bpf.c): the layout BPF writes, which is the wire's.
 * Driven by tests/stream_schema.t, which checks the docs against both, and
 * the digest of both against the schema version (--schema prints it,
 * MAJOR.MINOR) in tests/schema_digests.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <vigil/event_kinds.h>

#define MAX_STRUCTS 64

/* A type as a C declaration would name it: the first typedef's name
 * (__u32, not unsigned int), arrays with their length. */
static void type_name(const struct btf *btf, __u32 id, char *out, size_t n)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (btf_is_mod(t)) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (btf_is_array(t)) {
		char elem[64];

		type_name(btf, btf_array(t)->type, elem, sizeof(elem));
		if (btf_array(t)->nelems)
			snprintf(out, n, "%s[%u]", elem, btf_array(t)->nelems);
		else
			snprintf(out, n, "%s[]", elem);	/* strings follow */
	} else if (btf_is_struct(t) || btf_is_union(t) || btf_is_enum(t)) {
		const char *kw = btf_is_struct(t) ? "struct" : btf_is_union(t) ? "union" : "enum";

		snprintf(out, n, "%s %s", kw, t->name_off ? btf__name_by_offset(btf, t->name_off) : "(anonymous)");
	} else {
		snprintf(out, n, "%s", btf__name_by_offset(btf, t->name_off));
	}
}

/* The struct or union a member's type is, past typedefs and modifiers;
 * 0 for anything else. */
static __u32 composite(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (btf_is_mod(t) || btf_is_typedef(t)) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	return btf_is_struct(t) || btf_is_union(t) ? id : 0;
}

static int queue(__u32 *ids, unsigned *n, __u32 id)
{
	for (unsigned i = 0; i < *n; i++)
		if (ids[i] == id)
			return 0;
	if (*n == MAX_STRUCTS)
		return -1;
	ids[(*n)++] = id;
	return 0;
}

static int layout(const char *obj)
{
	static const char *const names[] = {
#define KIND_STRUCT(id, name, st, variable, check, format, tetragon) #st,
		VIGIL_EVENT_KINDS(KIND_STRUCT)
	};
	struct btf *btf = btf__parse_elf(obj, NULL);
	__u32 ids[MAX_STRUCTS];
	unsigned n = 0;

	if (!btf) {
		fprintf(stderr, "%s: no BTF: %s\n", obj, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int id = btf__find_by_name_kind(btf, names[i], BTF_KIND_STRUCT);

		if (id <= 0 || queue(ids, &n, id)) {
			fprintf(stderr, "%s: no struct %s in its BTF\n", obj, names[i]);
			return btf__free(btf), 1;
		}
	}
	/* Each struct once, those of the catalogue first, then those they hold. */
	for (unsigned i = 0; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, ids[i]);
		const struct btf_member *m = btf_members(t);
		char owner[96];

		type_name(btf, ids[i], owner, sizeof(owner));
		for (unsigned j = 0; j < btf_vlen(t); j++, m++) {
			__u32 inner = composite(btf, m->type);
			long size = btf__resolve_size(btf, m->type);
			char ty[96];

			type_name(btf, m->type, ty, sizeof(ty));
			printf("| `%s` | `%s` | %u | %ld | `%s` |\n", owner,
			       m->name_off ? btf__name_by_offset(btf, m->name_off) : "(anonymous)",
			       btf_member_bit_offset(t, j) / 8, size < 0 ? 0 : size, ty);
			if (inner && queue(ids, &n, inner)) {
				fprintf(stderr, "%s: more than %d structs\n", obj, MAX_STRUCTS);
				return btf__free(btf), 1;
			}
		}
	}
	btf__free(btf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--layout"))
		return layout(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "--schema"))
		return printf("%u.%u\n", VIGIL_SCHEMA_MAJOR, VIGIL_SCHEMA_MINOR) < 0;
#define PRINT_KIND(id, name, st, variable, check, format, tetragon)			\
	printf("| %u | %s | `struct %s` | %s%zu |\n", (unsigned)(id), #name, #st,		\
	       (variable) ? "at least " : "", sizeof(struct st));
	VIGIL_EVENT_KINDS(PRINT_KIND)
	return 0;
}
