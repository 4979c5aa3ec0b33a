#!/usr/bin/env bash
# make install honours PREFIX and DESTDIR and installs binaries, man pages
# and the systemd unit.
. "$(dirname "$0")/lib.sh"
plan 7
ROOT="$T_DIR/root"
make -s -C "$TOP" BUILD="$BUILD" install DESTDIR="$ROOT" PREFIX=/opt/vigil >"$T_DIR/log" 2>&1
ok $? "make install DESTDIR=... PREFIX=/opt/vigil"
[ -x "$ROOT/opt/vigil/sbin/vigild" ] && [ -x "$ROOT/opt/vigil/bin/vigil" ]
ok $? "binaries under PREFIX"
[ -f "$ROOT/opt/vigil/share/man/man8/vigild.8" ] && [ -f "$ROOT/opt/vigil/share/man/man8/vigil.8" ]
ok $? "man pages under PREFIX"
grep -q '^ExecStart=/opt/vigil/sbin/vigild ' "$ROOT/lib/systemd/system/vigild.service" &&
	grep -q '^ExecStart=/opt/vigil/bin/vigil-collector ' "$ROOT/lib/systemd/system/vigil-collector.service"
ok $? "systemd units point at the installed agent and collector"
[ -f "$ROOT/etc/vigil/vigild.conf" ] && [ -f "$ROOT/etc/vigil/collector.conf" ] &&
	[ "$(stat -c %a "$ROOT/etc/vigil/collector-tls")" = 700 ]
ok $? "config files and the collector's TLS folder in /etc/vigil"
echo "# mine" >>"$ROOT/etc/vigil/vigild.conf"
make -s -C "$TOP" BUILD="$BUILD" install DESTDIR="$ROOT" PREFIX=/opt/vigil >"$T_DIR/log" 2>&1
grep -q '^# mine$' "$ROOT/etc/vigil/vigild.conf"
ok $? "a second install keeps the operator's config file"
man -l "$ROOT/opt/vigil/share/man/man8/vigild.8" 2>&1 | grep -q -- '--export-file' || \
	groff -man -Tutf8 "$ROOT/opt/vigil/share/man/man8/vigild.8" 2>/dev/null | grep -q -- 'export' || \
	grep -q 'export\\-file' "$ROOT/opt/vigil/share/man/man8/vigild.8"
ok $? "the man page renders and documents the options"
done_testing
