# bash completion for vigild, vigil-collector and vigil.
# Options come from each program's own --help, so they never go stale.
_vigil_opts() {
	"$1" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

_vigild() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	--log-level) COMPREPLY=($(compgen -W "error warn info debug" -- "$cur")); return ;;
	--log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
	--export-format) COMPREPLY=($(compgen -W "vigil tetragon" -- "$cur")); return ;;
	--send-path) COMPREPLY=($(compgen -W "auto uring zerocopy send" -- "$cur")); return ;;
	--proc-budget-by) COMPREPLY=($(compgen -W "cgroup uid" -- "$cur")); return ;;
	-o|--export-file|--policy|--tls-*|--spool-dir|--pin-dir)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	COMPREPLY=($(compgen -W "$(_vigil_opts "$1")" -- "$cur"))
}

_vigil() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i verb=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--pin-dir) ((i++)) ;;
		-*) ;;
		*) verb=${COMP_WORDS[i]}; break ;;
		esac
	done
	case $verb in
	"") COMPREPLY=($(compgen -W "status unpin drain policy events help --pin-dir --version" -- "$cur")) ;;
	policy) COMPREPLY=($(compgen -W "check load unload reload list" -- "$cur"))
		[ "$prev" != policy ] && COMPREPLY+=($(compgen -f -- "$cur")) ;;
	events) case $prev in
		--kind) COMPREPLY=($(compgen -W "process exit connect accept listen close reset enforce report loss throttle" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "--compact --json --tetragon --kind --binary --pid --namespace --follow --no-color" -- "$cur"))
		   COMPREPLY+=($(compgen -f -- "$cur")) ;;
		esac ;;
	unpin) COMPREPLY=($(compgen -W "--force" -- "$cur")) ;;
	drain) COMPREPLY=($(compgen -W "-o --export-format --enable-process-ns --enable-process-cred" -- "$cur")) ;;
	esac
}

complete -F _vigild vigild vigil-collector
complete -F _vigil vigil
