#!/bin/bash
# The ROOT filesystem on a two-disk btrfs RAID1 (issue 11): boot Debian
# bookworm under qemu (TCG) from partitioned virtio disks (GPT, one
# partition each, PARTLABEL rootraid1-a/-b) with root=UUID=<fsid>, first
# with Debian's stock initramfs (btrfs-progs' `btrfs device scan` and
# udev's 64-btrfs.rules, no storaged), then with storaged's initramfs-tools
# hook and boot script installed by the package (dpkg -i of the .deb that
# tests/packaging/lib.sh builds; update-initramfs).
#
#   stock-consent  stock initrd, disk 2 absent, storaged.degraded=after-timeout
#   stock-refuse   stock initrd, disk 2 absent
#      (recorded, never failed on: what Debian does without storaged)
#   full           storaged, both disks: root mounted, not degraded
#   consent        storaged, disk 2 absent, storaged.degraded=after-timeout
#                  storaged.device-timeout=10: root mounted -o degraded after
#                  the timeout, the warning on the console and in the booted
#                  system's journal
#   refuse         storaged, disk 2 absent, storaged.device-timeout=10: the
#                  emergency message (fsid, members present/expected, devid 2,
#                  the option to consent) and the initramfs shell within the
#                  timeout plus a margin; qemu is killed then
#   stale          storaged, disk 2 back after the consent boot wrote to disk
#                  1 alone (the same disk files, written through): boots
#
# Opt-in like t-boot-qemu.sh (STORAGED_BOOT_TEST=1; run-tests.sh sets it
# in CI); shares its cached systemd image (build-image.sh).
# STORAGED_BOOT_ONLY="full refuse" runs a subset; STORAGED_BOOT_KEEP=1 keeps
# the scratch directory.  The RAID1 is made on the host on loop devices
# over the partitions of the image files (losetup -o/--sizelimit), filled
# with a copy of the image and detached again before any boot.
. "$(dirname "$0")/../packaging/lib.sh"
. "$(dirname "$0")/root-raid1-lib.sh"

root_raid1_init "stock-consent stock-refuse full consent refuse stale"
SHELL_RE='\(initramfs\)'
root_raid1_image systemd

# ---------------------------------------------------------------- root tree
# Small initrds, made in seconds instead of minutes: the modules a virtio
# btrfs root needs, not MODULES=most (the boot scripts are the same).
echo MODULES=list >"$R/etc/initramfs-tools/conf.d/zz-storaged-root-test"
printf '%s\n' virtio_pci virtio_blk btrfs >>"$R/etc/initramfs-tools/modules"
mkinitrd() { # OUT: update-initramfs in the chroot; the initrd to OUT, its file list to OUT.list
	chroot "$R" update-initramfs -c -k "$kver" >"$1.log" 2>&1 ||
		{ cat "$1.log"; fail "update-initramfs for $1"; }
	chroot "$R" lsinitramfs "/boot/initrd.img-$kver" >"$1.list" 2>/dev/null
	mv "$R/boot/initrd.img-$kver" "$1"
}

# Debian as shipped: the image's overrides of btrfs-progs' initramfs
# pieces (build-image.sh, guest/initramfs-no-btrfs-scan) put aside.
mkdir -p "$SCRATCH/overrides"
mv "$R/etc/initramfs-tools/scripts/local-premount/btrfs" "$SCRATCH/overrides/"
mv "$R/etc/initramfs-tools/hooks/zz-storaged-test-no-btrfs-rules" "$SCRATCH/overrides/"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-stock"
grep -q 'scripts/local-premount/btrfs' "$SCRATCH/initrd-stock.list" || fail "the stock initrd has no btrfs scan"
note "stock initrd ($(($(date +%s) - t))s)"

# storaged from its package; every btrfs registration in the initrd is
# storaged's again (the overrides back), as in t-boot-qemu.sh.
mv "$SCRATCH/overrides/btrfs" "$R/etc/initramfs-tools/scripts/local-premount/"
mv "$SCRATCH/overrides/zz-storaged-test-no-btrfs-rules" "$R/etc/initramfs-tools/hooks/"
install_deb
rm -f "$R"/boot/initrd.img-*
[ -x "$R/usr/share/initramfs-tools/hooks/storaged" ] || fail "the package put no initramfs-tools hook"
[ -x "$R/usr/share/initramfs-tools/scripts/local-premount/storaged" ] ||
	fail "the package put no initramfs-tools local-premount script"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-storaged"
note "storaged initrd ($(($(date +%s) - t))s)"
if [ -s "$SCRATCH/initrd-storaged.list" ]; then
	for f in usr/sbin/storaged usr/lib/storaged/storaged-root scripts/local-premount/storaged; do
		grep -qx "$f" "$SCRATCH/initrd-storaged.list" || fail "$f is not in storaged's initrd"
	done
fi


# ---------------------------------------------------------------- disks
root_raid1_disks

# ---------------------------------------------------------------- boots
# what a stock boot did, in a few words, from its console
stock_summary() {
	local s
	s=$(grep -a -m1 -e 'Failed to mount' -e 'ALERT!' -e 'Gave up waiting' "$SERIAL.txt")
	echo "${s:-no initramfs message}; $(grep -a -m1 -o 'BTRFS error[^]]*' "$SERIAL.txt" | head -c 160)"
}

if want stock-consent; then
	boot stock-consent "$SCRATCH/initrd-stock" 1 180 no "$CONSENT"
	verdict stock-consent recorded "$(stock_summary)"
fi
if want stock-refuse; then
	boot stock-refuse "$SCRATCH/initrd-stock" 1 180 no "storaged.device-timeout=10"
	verdict stock-refuse recorded "$(stock_summary)"
fi
if want full; then
	boot full "$SCRATCH/initrd-storaged" 2 300 no "storaged_test.expect=full"
	line=$(result_line)
	case "$line" in "ROOT-BOOT-RESULT: ok "*) verdict full ok "$line" ;; *) verdict full FAIL "${line:-no result}" ;; esac
fi
if want consent; then
	boot consent "$SCRATCH/initrd-storaged" 1 300 yes "$CONSENT storaged_test.expect=degraded"
	verdict_consent ""
fi
if want refuse; then
	# 10s timeout, plus the kernel and udev before it under TCG: a shell
	# within 150s, never an endless wait.
	boot refuse "$SCRATCH/initrd-storaged" 1 150 no "storaged.device-timeout=10"
	verdict_refuse "initramfs shell"
fi
if want stale; then
	# disk 1 was written alone in the consent boot (persist=yes): disk 2 is stale
	want consent || fail "the stale boot needs the consent boot before it"
	boot stale "$SCRATCH/initrd-storaged" 2 300 no "storaged.device-timeout=10 storaged_test.expect=full"
	line=$(result_line)
	why=
	case "$line" in "ROOT-BOOT-RESULT: ok "*) ;; *) why="${line:-no result}" ;; esac
	# storaged names the stale member and the scrub
	grep -aq "devid 2 ('/dev/vdb1') is stale: generation" "$SERIAL.txt" || why="$why; no stale-member warning"
	if [ -z "$why" ]; then verdict stale ok "$line"; else verdict stale FAIL "$why"; fi
fi

root_raid1_end
