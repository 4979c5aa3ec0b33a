#!/usr/bin/env bash
# Installs the Debian packages vigil's build, tests and benchmarks need.
# Idempotent: runs apt-get (and apt-get update) only when a package is missing.
set -euo pipefail

BUILD_PKGS="clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
            liburing-dev libyaml-dev libnats-dev libclang-rt-14-dev libssl-dev
            libmicrohttpd-dev"
TEST_PKGS="jq perl iproute2 nftables tshark python3-scapy nats-server rsyslog
           protobuf-compiler libprotobuf-dev python3-protobuf
           procps util-linux psmisc netsniff-ng ethtool strace openssl curl
           prometheus"
BENCH_PKGS="linux-perf"	# bench/net_perf.sh
# tests/vm/run.sh: qemu, a static busybox and cpio for the initramfs, kmod
# for the modules' order (and the guest's modprobe).
VM_PKGS="qemu-system-x86 busybox-static cpio kmod"

want="$BUILD_PKGS"
case "${1:-all}" in
	build) ;;
	test) want="$BUILD_PKGS $TEST_PKGS" ;;
	bench|all) want="$BUILD_PKGS $TEST_PKGS $BENCH_PKGS" ;;
	vm) want="$BUILD_PKGS $TEST_PKGS $VM_PKGS" ;;
	*) echo "usage: $0 [build|test|bench|vm|all]" >&2; exit 2 ;;
esac

missing=()
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]} (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
