#!/bin/bash
# The ROOT filesystem on a two-disk btrfs RAID1 with a dracut initrd (issue
# 11): as t-root-raid1-qemu.sh, but the image (build-image.sh dracut) has
# systemd-sysv and dracut instead of initramfs-tools, so the initrd runs
# systemd.  Boots Debian bookworm under qemu (TCG) with root=UUID=<fsid>,
# first with dracut's stock initrd (its 90btrfs module: udev's
# 64-btrfs.rules, no storaged), then with storaged's dracut module
# (90storaged) installed by the package (dpkg -i of the .deb that
# tests/packaging/lib.sh builds) and `dracut -f` in the image:
#
#   stock-absent  stock initrd, disk 2 absent, consent on the command line
#                 (recorded, never failed on: what dracut does without
#                 storaged; bounded by STORAGED_BOOT_STOCK_LIMIT, 120s)
#   full          storaged, both disks: root mounted rw, not degraded, and
#                 both members registered by storaged
#   consent       storaged, disk 2 absent, storaged.degraded=after-timeout
#                 storaged.device-timeout=10: root mounted -o degraded after
#                 the timeout, storaged registered disk 1, the warning on the
#                 console and in the booted system's journal
#   refuse        storaged, disk 2 absent, storaged.device-timeout=10:
#                 storaged's message (fsid, members present/expected, devid
#                 2, the option to consent) and dracut's emergency shell
#                 within the timeout plus a margin; qemu is killed then
#
# In the storaged boots udev's 64-btrfs.rules is kept out of the initrd by
# the image's test module 99storaged-test-no-btrfs-rules (build-image.sh,
# guest/dracut-image-setup; dracut's own `btrfs device scan` is only in its
# non-systemd initrd): every registration the kernel logs must be
# storaged's.  Opt-in like the other boot tests (STORAGED_BOOT_TEST=1);
# STORAGED_BOOT_ONLY="full consent" runs a subset; STORAGED_BOOT_KEEP=1
# keeps the scratch directory.
. "$(dirname "$0")/../packaging/lib.sh"
. "$(dirname "$0")/root-raid1-lib.sh"

root_raid1_init "stock-absent full consent refuse"
# dracut's emergency.service (dracut-emergency) under systemd
SHELL_RE='Entering emergency mode|dracut:/#'
root_raid1_image dracut

# ---------------------------------------------------------------- root tree
# dracut in the chroot reads /proc (kernel modules, its own checks).
mkdir -p "$R/proc"
mount -t proc proc "$R/proc" || fail "mount /proc in the image"
mkinitrd() { # OUT: dracut -f in the chroot; the initrd to OUT, its file list to OUT.list
	chroot "$R" dracut -f "/boot/initrd.img-$kver" "$kver" >"$1.log" 2>&1 ||
		{ cat "$1.log"; fail "dracut -f for $1"; }
	chroot "$R" lsinitrd "/boot/initrd.img-$kver" 2>/dev/null | awk '{print $NF}' >"$1.list"
	mv "$R/boot/initrd.img-$kver" "$1"
}
NORULES=usr/lib/dracut/modules.d/99storaged-test-no-btrfs-rules

# dracut as shipped: the image's test module put aside.
mv "$R/$NORULES" "$SCRATCH/"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-stock"
grep -q '64-btrfs.rules$' "$SCRATCH/initrd-stock.list" || fail "the stock initrd has no 64-btrfs.rules"
note "stock initrd ($(($(date +%s) - t))s)"

# storaged from its package, dracut -f as the administrator runs it; every
# btrfs registration in the initrd is storaged's (the test module back).
mv "$SCRATCH/$(basename "$NORULES")" "$R/$NORULES"
install_deb
rm -f "$R"/boot/initrd.img-*
[ -x "$R/usr/lib/dracut/modules.d/90storaged/module-setup.sh" ] || fail "the package put no dracut module"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-storaged"
note "storaged initrd ($(($(date +%s) - t))s)"
for f in usr/sbin/storaged usr/lib/storaged/storaged-root systemd/system/storaged-root.service; do
	grep -q "$f\$" "$SCRATCH/initrd-storaged.list" || fail "$f is not in storaged's initrd"
done
grep -q '64-btrfs.rules$' "$SCRATCH/initrd-storaged.list" && fail "udev's 64-btrfs.rules is in storaged's initrd"
umount "$R/proc"

# ---------------------------------------------------------------- disks
root_raid1_disks

# ---------------------------------------------------------------- boots
# scanned_by_storaged DEVIDS: each of DEVIDS was registered by storaged and
# nothing else registered a member (the guest's ROOT-BOOT-SCAN lines).
scanned_by_storaged() {
	local d why=
	for d in "$@"; do
		scan_lines | grep -aq " devid $d .* scanned by storaged " ||
			why="$why; devid $d not registered by storaged"
	done
	scan_lines | grep -av ' scanned by storaged ' | grep -aq . &&
		why="$why; registered by another: $(scan_lines | grep -av 'by storaged ' | head -n 1)"
	echo "$why"
}

if want stock-absent; then
	boot stock-absent "$SCRATCH/initrd-stock" 1 "${STORAGED_BOOT_STOCK_LIMIT:-120}" no "$CONSENT"
	# systemd's progress line for the root device, the last one: dracut
	# gives the device job no timeout unless rd.timeout= is set
	s=$(grep -aoE 'Job dev-disk-by[^ ]* running \([0-9]+s / [^)]*\)' "$SERIAL.txt" | tail -n 1)
	e=$(grep -a -m1 -E 'Timed out waiting for device|Could not boot|Entering emergency mode' "$SERIAL.txt")
	verdict stock-absent recorded "${s:-no device job on the console}${e:+; $e}"
fi
if want full; then
	boot full "$SCRATCH/initrd-storaged" 2 300 no "storaged_test.expect=full"
	line=$(result_line)
	why=
	case "$line" in "ROOT-BOOT-RESULT: ok "*) ;; *) why="${line:-no result}" ;; esac
	why="$why$(scanned_by_storaged 1 2)"
	if [ -z "$why" ]; then verdict full ok "$line"; else verdict full FAIL "$why"; fi
fi
if want consent; then
	boot consent "$SCRATCH/initrd-storaged" 1 300 no "$CONSENT storaged_test.expect=degraded"
	verdict_consent "$(scanned_by_storaged 1)"
fi
if want refuse; then
	# 10s timeout, plus the kernel and udev before it under TCG: the
	# emergency shell within 150s, never an endless wait.
	boot refuse "$SCRATCH/initrd-storaged" 1 150 no "storaged.device-timeout=10"
	verdict_refuse "emergency shell"
fi

root_raid1_end
