#!/bin/bash
# Stage two inside the VM, PID 1 on the host's own user space (tests/vm/init
# started it on a tmpfs overlay of the host root). Mounts what the tests need,
# runs the test files (or VM_CMD) with TAP on /dev/hvc0, writes the exit
# status to /vm-out/status for tests/vm/run.sh, and powers the VM off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm /vm-out /lib/modules
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
# devtmpfs lacks what udev adds: bash's <(...) needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t 9p -o trans=virtio,version=9p2000.L,ro modules /lib/modules
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vmout /vm-out
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
ip link set lo up
hostname vigil-vm

finish() {
	echo "$1" >/vm-out/status
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

# shellcheck source=/dev/null
set -a; . /vm-out/env || finish 3; set +a
exec >/dev/hvc0 2>&1 || finish 3
modprobe -a veth tls sch_ingress cls_bpf nf_tables 2>&1 | sed 's/^/# vm: /'
echo "# vm: kernel $(uname -r), booted in $(cut -d' ' -f1 /proc/uptime) s"
cd "$TOP" || finish 3

# This shell is PID 1: it reaps the orphans of the tests while it waits.
if [ -n "${VM_CMD:-}" ]; then
	bash -c "$VM_CMD" &
else
	# shellcheck disable=SC2086
	T_KEEP=1 BUILD=$BUILD prove -v --timer --nocolor --exec "timeout -k 10 $TEST_TIMEOUT bash" $TESTS &
fi
wait $!
rc=$?
echo "# vm: exit status $rc after $(cut -d' ' -f1 /proc/uptime) s"
if [ "$rc" -ne 0 ]; then
	dmesg >/vm-out/dmesg.txt
	mkdir -p /vm-out/tests && cp -a /tmp/vigil-test.* /vm-out/tests/ 2>/dev/null
fi
finish "$rc"
