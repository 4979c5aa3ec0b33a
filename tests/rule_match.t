#!/bin/bash
# Rule matching on its own (tests/rule_match.c): tables of policies and
# cases through BPF_PROG_TEST_RUN of tests/bpf/rule_match.bpf.c, which runs
# every matcher of bpf/lib/rule_match.bpf.h and rule_walk.bpf.h; one TAP
# line per case. IPv4 and IPv6 prefixes at their edges, rule order over
# prefix length, ports, protocols, directions, cgroup ancestors, packets
# without ports, 64 rules. Nothing is attached or pinned.
. "$(dirname "$0")/lib.sh"
# Not exec: the temp folder lib.sh made is removed at exit.
"$TOP/$BUILD/tests/rule_match" "$TOP/$BUILD/tests/rule_match.bpf.o"
