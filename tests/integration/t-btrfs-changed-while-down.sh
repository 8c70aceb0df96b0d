#!/bin/bash
# C38's kind, a btrfs whose devices changed while the machine was down:
#   - a member removed (`btrfs device remove missing` while it was away)
#     comes back with its old superblock: the fsid, devid 3, an older
#     generation.  It is no longer one of the filesystem's devices (the
#     chunk tree has no device item for it), so the kernel would not take
#     it: storaged mounts the RAID1 whole, not degraded, without waiting,
#     and neither waits for it nor calls a member stale;
#   - a device added while down (`btrfs device add`, here it takes devid 3
#     again, with a new dev_uuid) is a member: present, storaged mounts at
#     once; absent, storaged waits for it and, with degraded not allowed,
#     mounts nothing, even with the removed devid 3 beside it claiming its
#     devid.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

devid_of() { # DEV: the devid its superblock claims
	btrfs inspect-internal dump-super "$1" | awk '$1 == "dev_item.devid" { print $2 }'
}
members() { # the devices of the filesystem mounted at $M, one a line
	btrfs filesystem show "$M" | awk '$1 == "devid" { print $NF }' | sort
}

M=$SCRATCH/m/data
mkdir -p "$M"
A=$(mkloop a 320M)
B=$(mkloop b 320M)
C=$(mkloop c 320M)
mkfs.btrfs -q -f -L down -d raid1 -m raid1 "$A" "$B" "$C" >/dev/null || fail "mkfs.btrfs"
FSID=$(blkid -o value -s UUID "$A")
mount -t btrfs "$A" "$M" || fail "mount"
echo one >"$M/one"
umount "$M" || fail "umount"

note "devid 3 away: mounted degraded, 'btrfs device remove missing', written to"
detach "$C"
forget "$A" "$B"
btrfs device scan "$A" "$B" >/dev/null || fail "btrfs device scan"
mount -t btrfs -o degraded "$A" "$M" || fail "degraded mount"
btrfs device remove missing "$M" || fail "btrfs device remove missing"
echo two >"$M/two"
umount "$M" || fail "umount"
C=$(attach "$SCRATCH/img/c.img")
[ "$(devid_of "$C")" = 3 ] || fail "the removed device does not claim devid 3 any more"
forget "$A" "$B" "$C"

cat >"$FSTAB" <<EOT
UUID=$FSID  $M  btrfs  noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 10s\nstale-member = refuse\n' >"$CONF"

note "the removed device is back: the RAID1 of devids 1 and 2 mounts whole, at once"
t0=$(date +%s%N)
run_sd 0 start
ms=$((($(date +%s%N) - t0) / 1000000))
is_mountpoint "$M" || fail "the RAID1 was not mounted"
[ "$ms" -lt $((5000 * TIME_SCALE)) ] || fail "start took $ms ms: it waited for the removed device"
findmnt -rn -o OPTIONS --mountpoint "$M" | grep -qw degraded && fail "mounted degraded"
[ "$(members)" = "$(printf '%s\n' "$A" "$B" | sort)" ] || fail "the mounted filesystem's devices: $(members | tr '\n' ' ')"
expect_out "'$C' carries its fsid and claims devid 3 .*no devid 3 .*removed from it"
expect_no_out "is stale"
expect_no_out "waiting"
[ "$(cat "$M/two")" = two ] || fail "not the filesystem as written while devid 3 was away"
run_sd 0 status
expect_no_out "missing"
run_sd 0 stop

note "a device added while down: it takes devid 3, with a new dev_uuid"
D=$(mkloop d 320M)
btrfs device scan "$A" "$B" >/dev/null || fail "btrfs device scan"
mount -t btrfs "$A" "$M" || fail "mount"
btrfs device add -f "$D" "$M" >/dev/null || fail "btrfs device add"
echo three >"$M/three"
umount "$M" || fail "umount"
[ "$(devid_of "$D")" = 3 ] || note "the added device took devid $(devid_of "$D"), not 3"
forget "$A" "$B" "$C" "$D"

note "the added device present: storaged mounts at once, with it"
run_sd 0 start
is_mountpoint "$M" || fail "not mounted with the added device present"
members | grep -qxF "$D" || fail "the added device is not in the mounted filesystem: $(members | tr '\n' ' ')"
members | grep -qxF "$C" && fail "the removed device was taken back"
expect_out "'$C' carries its fsid and claims devid 3 .*names devid 3 as dev_uuid .*removed from it, its devid given to a device added since"
run_sd 0 stop

note "the added device absent, the removed one (claiming its devid) present: no mount"
detach "$D"
forget "$A" "$B" "$C"
run_sd 1 start
is_mountpoint "$M" && fail "mounted without the added member (degraded not allowed)"
run_sd 1 status
run_sd 0 stop
echo "PASS: $TEST_NAME"
exit 0
