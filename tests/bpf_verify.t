#!/usr/bin/env bash
# Every BPF program of the build, loaded alone on the running kernel
# (build/tests/prog_verify): accepted, or refused for a feature this kernel
# lacks, named in a TAP skip. Any other refusal (a verifier that cannot
# follow a bound, a size it cannot prove) fails. tests/vm/run.sh runs it on
# other kernels; docs/kernels.md lists what each one lacks.
. "$(dirname "$0")/lib.sh"

# The kernel lacks what the program needs: why, from what libbpf or the
# verifier said; nothing when the refusal is a fault of ours.
missing_feature() {
	case $1 in
	*"'bpf_sock_destroy': not found"*) echo "no bpf_sock_destroy kfunc (Linux 6.5+)" ;;
	*"BTF type ID of 'sock_send_length'"* | *"BTF type ID of 'sock_recv_length'"*)
		echo "no sock:sock_send_length/sock_recv_length tracepoints (Linux 6.3+)" ;;
	*"func 'tcp_send_reset' doesn't have 3-th argument"*)
		echo "tcp:tcp_send_reset has no reset reason argument here" ;;
	*"func 'sched_process_exit' doesn't have 2-th argument"*)
		echo "sched:sched_process_exit has no group_dead argument here" ;;
	*"cannot use helper bpf_xdp_adjust_meta#"* | *"unknown func bpf_xdp_adjust_meta#"* | \
	*"invalid func bpf_xdp_adjust_meta#"*)
		echo "XDP programs cannot call bpf_xdp_adjust_meta here (vigild loads vigil_xdp_ingress_nometa)" ;;
	*"unknown func bpf_get_current_ancestor_cgroup_id"*)
		echo "cgroup_skb programs cannot call bpf_get_current_ancestor_cgroup_id here" ;;
	esac
}

"$TOP/$BUILD/tests/prog_verify" "$TOP/$BUILD"/*.bpf.o "$TOP/$BUILD"/bench/*.bpf.o "$TOP/$BUILD"/tests/*.bpf.o >"$T_DIR/verify.tsv"
plan "$(wc -l <"$T_DIR/verify.tsv")"
diag "kernel $(uname -r)"
while IFS=$'\t' read -r obj prog status insns words; do
	name="$(basename "$obj" .bpf.o)/$prog"
	if [ "$status" = ok ]; then
		ok 0 "$name: accepted, $insns instructions processed"
		continue
	fi
	why=$(missing_feature "$words")
	# vigild loads the *_cast hooks only with bpf_rdonly_cast (docs/kernels.md).
	[ -z "$why" ] && [ "${prog%_cast}" != "$prog" ] && ! kernel_has FUNC bpf_rdonly_cast &&
		why="no bpf_rdonly_cast kfunc (Linux 6.2+): vigild loads $(basename "$obj" .bpf.o)/${prog%_cast} instead"

	if [ -n "$why" ]; then
		_t_n=$((_t_n + 1))
		echo "ok $_t_n - $name # SKIP $why"
	else
		ok 1 "$name: $status after $insns instructions"
		diag "  $words"
	fi
done <"$T_DIR/verify.tsv"
done_testing
