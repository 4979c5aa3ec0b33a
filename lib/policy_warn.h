/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a policy that parses may still not do: rules that can never match
 * where they stand. Accepted (an interface may be added by another file or
 * by --enforce-on later), but said, per rule, by `vigil policy check` and
 * at every load (docs/policy.md, "Warnings").
 */
#ifndef VIGIL_POLICY_WARN_H
#define VIGIL_POLICY_WARN_H

#include <stdbool.h>
#include "policy_parse.h"

/* Why rule r of p can match nothing, or NULL; the caller adds what it
 * knows of --enforce-on. packet_path: the agent
 * enforces on interfaces of its own (--enforce-on); a rule acting only on
 * packets needs that or an interface some rule of p names. */
const char *vigil_rule_unreachable(const struct vigil_policy *p, const struct vigil_rule *r,
				   bool packet_path);

#endif
