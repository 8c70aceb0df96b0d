#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# storaged-root.service (dracut, systemd initrd): see the unit.

# The unit starts once udev's coldplug is triggered, not done: the disks
# may not be probed yet, and storaged-root leaves a root it does not see
# to the initrd (exit 3), where nothing would register the other members.
# Wait for udev's queue, then for the root= device node, at most
# rd.storaged.device-timeout (plain seconds; 90 otherwise) as storaged
# would (storaged.device-timeout, without rd., as well: storaged-root).
root='' wait=90
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	x=${word#rd.}
	case $x in
	root=*) [ "$x" = "$word" ] && root=${x#root=} ;;
	storaged.device-timeout=*)
		t=${x#storaged.device-timeout=}
		t=${t%s}
		case $t in '' | *[!0-9]*) ;; *) wait=$t ;; esac
		;;
	esac
done
case $root in
UUID=*) node=/dev/disk/by-uuid/${root#UUID=} ;;
LABEL=*) node=/dev/disk/by-label/${root#LABEL=} ;;
PARTUUID=*) node=/dev/disk/by-partuuid/${root#PARTUUID=} ;;
PARTLABEL=*) node=/dev/disk/by-partlabel/${root#PARTLABEL=} ;;
/dev/*) node=$root ;;
*) node='' ;;
esac
udevadm settle --timeout="$wait"
i=0
while [ -n "$node" ] && [ ! -e "$node" ] && [ "$i" -lt "$wait" ]; do
	sleep 1
	i=$((i + 1))
done

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
# Options= replaces the generator's (ro or rw, then rootflags=): the same
# with degraded added, so that a `ro` command line still mounts read-only.
flags='' rw=ro
# shellcheck disable=SC2013 # words, not lines
for x in $(cat /proc/cmdline); do
	case $x in
	rootflags=*) flags=${x#rootflags=} ;;
	ro | rw) rw=$x ;;
	esac
done
mkdir -p /run/systemd/system/sysroot.mount.d
printf '[Mount]\nOptions=%s\n' "$rw,${flags:+$flags,}degraded" \
	>/run/systemd/system/sysroot.mount.d/50-storaged-degraded.conf
systemctl daemon-reload
exit 0
