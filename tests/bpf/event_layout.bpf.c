// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: one variable of every event kind's struct, so that this
 * object's BTF describes them all, field by field, as the compiler laid
 * them out for BPF. tests/event_kinds.c --layout prints them from it, and
 * tests/stream_schema.t checks docs/stream.md's record layouts against that.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/event_kinds.h>

char LICENSE[] SEC("license") = "GPL";

#define LAYOUT_VAR(id, name, st, variable, check, format, tetragon) struct st layout_##name;
VIGIL_EVENT_KINDS(LAYOUT_VAR)
