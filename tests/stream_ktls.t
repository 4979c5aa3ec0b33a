#!/usr/bin/env bash
# The agent's stream sink over tls:// with kernel TLS (docs/stream.md, "Which
# path sends"): after the handshake OpenSSL hands the TX keys to the kernel
# and the sink sends the ring's own pages with send(); a TLS server reads,
# checks every sequence number in order and acknowledges. The producer and
# the sink are those of bench/stream_consumers (mode t), without vigild: a
# kernel too old for vigild's programs runs it too. Needs the kernel's TLS
# (CONFIG_TLS, the tls module): this machine's 6.18 has none and skips;
# `make test-kernel TESTS=tests/stream_ktls.t` runs it on Debian 12's 6.1.
. "$(dirname "$0")/lib.sh"
modprobe tls 2>/dev/null
[ -d /sys/module/tls ] || skip_all "this kernel has no TLS (CONFIG_TLS): make test-kernel TESTS=tests/stream_ktls.t runs this on Debian 12's 6.1"
plan 5
. "$(dirname "$0")/tls_lib.sh"
ca ca && cert ca server server 'IP:127.0.0.1' && cert ca client bench 'DNS:bench'
ok $? "test certificates made"

# run SIZE: 2 s of SIZE-byte events through kernel TLS, offered as fast as
# the sink takes them (the producer waits while the ring is half full: a
# slow kernel, such as one under qemu without KVM, sends fewer, never loses).
run() {
	BENCH_TLS_DIR="$P" timeout 60 "$TOP/$BUILD/bench/stream_consumers" t "$1" 2 0 nowake \
		>"$T_DIR/out$1" 2>"$T_DIR/err$1"
}
run 64
grep -q "path .*(kernel TLS)" "$T_DIR/err64"
ok $? "the sink sends through kernel TLS ($(grep -o 'path [^:]*' "$T_DIR/err64"))" ||
	sed 's/^/#   /' "$T_DIR/err64"
grep -q "lossless=yes" "$T_DIR/out64" && grep -q "seq_errors=0 " "$T_DIR/out64" &&
	! grep -q "taken=0 " "$T_DIR/out64"
ok $? "64 B events: every one read once, in order, by the TLS reader" || sed 's/^/#   /' "$T_DIR/out64"
run 512
grep -q "path .*(kernel TLS)" "$T_DIR/err512"
ok $? "512 B events: through kernel TLS too"
grep -q "lossless=yes" "$T_DIR/out512" && grep -q "seq_errors=0 " "$T_DIR/out512" &&
	! grep -q "taken=0 " "$T_DIR/out512"
ok $? "512 B events: every one read once, in order" || sed 's/^/#   /' "$T_DIR/out512"
diag "$(cat "$T_DIR/out64" "$T_DIR/out512")"
done_testing
