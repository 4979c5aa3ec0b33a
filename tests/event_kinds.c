// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the event catalogue (vigil/event_kinds.h) one kind a line, as the
 * table in docs/stream.md writes it: `| ID | NAME | struct STRUCT | SIZE |`,
 * SIZE "at least N" for a kind with strings after its fixed part. Driven by
 * tests/stream_schema.t, which checks the docs against it.
 */
#include <stdio.h>
#include <vigil/event_kinds.h>

int main(void)
{
#define PRINT_KIND(id, name, st, variable, check, format, tetragon)			\
	printf("| %u | %s | `struct %s` | %s%zu |\n", (unsigned)(id), #name, #st,		\
	       (variable) ? "at least " : "", sizeof(struct st));
	VIGIL_EVENT_KINDS(PRINT_KIND)
	return 0;
}
