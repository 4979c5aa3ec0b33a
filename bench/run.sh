#!/usr/bin/env bash
# Runs every benchmark in bench/*.sh, one after the other.
set -u
cd "$(dirname "$0")/.."
rc=0
for b in bench/*.sh; do
	[ "$b" = bench/run.sh ] && continue
	echo "== $b"
	bash "$b" || rc=1
done
exit $rc
