#!/bin/bash
# A mount ID the kernel reused, where the kernel has no never-reused ID
# (Linux < 6.8, Debian 12's 6.1): storaged's tmpfs is unmounted by hand
# and another tmpfs mounted on the same mount point at once takes the
# freed ID (the kernel hands out the lowest free one).  `status` must say
# replaced, and `stop` must leave the other tmpfs alone.
# STORAGED_TEST_OLD_MOUNT_IDS makes statx(2) answer as Linux < 6.8 does
# (no STATX_MNT_ID_UNIQUE), for storaged and for this script alike.
. "$(dirname "$0")/lib.sh"
setup
export STORAGED_TEST_OLD_MOUNT_IDS=1

mkdir -p "$SCRATCH/t"
echo "tmpfs  $SCRATCH/t  tmpfs  noauto,x-storaged,size=1M  0 0" >"$FSTAB"
run_sd 0 start
id=$(awk '$1 == "mount_id" { print $3 }' "$STATE/state")
unique=$(awk '$1 == "mount_unique_id" { print $3 }' "$STATE/state")
[ -n "$id" ] && [ "$id" != 0 ] || fail "no mount ID recorded"
[ "${unique:-0}" = 0 ] || fail "a never-reused ID ($unique) recorded with STORAGED_TEST_OLD_MOUNT_IDS set"

note "as recorded: done; stop unmounts it"
run_sd 0 status
expect_out "done"
run_sd 0 stop
is_mountpoint "$SCRATCH/t" && fail "stop left storaged's own tmpfs"
run_sd 0 start
id=$(awk '$1 == "mount_id" { print $3 }' "$STATE/state")

umount "$SCRATCH/t" || fail "umount"
mount -t tmpfs -o size=1M tmpfs "$SCRATCH/t" || fail "mount the other tmpfs"
touch "$SCRATCH/t/foreign"
now=$(awk -v p="$SCRATCH/t" '$5 == p { print $1 }' /proc/self/mountinfo)
[ "$now" = "$id" ] || skip "the kernel gave the other mount ID $now, not the freed $id: nothing reused"

note "another tmpfs with storaged's freed mount ID $id: status says replaced, exit 1"
run_sd 1 status
expect_no_out " done "
expect_out "replaced"
expect_out "with the mount ID $id of storaged's, which was unmounted"

note "stop leaves the other tmpfs alone"
run_sd 0 stop
expect_out "another one took its place and its ID"
[ -e "$SCRATCH/t/foreign" ] || fail "stop unmounted the other tmpfs (mount ID $id)"
umount "$SCRATCH/t" || fail "umount the other tmpfs"
exit 0
