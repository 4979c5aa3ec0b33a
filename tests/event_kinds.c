// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the event catalogue (vigil/event_kinds.h) one kind a line, as the
 * table in docs/stream.md writes it: `| ID | struct NAME | SIZE |`, SIZE
 * "at least N" for a kind with strings after its fixed part. Driven by
 * tests/stream_schema.t, which checks the docs against it.
 */
#include <stdio.h>
#include <vigil/event_kinds.h>

int main(void)
{
#define PRINT_KIND(id, st, variable) \
	printf("| %u | `struct %s` | %s%zu |\n", (unsigned)(id), #st, (variable) ? "at least " : "", \
	       sizeof(struct st));
	VIGIL_EVENT_KINDS(PRINT_KIND)
	return 0;
}
