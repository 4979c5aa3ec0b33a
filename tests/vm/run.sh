#!/usr/bin/env bash
# Boots another kernel under qemu and runs vigil's test files inside it, on
# this machine's own user space (docs/kernels.md):
#   KERNEL_DEB  a Debian/Ubuntu linux-image package name or a .deb path
#               (default: the one linux-image-amd64 depends on now)
#   TESTS       test files to run (default: the 6.1 smoke subset below)
#   VM_CMD      a shell command to run instead of the tests (in the repo)
#   VM_SYSTEMD  1: the host's systemd runs as PID 1 in the guest and the
#               tests run as a service of it (tests/vm/guest.sh)
#   VM_MEM (MiB), VM_TIMEOUT and TEST_TIMEOUT (s), VM_ACCEL (kvm|tcg)
#   VM_DISK     a raw disk image the guest sees as /dev/vda (virtio-blk;
#               what the guest writes reaches it only through its own page
#               cache: killing qemu is the guest's power cut, tests/vm/fsync.sh)
# The guest's exit status is this script's; its console log and, on failure,
# its dmesg and test folders stay in $BUILD/vm/<kernel release>/.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
# The smoke subset, what CI runs on 6.1: process events (procfs start,
# loss), network events and reports, the stream across an agent kill (also
# through kernel TLS), the collector's hostile input, cgroup deny, TC reject
# and the router's resets (clsact filters there), every reset rule shape
# with XDP on the router (the XDP to TC handoff), policy reloads, every
# program verified, rule matching case by case (3 s: 6.1's verifier checks
# bpf_loop callbacks differently, docs/kernels.md).
SMOKE="tests/bpf_verify.t tests/rule_match.t tests/process_events.t tests/loss.t tests/net_events.t
	tests/report_exact.t tests/stream_restart.t tests/collector_hostile.t tests/deny_cgroup.t
	tests/reject_tc.t tests/reset_router.t tests/reset_shapes_xdp.t tests/policy_tc.t tests/policy_reload.t
	tests/stream_tls.t tests/stream_ktls.t"
TESTS=${TESTS:-$SMOKE}
CACHE=${VIGIL_KERNEL_CACHE:-$HOME/.cache/vigil-kernels}
VM_MEM=${VM_MEM:-1024}
VM_TIMEOUT=${VM_TIMEOUT:-3600}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
# What stage one needs to reach the host root; the rest loads on demand.
INIT_MODULES="virtio_pci virtio_console 9pnet_virtio 9p overlay"

die() { echo "vm: $*" >&2; exit 2; }
./scripts/install-deps.sh vm
[ -x "$BUILD/vigild" ] || die "$BUILD/vigild is not built: run make first"

# The kernel package, fetched once into the cache.
mkdir -p "$CACHE"
deb=${KERNEL_DEB:-}
if [ -z "$deb" ]; then
	deb=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
	[ -n "$deb" ] || die "apt knows no linux-image-amd64: set KERNEL_DEB"
fi
if [ ! -f "$deb" ]; then
	pkg=$deb
	deb=$(ls "$CACHE/${pkg}"_*.deb 2>/dev/null | tail -1 || true)
	if [ -z "$deb" ]; then
		(cd "$CACHE" && apt-get download "$pkg") || die "cannot download $pkg"
		deb=$(ls "$CACHE/${pkg}"_*.deb | tail -1)
	fi
fi
root="$CACHE/$(basename "$deb" .deb)"
if [ ! -f "$root/.extracted" ]; then
	rm -rf "$root"
	dpkg-deb -x "$deb" "$root"
	kver=$(ls "$root/lib/modules")
	depmod -b "$root" "$kver"
	touch "$root/.extracted"
fi
kver=$(ls "$root/lib/modules")
vmlinuz=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | head -1)
[ -n "$vmlinuz" ] || die "$deb holds no /boot/vmlinuz-*"
grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$root/boot/config-$kver" ||
	die "$kver is built without BTF (CONFIG_DEBUG_INFO_BTF): vigil cannot run on it"

# The initramfs: busybox, stage one and its modules, rebuilt when init changes.
initrd="$root/vigil-initramfs.cpio.gz"
if [ ! -f "$initrd" ] || [ tests/vm/init -nt "$initrd" ]; then
	stage=$(mktemp -d)
	mkdir -p "$stage"/{bin,proc,sys,dev}
	cp /bin/busybox "$stage/bin/busybox"
	cp tests/vm/init "$stage/init"
	for m in $INIT_MODULES; do
		modprobe -d "$root" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r ko; do
		rel=${ko#"$root"/}
		mkdir -p "$stage/$(dirname "$rel")"
		cp "$ko" "$stage/$rel"
		echo "$rel" >>"$stage/modules.order"
	done
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$stage"
fi

# KVM only where it runs a guest: /dev/kvm exists under nested qemu too.
accel=${VM_ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accel=kvm; fi
fi
if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi

out="$TOP/$BUILD/vm/$kver"
rm -rf "$out"
mkdir -p "$out"
{
	printf 'TOP=%q\nBUILD=%q\nTEST_TIMEOUT=%q\n' "$TOP" "$BUILD" "$TEST_TIMEOUT"
	printf 'TESTS=%q\nVM_CMD=%q\nVM_SYSTEMD=%q\n' "$TESTS" "${VM_CMD:-}" "${VM_SYSTEMD:-}"
	# How much slower than the host the guest runs, for the tests' time caps.
	printf 'T_SLOW=%q\n' "$([ "$accel" = tcg ] && echo 5 || echo 1)"
} >"$out/env"
echo "vm: $kver from $(basename "$deb"), $accel, ${VM_MEM} MiB, 1 vCPU; log in $out" >&2

start=$SECONDS
set +e
timeout --foreground -k 10 "$VM_TIMEOUT" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 1 -m "$VM_MEM" \
	-nodefaults -no-reboot -display none -monitor none \
	-kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 vigil_top=$TOP" \
	-serial "file:$out/console.log" \
	-device virtio-serial-pci -chardev stdio,id=tap,signal=off -device virtconsole,chardev=tap \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$root/lib/modules,mount_tag=modules,security_model=none,readonly=on" \
	-virtfs "local,path=$out,mount_tag=vmout,security_model=none" \
	${VM_DISK:+-drive "file=$VM_DISK,format=raw,if=virtio,cache=writeback"} \
	</dev/null | tee "$out/tap.txt"
qrc=${PIPESTATUS[0]}
set -e
rc=$(cat "$out/status" 2>/dev/null || echo 1)
echo "vm: $kver ($accel) ran ${SECONDS}s; exit status $rc" >&2
# Skips are counted and named: each is a feature this kernel lacks.
tr -d '\r' <"$out/tap.txt" | sed -nE 's/^(ok [0-9]+|1\.\.0) # SKIP (.*)/\1\t\2/p' >"$out/skips.txt"
if [ -s "$out/skips.txt" ]; then
	echo "vm: $(grep -vc '^1\.\.0' "$out/skips.txt") tests and $(grep -c '^1\.\.0' "$out/skips.txt") whole files skipped, by reason:" >&2
	cut -f2 "$out/skips.txt" | sort | uniq -c | sort -rn | sed 's/^/vm: /' >&2
fi
if [ ! -f "$out/status" ]; then
	echo "vm: the guest did not finish (qemu status $qrc): see $out/console.log" >&2
	tail -20 "$out/console.log" >&2
elif [ "$rc" -ne 0 ]; then
	echo "vm: guest log, dmesg and test folders kept in $out" >&2
fi
exit "$rc"
