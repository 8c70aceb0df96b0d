#!/bin/bash
# The initramfs helper (initramfs/storaged-root, run by the initramfs-tools
# boot script and the dracut module) on loop devices, with a kernel command
# line from a file: a root RAID1 with a member missing waits the bounded
# storaged.device-timeout, then without consent says what is missing and
# the exact option to consent (exit 1: the emergency shell), with consent
# reports degraded (exit 2: -o degraded) and warns; complete: exit 0.  The
# qemu boots of issue 11 are not run here.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
# the build tree's, or the installed one (LIBEXECDIR/storaged/storaged-root)
HELPER=${STORAGED_ROOT_HELPER:-$(dirname "$STORAGED")/initramfs/storaged-root}
[ -x "$HELPER" ] || fail "no $HELPER (build first, or set STORAGED_ROOT_HELPER)"
export STORAGED STORAGED_ROOT_DIR=$SCRATCH/root

mkraid1 rootfs 512M
mkdir -p "$SCRATCH/sysroot"

helper() { # CMDLINE EXPECTED_EXIT
	local rc
	echo "$1" >"$SCRATCH/cmdline"
	# (HELPER_PATH: the PATH the helper runs with, the test's own by default)
	OUT=$(PATH=${HELPER_PATH:-$PATH} "$HELPER" "$SCRATCH/cmdline" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$2" ] || fail "storaged-root exited $rc for '$1', expected $2"
	grep -q " $STORAGED_ROOT_DIR/mnt " /proc/self/mounts && fail "the scratch mount was left mounted"
	return 0
}

note "both members: ready (0), and the root mounts"
helper "ro root=UUID=$FSID storaged.device-timeout=3s" 0
mount -t btrfs -o ro "$A" "$SCRATCH/sysroot" || fail "root did not mount after the helper"
umount "$SCRATCH/sysroot"
forget "$A" "$B"

note "a typo in storaged.device-timeout=: the default is taken, the boot goes on (0)"
helper "ro root=UUID=$FSID storaged.device-timeout=3x" 0
expect_out "storaged.device-timeout=3x: not a duration"
forget "$A" "$B"
helper "ro root=UUID=$FSID rd.storaged.device-timeout=3x" 0
expect_out "storaged: rd.storaged.device-timeout=3x: not a duration"
forget "$A" "$B"

note "the fault: a member missing, the remaining one alone does not mount"
detach "$B"
if mount -t btrfs -o ro "$A" "$SCRATCH/sysroot" 2>/dev/null; then fail "mounted without its second member"; fi
forget "$A"

note "without consent: a bounded wait, then the message for the emergency shell (1)"
t0=$(date +%s)
helper "root=UUID=$FSID rootflags=noatime storaged.device-timeout=1s" 1
[ $(($(date +%s) - t0)) -le 20 ] || fail "waited $(($(date +%s) - t0))s for a 1s timeout"
expect_out "$FSID"
expect_out "1 of 2 members present after 1s, devid 2 missing"
expect_out "storaged.degraded=after-timeout"
forget "$A"

note "with consent: degraded (2), warned; the root mounts with -o degraded"
helper "root=UUID=$FSID storaged.device-timeout=1s storaged.degraded=after-timeout" 2
expect_out "WARNING: the root filesystem UUID=$FSID is mounted DEGRADED"
expect_out "1 of 2 members present"
[ -s "$STORAGED_ROOT_DIR/degraded" ] || fail "no $STORAGED_ROOT_DIR/degraded for the booted system"
mount -t btrfs -o ro,degraded "$A" "$SCRATCH/sysroot" || fail "root did not mount degraded"
umount "$SCRATCH/sysroot"

note "the rd. spellings (dracut's prefix for initrd-only options) do the same"
forget "$A"
t0=$(date +%s)
helper "root=UUID=$FSID rd.storaged.device-timeout=1s" 1
[ $(($(date +%s) - t0)) -le 20 ] || fail "waited $(($(date +%s) - t0))s for a 1s timeout"
expect_out "1 of 2 members present after 1s, devid 2 missing"
expect_out "storaged:     rd.storaged.degraded=after-timeout"
forget "$A"
helper "root=UUID=$FSID rd.storaged.device-timeout=1s rd.storaged.degraded=after-timeout" 2
expect_out "is mounted DEGRADED (rd.storaged.degraded=after-timeout): btrfs $FSID: 1 of 2 members present after 1s"
forget "$A"
note "of two spellings, the later wins; a typo is named as written"
helper "root=UUID=$FSID rd.storaged.degraded=after-timeout storaged.degraded=no rd.storaged.device-timeout=1s" 1
forget "$A"
helper "root=UUID=$FSID rd.storaged.degraded=sometimes rd.storaged.device-timeout=1s" 1
expect_out "rd.storaged.degraded=sometimes: expected 'no' or 'after-timeout'; taking 'no'"
forget "$A"
note "rd.root= is not root=: nothing to do (3)"
helper "rd.root=UUID=$FSID" 3

note "the tools of an initramfs without busybox (klibc's): no grep, awk or head"
# (Debian's initramfs-tools image when busybox, a Recommends, is absent:
# the helper once called grep and found no root at all there.)
mkdir -p "$SCRATCH/klibc-bin"
for t in sh cat mkdir umount; do
	ln -s "$(command -v "$t")" "$SCRATCH/klibc-bin/$t" || fail "no $t on this machine"
done
# the helper's `modprobe btrfs` may fail (btrfs built in, no kmod here)
if command -v modprobe >/dev/null; then
	ln -s "$(command -v modprobe)" "$SCRATCH/klibc-bin/modprobe"
else
	printf '#!/bin/sh\nexit 1\n' >"$SCRATCH/klibc-bin/modprobe" && chmod 755 "$SCRATCH/klibc-bin/modprobe"
fi
forget "$A"
HELPER_PATH=$SCRATCH/klibc-bin helper "root=UUID=$FSID storaged.device-timeout=1s storaged.degraded=after-timeout" 2
expect_out "WARNING: the root filesystem UUID=$FSID is mounted DEGRADED (storaged.degraded=after-timeout): btrfs $FSID: 1 of 2 members present after 1s, devid 2 missing; once booted, replace the missing disk: btrfs replace start 2 NEWDEV / (on a read-only root, mount -o remount,rw / first)"
forget "$A"
HELPER_PATH=$SCRATCH/klibc-bin helper "root=UUID=$FSID storaged.device-timeout=1s" 1
expect_out "1 of 2 members present after 1s, devid 2 missing"
expect_out "storaged.degraded=after-timeout"
forget "$A"

note "no btrfs root: nothing to do (3)"
helper "root=/dev/nfs nfsroot=1.2.3.4:/x" 3
helper "quiet" 3
helper "root=UUID=00000000-1111-2222-3333-444444444444" 3
helper "root=$A rootfstype=ext4" 3
exit 0
