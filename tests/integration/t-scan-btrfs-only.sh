#!/bin/bash
# A start whose entries name only btrfs filesystems by UUID= reads the
# btrfs superblock of each device and asks libblkid of none of the others
# (bench/README.md, "Scan": half the scan's time at 200 devices).  What it
# must still see: a LABEL= wants every device probed, so that a label two
# filesystems share is still refused; a UUID= that no btrfs holds is looked
# for on every device, so that the mount says what it meets instead of
# waiting device-timeout for a device that is there.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

mkraid1 onlyfs 256M
E=$(mkloop e 32M)
mkfs.ext4 -q -F -L onlyfs "$E" || fail "mkfs.ext4"
EXT=$(blkid -o value -s UUID "$E")
mkdir -p "$SCRATCH/m/r" "$SCRATCH/m/x"
printf '[storaged]\ndevice-timeout = 30s\n' >"$CONF"

note "UUID= of a btrfs: the other devices are not probed, the RAID1 is assembled and mounted"
echo "UUID=$FSID $SCRATCH/m/r btrfs noauto,x-storaged 0 0" >"$FSTAB"
run_sd 0 -v start
expect_out "block devices: [0-9]* without btrfs magic left unprobed"
expect_out "btrfs $FSID: assembled, 2/2"
findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/m/r" | grep -qx btrfs || fail "not mounted"
run_sd 0 stop
forget "$A" "$B"

note "LABEL=: every device is probed, and the label the ext4 shares is refused"
echo "LABEL=onlyfs $SCRATCH/m/r btrfs noauto,x-storaged 0 0" >"$FSTAB"
run_sd 1 -v start
expect_no_out "left unprobed"
expect_out "'LABEL=onlyfs' names two devices"
is_mountpoint "$SCRATCH/m/r" && fail "mounted a LABEL= that names two devices"

note "a UUID= that no btrfs holds: found on the ext4 at once, not waited for"
echo "UUID=$EXT $SCRATCH/m/x btrfs noauto,x-storaged 0 0" >"$FSTAB"
t0=$(date +%s)
run_sd 1 -v start
[ $(($(date +%s) - t0)) -lt 20 ] || fail "start waited for a device that was there"
expect_no_out "left unprobed"
expect_no_out "not found after"
is_mountpoint "$SCRATCH/m/x" && fail "mounted an ext4 as btrfs"
exit 0
