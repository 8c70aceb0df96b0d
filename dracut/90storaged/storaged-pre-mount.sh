#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dracut pre-mount hook (initrd without systemd): storaged assembles the
# root filesystem's devices; see storaged(8), INITRAMFS.
type die >/dev/null 2>&1 || . /lib/dracut-lib.sh

/usr/lib/storaged/storaged-root
case $? in
1)
	die "storaged: the root filesystem is not ready (see the messages above)"
	;;
2)
	# mount-root.sh reads rootflags with getarg
	rflags="$(getarg rootflags=)"
	echo "rootflags=${rflags:+$rflags,}degraded" >/etc/cmdline.d/95-storaged-degraded.conf
	;;
esac
