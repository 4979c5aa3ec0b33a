#!/usr/bin/env bash
# Seeds for the fuzz targets, from what the project itself produces:
#   OUT/{hello,records,event,collector}/  by make_seeds (the real hello
#       builder and the real event structs, every kind the agent writes);
#   OUT/policy/  the YAML examples of docs/policy.md and the good and bad
#       files tests/policy_parse.t writes.
# Usage: make_corpus.sh MAKE_SEEDS_BINARY OUT
set -euo pipefail
seeds=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out.tmp"
mkdir -p "$out.tmp/policy"
"$seeds" "$out.tmp"
awk -v d="$out.tmp/policy" '/^```yaml/ { n++; f = d "/doc" n ".yaml"; next } /^```/ { f = "" } f { print > f }' \
	"$top/docs/policy.md"
# pol NAME 'lines...': each single-quoted file body of the policy test.
awk -v d="$out.tmp/policy" '
	/^pol [a-z0-9]+ \x27/ { f = d "/test-" $2 ".yaml"; sub(/^pol [a-z0-9]+ \x27/, "") }
	f { line = $0; end = sub(/\x27( .*)?$/, "", line); print line > f; if (end) { close(f); f = "" } }
' "$top/tests/policy_parse.t"
rm -rf "$out"
mv "$out.tmp" "$out"
