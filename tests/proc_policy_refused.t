#!/usr/bin/env bash
# Bad exec and file rules are refused by `vigil policy check` with the
# file, line and column of what is wrong, and why.
. "$(dirname "$0")/lib.sh"

LONG=/$(printf 'a%.0s' $(seq 256))
# name|policy body|what the error must say (file:line:column: ...)
ROWS=(
	"unknown selector|  - { on: exec, binaries: { in: [/bin/sh] }, action: post }|:2:17: unknown key in an exec or file rule"
	"unknown operator|  - { on: exec, binary: { contains: [sh] }, action: post }|:2:27: unknown operator (one of: in, not_in, prefix"
	"relative path|  - { on: openat, path: { prefix: [etc/] }, action: post }|:2:36: 'path': a relative path"
	"'..' in a path|  - { on: openat, path: { equal: [/etc/../x] }, action: post }|:2:35: 'path': '//', '.' and '..' never appear"
	"network action on exec|  - { on: exec, action: reject }|:2:25: action reject is not for exec rules (post, nopost, signal or sigkill)"
	"process action on a network rule|  - { action: sigkill, port: 22 }|:2:15: action sigkill is not for network rules"
	"pattern over 256 bytes|  - { on: exec, binary: { prefix: [$LONG] }, action: post }|:2:36: 'binary': a pattern of 257 bytes; at most 256 (an LPM key)"
	"signal without a number|  - { on: exec, action: signal }|:2:25: action signal needs 'signal: N'"
	"intent on exec|  - { on: exec, intent: read, action: post }|:2:17: 'intent' is for file rules"
	"exec mixed with files|  - { on: [exec, open], action: post }|:2:11: 'on' mixes exec with file verbs"
	"unknown verb|  - { on: unlink, action: post }|:2:11: unknown verb (one of: exec, open, openat, openat2, creat)"
	"container id too short|  - { on: exec, container: { in: [abc123] }, action: post }|:2:35: 'container': not a container id: 12 to 64 lowercase hex digits"
	"container id in capitals|  - { on: exec, container: { in: [ABCDEF0123456] }, action: post }|:2:35: 'container': not a container id"
	"container id over 64 digits|  - { on: openat, container: { not_in: [$(printf '0%.0s' $(seq 65))] }, action: post }|:2:41: 'container': not a container id"
	"container id with a non-hex digit|  - { on: exec, container: { in: [0123456789abg] }, action: post }|:2:35: 'container': not a container id"
	"container operator|  - { on: exec, container: { prefix: [abcdef0123456] }, action: post }|:2:30: unknown operator (one of: in, not_in)"
	"container as a list|  - { on: exec, container: [abcdef0123456], action: post }|:2:28: 'container' is a mapping of operators to patterns (in: [...])"
)
plan $((${#ROWS[@]} + 1))
for row in "${ROWS[@]}"; do
	IFS='|' read -r name body want <<<"$row"
	printf 'rules:\n%s\n' "$body" >"$T_DIR/p.yaml"
	"$VIGIL" policy check "$T_DIR/p.yaml" >/dev/null 2>"$T_DIR/err"
	rc=$?
	[ $rc -ne 0 ] && grep -qF -- "$T_DIR/p.yaml$want" "$T_DIR/err"
	ok $? "refused: $name"; grep -qF -- "$want" "$T_DIR/err" || diag "$(cat "$T_DIR/err")"
done
printf 'mode: monitor\nrules:\n  - { action: drop }\n' >"$T_DIR/p.yaml"
"$VIGIL" policy check "$T_DIR/p.yaml" 2>&1 | grep -qF "$T_DIR/p.yaml:1:1: 'mode: monitor' is for exec and file rules"
ok $? "refused: mode: monitor in a file with no exec or file rule"
done_testing
