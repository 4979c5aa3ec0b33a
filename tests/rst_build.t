#!/bin/bash
# The RST and ICMP builders on crafted packets through BPF_PROG_TEST_RUN
# (tests/rst_build.c): IPv4 and IPv6, netfilter's seq/ack rules, padding,
# options and extension headers stripped, no reply to RST, fragments, bad
# checksums or group addresses, and ICMP port unreachable for UDP.
. "$(dirname "$0")/lib.sh"
# Not exec: the temp folder lib.sh made is removed at exit.
"$TOP/$BUILD/tests/rst_build"
