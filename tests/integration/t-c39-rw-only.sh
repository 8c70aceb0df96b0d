#!/bin/bash
# x-systemd.rw-only stops the read-only retry (issue 39).  mount(8) retries
# a read-write mount that a write-protected device refuses (EROFS/EACCES)
# read-only, with a warning, unless -w is given; systemd passes -w for
# x-systemd.rw-only.  On a read-only loop device (losetup -r): without
# the option storaged mounts it read-only and warns as mount(8) does; with
# it --dry-run and check say the mount will fail and why, start fails it
# with the kernel's reason and what to do, and nothing is mounted.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
mkdir -p "$SCRATCH/mnt"
truncate -s 16M "$SCRATCH/img/ro.img"
mkfs.ext4 -q -F "$SCRATCH/img/ro.img" || fail "mkfs.ext4"
dev=$(losetup -r -f --show "$SCRATCH/img/ro.img") || fail "losetup -r"
echo "$dev" >>"$SCRATCH/loops"
[ "$(blockdev --getro "$dev")" = 1 ] || fail "$dev is not read-only"

note "mount(8): -w fails on the write-protected device, without -w it mounts read-only"
mount -w -t ext4 "$dev" "$SCRATCH/mnt" 2>/dev/null && fail "mount -w mounted the write-protected device"
is_mountpoint "$SCRATCH/mnt" && fail "mount -w left a mount"
mount -t ext4 "$dev" "$SCRATCH/mnt" 2>"$SCRATCH/mount.err" || fail "mount(8) did not retry read-only"
grep -q "write-protected" "$SCRATCH/mount.err" || fail "mount(8) gave no warning: $(cat "$SCRATCH/mount.err")"
umount "$SCRATCH/mnt"

note "without x-systemd.rw-only: mounted read-only, with mount(8)'s warning"
echo "$dev  $SCRATCH/mnt  ext4  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 0 --dry-run
expect_no_out "will fail"
expect_no_out "x-systemd.rw-only"
run_sd 0 start
expect_out "write-protected"
is_mountpoint "$SCRATCH/mnt" || fail "the entry is not mounted"
findmnt -rn -o OPTIONS "$SCRATCH/mnt" | tr , '\n' | grep -qx ro || fail "the mount is not read-only"
run_sd 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop left the mount"

note "with x-systemd.rw-only: check and --dry-run predict the failure"
echo "$dev  $SCRATCH/mnt  ext4  noauto,x-storaged,x-systemd.rw-only  0 0" >"$FSTAB"
run_sd 1 check
expect_out "will fail: '$dev' is write-protected and the entry says x-systemd.rw-only"
expect_out "blockdev --setrw $dev"
expect_out "$FSTAB:1"
expect_no_out "cannot forbid the read-only retry"
run_sd 1 --dry-run
expect_out "will fail: '$dev' is write-protected"

note "with x-systemd.rw-only: start fails the mount with the kernel's reason, mounts nothing"
run_sd 1 start
expect_out "1 failed"
expect_out "write-protected and the entry says x-systemd.rw-only"
expect_out "drop x-systemd.rw-only"
printf '%s\n' "$OUT" | grep -qiE "the kernel says|read-only|permission denied" || fail "no kernel reason in: $(cat "$OUT")"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted the device despite x-systemd.rw-only: $(findmnt -rn "$SCRATCH/mnt")"
run_sd 0 stop

note "x-systemd.rw-only with ro: nothing to retry, mounts read-only"
echo "$dev  $SCRATCH/mnt  ext4  noauto,x-storaged,x-systemd.rw-only,ro  0 0" >"$FSTAB"
run_sd 0 --dry-run
run_sd 0 start
is_mountpoint "$SCRATCH/mnt" || fail "the ro entry is not mounted"
run_sd 0 stop

note "a value is refused"
echo "$dev  $SCRATCH/mnt  ext4  noauto,x-storaged,x-systemd.rw-only=1  0 0" >"$FSTAB"
run_sd 2 check
expect_out "takes no value"
exit 0
