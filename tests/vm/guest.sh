#!/bin/bash
# Stage two inside the VM, PID 1 on the host's own user space (tests/vm/init
# started it on a tmpfs overlay of the host root). Mounts what the tests need,
# runs the test files (or VM_CMD) with TAP on /dev/hvc0, writes the exit
# status to /vm-out/status for tests/vm/run.sh, and powers the VM off.
# With VM_SYSTEMD=1 it hands PID 1 over to the host's systemd instead, on a
# target of its own (vigil-vmtest.target, below), whose one service runs
# this script again with --under-systemd: the tests then run as a service
# of a real systemd (tests/vm/systemd.t starts vigil's units there).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
# Under systemd, it mounted what the tests need before.
if [ "${1:-}" != --under-systemd ]; then
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
fi

finish() {
	echo "$1" >/vm-out/status
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

# shellcheck source=/dev/null
set -a; . /vm-out/env || finish 3; set +a
if [ "${VM_SYSTEMD:-}" = 1 ] && [ "${1:-}" != --under-systemd ]; then
	# Only this target and what it pulls in start: not the host's enabled
	# services (multi-user.target), nor its timers (apt, man-db) that would
	# take the one vCPU. The overlay is the VM's own: masking writes there.
	mkdir -p /run/systemd/system
	ln -sf /dev/null /etc/systemd/system/timers.target
	# A host root that is a container's has /.dockerenv: systemd would run
	# as in a container (no credential mounts for services, among others),
	# where this is a VM.
	rm -f /.dockerenv
	cat >/run/systemd/system/vigil-vmtest.target <<-UNIT
		[Unit]
		Description=vigil: test files under systemd (tests/vm/guest.sh)
		Requires=vigil-vmtest.service
		After=vigil-vmtest.service
		AllowIsolate=yes
	UNIT
	# After basic.target, as a service of the host's would start; the
	# tests' TAP goes to the virtio console, as without systemd.
	cat >/run/systemd/system/vigil-vmtest.service <<-UNIT
		[Unit]
		Description=vigil: test files under systemd (tests/vm/guest.sh)
		DefaultDependencies=no
		Wants=basic.target systemd-journald.socket
		After=basic.target systemd-journald.socket
		[Service]
		Type=exec
		ExecStart=/bin/bash $TOP/tests/vm/guest.sh --under-systemd
		StandardOutput=journal+console
	UNIT
	exec /lib/systemd/systemd --unit=vigil-vmtest.target --log-target=console --show-status=no
fi
exec >/dev/hvc0 2>&1 || finish 3
modprobe -a veth tls sch_ingress cls_bpf nf_tables 2>&1 | sed 's/^/# vm: /'
echo "# vm: kernel $(uname -r), booted in $(cut -d' ' -f1 /proc/uptime) s"
cd "$TOP" || finish 3

# This shell is PID 1 (or systemd is): it reaps the orphans of the tests
# while it waits.
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
