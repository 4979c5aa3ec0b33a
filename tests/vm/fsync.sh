#!/usr/bin/env bash
# What an OS crash of a JetStream server loses of what it acknowledged
# (docs/stream.md, "What JetStream keeps"): nats-server -js in a qemu VM
# (tests/vm/run.sh) with its store on the VM's own disk (VM_DISK, ext4);
# js_tool publishes messages one at a time, each acknowledged, printing
# "acked K"; once ACKED have been acknowledged qemu is killed (SIGKILL: the
# guest's page cache is lost, as in a power cut); a second boot starts the
# server on the same disk and counts what the stream holds. Prints
# "acknowledged A, stored S, lost L". SYNC=1 is the control: the guest
# publishes ACKED messages, then runs sync(1), and is killed after it; then
# nothing may be lost (the method sees what reached the disk). Two boots
# under TCG, about a minute each; not part of any make target.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build}
ACKED=${ACKED:-3000}
work=$(mktemp -d /tmp/vigil-fsync.XXXX)
trap 'rm -rf "$work"' EXIT
truncate -s 256M "$work/disk.img"
mkfs.ext4 -q -F "$work/disk.img"
JS="$BUILD/tests/js_tool"
guest_setup='modprobe -a virtio_blk ext4 && mkdir -p /mnt/d && mount /dev/vda /mnt/d &&
	{ nats-server -a 127.0.0.1 -p 4222 -js -sd /mnt/d/js -l /tmp/nats.log & } &&
	for i in $(seq 100); do grep -qs "Server is ready" /tmp/nats.log && break; sleep 0.2; done'

# Boot 1: publish until killed.
if [ -n "${SYNC:-}" ]; then publish="$JS publish nats://127.0.0.1:4222 f.x $ACKED && sync && echo synced"
else publish="$JS publish nats://127.0.0.1:4222 f.x 100000000"; fi
VM_DISK="$work/disk.img" VM_CMD="$guest_setup && $JS add-stream nats://127.0.0.1:4222 F f.x -1 && $publish" \
	setsid tests/vm/run.sh >"$work/boot1.out" 2>&1 & run=$!
for _ in $(seq 1800); do	# up to 15 minutes under TCG
	a=$(grep -ao "acked [0-9]*" "$work/boot1.out" | tail -1 | cut -d" " -f2 || true)
	if [ -n "${SYNC:-}" ]; then grep -q synced "$work/boot1.out" && break
	elif [ "${a:-0}" -ge "$ACKED" ]; then break; fi
	sleep 0.5
done
qemu=$(pgrep -s "$(ps -o sid= -p $run | tr -d ' ')" qemu-system || true)
[ -n "$qemu" ] || { echo "fsync: qemu is not running"; tail -20 "$work/boot1.out"; exit 2; }
kill -9 $qemu
wait $run || true
acked=$(grep -ao "acked [0-9]*" "$work/boot1.out" | tail -1 | cut -d" " -f2 || true)

# Boot 2: the same disk, the server started on it, the stream counted.
VM_DISK="$work/disk.img" VM_CMD="$guest_setup && ls -lR /mnt/d/js | sed 's/^/# store: /' &&
	grep -iE 'restor|recover|stream' /tmp/nats.log | sed 's/^/# nats: /';
	$JS read nats://127.0.0.1:4222 F f.x 5 | jq -s 'map(.data.n) | \"stored \\(length) max \\(max // 0)\"'" \
	tests/vm/run.sh >"$work/boot2.out" 2>&1 || true
grep -a '^# \(store\|nats\):' "$work/boot2.out" | head -20
stored=$(grep -ao 'stored [0-9]*' "$work/boot2.out" | tail -1 | cut -d' ' -f2 || true)
max=$(grep -ao 'max [0-9]*' "$work/boot2.out" | tail -1 | cut -d' ' -f2 || true)
[ -n "$stored" ] || { echo "fsync: the second boot did not count"; tail -30 "$work/boot2.out"; exit 2; }
echo "fsync: nats-server $(nats-server --version | awk '{ print $NF }'): acknowledged $acked," \
	"stored $stored (highest $max), lost $((acked - stored))"
