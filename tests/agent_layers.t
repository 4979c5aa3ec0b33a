#!/usr/bin/env bash
# The agent's folders form one chain (Makefile, docs/architecture.md):
#   core <- observe, sinks, stream, enforce <- control <- vigild.c
# Each folder compiles against an include root with only the folders below
# it, so a wrong-way include does not build; this test reads what the
# compiler saw (the -MMD dependency files of the build) and fails on any
# include that reaches a folder it may not, also by a path such as
# "../control/x.h" that the include roots cannot stop.
. "$(dirname "$0")/lib.sh"
plan 3

# The chain as the Makefile states it: AGENT_BELOW_<folder> := <folders>.
declare -A below
while read -r name _ rest; do
	below[${name#AGENT_BELOW_}]="$rest"
done < <(grep -E '^AGENT_BELOW_[a-z]+ *:=' "$TOP/Makefile" | sed 's/:=/ := /')
[ "${#below[@]}" -ge 6 ] && [ -z "${below[core]}" ] && [ -n "${below[vigild]}" ]
ok $? "the Makefile states the chain (${#below[@]} folders)"

# folder_of PATH: the agent folder a file is in ("vigild" for agent/*.c),
# or nothing for files outside agent/.
folder_of() {
	local rel=${1#"$TOP"/agent/}
	[ "$rel" != "$1" ] || return 0
	case $rel in */*) echo "${rel%%/*}" ;; *) echo vigild ;; esac
}

n=0 wrong=""
shopt -s nullglob globstar
for d in "$TOP/$BUILD"/agent/**/*.d; do
	src=$(sed -n '1s/^[^:]*: *\([^ \\]*\).*/\1/p' "$d")
	[ -e "$TOP/$src" ] || continue	# a file since removed: its .d is stale
	from=$(folder_of "$(realpath -m "$TOP/$src")")
	[ -n "$from" ] || continue
	allowed=" $from ${below[$from]} "
	for dep in $(sed '1s/^[^:]*://; s/\\$//; /^[^ ].*:$/d' "$d"); do
		to=$(folder_of "$(realpath -m "$TOP/$dep")")
		[ -n "$to" ] || continue
		n=$((n + 1))
		[[ $allowed == *" $to "* ]] || wrong+="$src ($from) includes $dep ($to); "
	done
done
[ "$n" -gt 50 ]
ok $? "the build's dependency files name $n agent headers"
is "$wrong" "" "no agent file includes a folder above it or beside it"
done_testing
