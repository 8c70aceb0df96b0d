#!/bin/bash
# A filesystem that mounts a block device (ext4, btrfs, ...) whose source
# is a directory or a small file: mount(8) fails ("is not a block
# device"), so --dry-run and check say the step will fail, with what to
# do, and start fails it with the kernel's reason.  A bind of the same
# directory, and an image over 1 KiB (mount sets up a loop device for it),
# are not predicted to fail.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
mkdir -p "$SCRATCH/src" "$SCRATCH/mnt"
: >"$SCRATCH/empty"

note "mount(8) refuses a directory as an ext4 source"
mount -t ext4 "$SCRATCH/src" "$SCRATCH/mnt" 2>&1 | grep -q "not a block device" ||
	fail "mount(8) did not refuse the directory"
is_mountpoint "$SCRATCH/mnt" && fail "mount(8) mounted the directory"

note "a directory: will fail, and start fails it"
echo "$SCRATCH/src  $SCRATCH/mnt  ext4  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 1 --dry-run
expect_out "will fail: '$SCRATCH/src' is a directory, not a block device"
expect_out "use bind"
run_sd 1 check
expect_out "$FSTAB:1"
run_sd 1 start
expect_out "not a block device"
expect_out "1 failed"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted the directory"
run_sd 0 stop

note "an empty file: no loop device is made for it"
echo "$SCRATCH/empty  $SCRATCH/mnt  ext4  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 1 --dry-run
expect_out "will fail: '$SCRATCH/empty' is a 0-byte file, not a block device"
run_sd 1 start
expect_out "not a block device"
run_sd 0 stop

note "a bind of the directory, and an ext4 image: not predicted, and they mount"
truncate -s 16M "$SCRATCH/img/fs.img"
mkfs.ext4 -q -F "$SCRATCH/img/fs.img" || fail "mkfs.ext4"
mkdir -p "$SCRATCH/mnt2"
cat >"$FSTAB" <<EOT
$SCRATCH/src          $SCRATCH/mnt   none  bind,noauto,x-storaged  0 0
$SCRATCH/img/fs.img   $SCRATCH/mnt2  ext4  noauto,x-storaged  0 0
EOT
run_sd 0 --dry-run
expect_no_out "will fail"
run_sd 0 start
is_mountpoint "$SCRATCH/mnt" || fail "the bind is not mounted"
is_mountpoint "$SCRATCH/mnt2" || fail "the image is not mounted"
run_sd 0 stop
is_mountpoint "$SCRATCH/mnt2" && fail "stop left the image mounted"
# libmount's loop device for the image clears itself on unmount
losetup -j "$SCRATCH/img/fs.img" | grep -q . && fail "the image's loop device is still attached"
exit 0
