#!/usr/bin/env bash
# Seeds for the fuzz targets, from what the project itself produces:
#   OUT/{hello,records,event,collector,policy}/  by make_seeds (the real
#       hello builder and the real event structs, every kind the agent
#       writes; the policy parser's cases of tests/policy_cases.h);
#   OUT/policy/  also the YAML examples of docs/policy.md.
# Usage: make_corpus.sh MAKE_SEEDS_BINARY OUT
set -euo pipefail
seeds=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out.tmp"
mkdir -p "$out.tmp/policy"
"$seeds" "$out.tmp"
awk -v d="$out.tmp/policy" '/^```yaml/ { n++; f = d "/doc" n ".yaml"; next } /^```/ { f = "" } f { print > f }' \
	"$top/docs/policy.md"
rm -rf "$out"
mv "$out.tmp" "$out"
