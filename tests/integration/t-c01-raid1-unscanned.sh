#!/bin/bash
# C01: a two-disk btrfs RAID1 whose second member the kernel does not know
# fails to mount; storaged registers both members and mounts it.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 c01 512M
mkdir -p "$SCRATCH/data" "$SCRATCH/probe"

note "the fault: without storaged, the mount fails"
if mount -t btrfs "$A" "$SCRATCH/probe" 2>/dev/null; then
	fail "plain mount of $A succeeded: the second member was registered already"
fi

echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 10s\n' >"$CONF"

note "dry-run lists both members, then the mount, and changes nothing"
before=$(mount_snapshot)
run_sd 0 --dry-run
expect_out "register $A"
expect_out "register $B"
expect_out "on $SCRATCH/data"
reg=$(printf '%s\n' "$OUT" | grep -n "register $B" | cut -d: -f1)
mnt=$(printf '%s\n' "$OUT" | grep -n "mount .* on $SCRATCH/data" | cut -d: -f1)
[ -n "$reg" ] && [ -n "$mnt" ] && [ "$reg" -lt "$mnt" ] || fail "mount not planned after registration"
[ "$(mount_snapshot)" = "$before" ] || fail "dry-run changed the mount table"
[ ! -e "$STATE" ] || fail "dry-run wrote the state directory"
if mount -t btrfs "$A" "$SCRATCH/probe" 2>/dev/null; then
	fail "after --dry-run a plain mount works: dry-run registered a member"
fi

note "start registers both and mounts"
run_sd 0 start
findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/data" | grep -qx btrfs || fail "not mounted"
show=$(btrfs filesystem show "$SCRATCH/data")
printf '%s\n' "$show" | grep -q "Total devices 2" || fail "not 2 devices: $show"
if printf '%s\n' "$show" | grep -qi missing; then fail "a member is missing: $show"; fi
[ -e "$STATE/ready/$FSID" ] || fail "no readiness file $STATE/ready/$FSID"
# one line per change: the assembly's, the mount's, the closing count
[ "$(printf '%s\n' "$OUT" | grep -c "btrfs $FSID")" = 1 ] || fail "not one line for the assembly"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 3 ] || fail "more than a line per change and the closing line"

note "a second start changes nothing"
run_sd 0 start
[ "$(mount_count "$SCRATCH/data")" = 1 ] || fail "mounted twice"

run_sd 0 status
expect_out "$SCRATCH/data"

run_sd 0 stop
is_mountpoint "$SCRATCH/data" && fail "stop left $SCRATCH/data mounted"
[ -e "$STATE/ready/$FSID" ] && fail "stop left the readiness file"
exit 0
