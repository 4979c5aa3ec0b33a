#!/usr/bin/env bash
# dist/vigil.bash, as bash runs it: each program gets a completion, vigild's
# options come from its own --help (a new option completes without an edit
# here), vigil's verbs and values complete.
. "$(dirname "$0")/lib.sh"
plan 5
# complete_line PROGRAM WORDS...: the completions bash would offer for the
# last word, one per line (the program by its path in this build).
complete_line() {
	bash -c '
		source "$1"; shift
		prog=$1; shift
		COMP_WORDS=("$prog" "$@"); COMP_CWORD=$#
		fn=$(complete -p "$(basename "$prog")" | sed -n "s/.*-F \([^ ]*\).*/\1/p")
		"$fn" "$prog" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$TOP/dist/vigil.bash" "$@"
}
for p in vigild vigil vigil-collector; do
	bash -c 'source "$1"; complete -p "$2"' _ "$TOP/dist/vigil.bash" "$p" >/dev/null 2>&1 || echo "$p"
done >"$T_DIR/missing"
is "$(cat "$T_DIR/missing")" "" "vigild, vigil and vigil-collector each get a completion"
# Through symlinks named as installed, so the scripts find the programs.
mkdir -p "$T_DIR/bin"
for p in vigild vigil vigil-collector; do ln -s "$TOP/$BUILD/$p" "$T_DIR/bin/$p"; done
is "$(complete_line "$T_DIR/bin/vigild" --metrics-l)" "--metrics-label" "vigild --metrics-l completes to --metrics-label (from its --help)"
is "$(complete_line "$T_DIR/bin/vigild" --log-level d)" "debug" "vigild --log-level d completes to debug"
is "$(complete_line "$T_DIR/bin/vigil" pol)" "policy" "vigil pol completes to policy"
is "$(complete_line "$T_DIR/bin/vigil-collector" --publish-la)" "--publish-layout" \
	"vigil-collector --publish-la completes to --publish-layout"
done_testing
