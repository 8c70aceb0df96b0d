#!/bin/bash
# `status` tells what `stop` finds.  Storaged's tmpfs moved to another
# mount point (mount --move, or a directory above it renamed): stop
# unmounts it there, so status must not say it was unmounted.  Then a
# mount ID the kernel reused: storaged's tmpfs is
# unmounted by hand and another mount made on the same mount point at
# once takes the freed mount ID (the kernel hands out the lowest free
# one).  `stop` already tells them apart by the never-reused ID
# (STATX_MNT_ID_UNIQUE, Linux 6.8) and leaves the other mount alone;
# `status` must not call it storaged's mount, done, exit 0.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/t"
echo "tmpfs  $SCRATCH/t  tmpfs  noauto,x-storaged,size=1M  0 0" >"$FSTAB"
run_sd 0 start
id=$(awk '$1 == "mount_id" { print $3 }' "$STATE/state")
unique=$(awk '$1 == "mount_unique_id" { print $3 }' "$STATE/state")
[ "${unique:-0}" != 0 ] || skip "no STATX_MNT_ID_UNIQUE (Linux < 6.8)"
run_sd 0 status
expect_out "done"

note "storaged's mount moved elsewhere (mount --move): status says where, stop unmounts it there"
mkdir -p "$SCRATCH/u"
mount --move "$SCRATCH/t" "$SCRATCH/u" || fail "mount --move"
run_sd 1 status
expect_out "gone"
expect_out "is not on $SCRATCH/t any more but on $SCRATCH/u"
expect_no_out "unmounted since storaged mounted it"
run_sd 0 stop
awk -v p="$SCRATCH/u" '$5 == p { f = 1 } END { exit f }' /proc/self/mountinfo ||
	fail "stop left storaged's moved mount on $SCRATCH/u"
run_sd 0 start
id=$(awk '$1 == "mount_id" { print $3 }' "$STATE/state")

umount "$SCRATCH/t" || fail "umount"
mount -t tmpfs -o size=1M tmpfs "$SCRATCH/t" || fail "mount the other tmpfs"
now=$(awk -v p="$SCRATCH/t" '$5 == p { print $1 }' /proc/self/mountinfo)
[ "$now" = "$id" ] || skip "the kernel gave the other mount ID $now, not the freed $id: nothing reused"

note "another tmpfs with storaged's freed mount ID $id: not storaged's, exit 1"
run_sd 1 status
expect_no_out " done "
expect_out "replaced"
expect_out "with the mount ID $id of storaged's, which was unmounted"
run_sd 0 stop
expect_out "another one took its place and its ID"
awk -v p="$SCRATCH/t" '$5 == p { f = 1 } END { exit !f }' /proc/self/mountinfo ||
	fail "stop unmounted the other mount"
umount "$SCRATCH/t" || fail "umount the other tmpfs"
exit 0
