#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# storaged-root.service (dracut, systemd initrd): see the unit.
/usr/lib/storaged/storaged-root
rc=$?
case $rc in
0 | 3) exit 0 ;;
1) exit 1 ;; # OnFailure=emergency.target: the message is on the console
esac

# Degraded, with consent: the present members count as ready for systemd
# (udev's 64-btrfs.rules said not ready), and sysroot.mount gets -o degraded.
fsid=$(grep -o 'btrfs [0-9a-f-]*:' /run/storaged-root/degraded | head -n 1 | sed 's/^btrfs //; s/:$//')
if [ -n "$fsid" ]; then
	mkdir -p /run/udev/rules.d
	printf 'SUBSYSTEM=="block", ENV{ID_FS_UUID}=="%s", ENV{SYSTEMD_READY}="1"\n' "$fsid" \
		>/run/udev/rules.d/65-storaged-degraded.rules
	udevadm control --reload
	udevadm trigger --action=change --subsystem-match=block --property-match=ID_FS_UUID="$fsid"
	udevadm settle --timeout=30
fi
flags=
# shellcheck disable=SC2013 # words, not lines
for x in $(cat /proc/cmdline); do
	case $x in rootflags=*) flags=${x#rootflags=} ;; esac
done
mkdir -p /run/systemd/system/sysroot.mount.d
printf '[Mount]\nOptions=%s\n' "${flags:+$flags,}degraded" \
	>/run/systemd/system/sysroot.mount.d/50-storaged-degraded.conf
systemctl daemon-reload
exit 0
