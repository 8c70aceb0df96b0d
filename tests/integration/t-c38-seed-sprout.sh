#!/bin/bash
# C38: a sprout filesystem over a seed device (btrfs(5), SEEDING DEVICE).
# The seed keeps its own fsid; the sprout's superblock carries the
# sprout's, and the sprout's record of its devices (its chunk tree's device
# items) names the seed with the seed's fsid.  The kernel mounts the sprout
# once both are registered.  storaged counts the seed as a member (it never
# did: it waited device-timeout and refused, "1 of 2 members present"),
# registers it, mounts the sprout read-write, and scan and status say which
# device is the seed.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v btrfstune >/dev/null || skip "btrfstune missing (btrfs-progs)"

S=$(mkloop seed 256M)
P=$(mkloop sprout 256M)
mkdir -p "$SCRATCH/m/s" "$SCRATCH/m/data"
mkfs.btrfs -q -f -L c38seed "$S" >/dev/null 2>&1 || fail "mkfs.btrfs"
mount -t btrfs "$S" "$SCRATCH/m/s" || fail "mount the seed-to-be"
echo from-seed >"$SCRATCH/m/s/seed-file"
umount "$SCRATCH/m/s" || fail "umount"
forget "$S"
btrfstune -S 1 "$S" || fail "btrfstune -S 1"
SEEDFSID=$(blkid -o value -s UUID "$S")

note "the sprout: a device added to the mounted seed, then written to"
btrfs device scan "$S" >/dev/null || fail "btrfs device scan"
mount -t btrfs "$S" "$SCRATCH/m/s" 2>/dev/null || fail "mount the seed"
btrfs device add -f "$P" "$SCRATCH/m/s" >/dev/null || fail "btrfs device add"
mount -o remount,rw "$SCRATCH/m/s" || fail "remount the sprout read-write"
echo from-sprout >"$SCRATCH/m/s/sprout-file"
umount "$SCRATCH/m/s" || fail "umount"
forget "$P" "$S"
FSID=$(blkid -o value -s UUID "$P")
[ -n "$FSID" ] && [ "$FSID" != "$SEEDFSID" ] || fail "the sprout has no fsid of its own ('$FSID')"
note "seed $S fsid $SEEDFSID, sprout $P fsid $FSID"

cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 10s\n' >"$CONF"

note "start registers the seed, mounts the sprout read-write, without waiting"
t0=$(date +%s)
run_sd 0 start
[ $(($(date +%s) - t0)) -lt $((8 * TIME_SCALE)) ] || fail "start waited for the seed"
is_mountpoint "$SCRATCH/m/data" || fail "the sprout was not mounted"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/data")" = "$P" ] || fail "not mounted from the sprout's device $P"
findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/m/data" | grep -qw rw || fail "the sprout is not mounted read-write"
grep -qx from-seed "$SCRATCH/m/data/seed-file" || fail "the seed's file is not there"
grep -qx from-sprout "$SCRATCH/m/data/sprout-file" || fail "the sprout's file is not there"
echo more >"$SCRATCH/m/data/written-now" || fail "cannot write to the sprout"
expect_no_out "members present after"

note "scan names the seed as the sprout's, and is content"
run_scan 0
expect_out "$S (seed)"
run_sd 0 status
expect_out "seed"
run_sd 0 stop
is_mountpoint "$SCRATCH/m/data" && fail "still mounted after stop"

note "without the seed the sprout is incomplete: devid 1 (the seed) missing"
detach "$S"
printf '[storaged]\ndevice-timeout = 2s\n' >"$CONF"
run_sd 1 start
expect_out "devid 1 missing"
is_mountpoint "$SCRATCH/m/data" && fail "mounted without its seed"
run_sd 0 stop
exit 0
