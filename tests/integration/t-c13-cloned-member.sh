#!/bin/bash
# C13: a cloned disk.  Two devices carry the same btrfs fsid and devid; the
# kernel keeps whichever it was told about last.  storaged registers
# neither, fails the entries on that filesystem naming both devices, the
# fsid, the devid and their generations, and mounts the other entries.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

A=$(mkloop a 256M)
mkfs.btrfs -q -f -L c13 "$A" >/dev/null || fail "mkfs.btrfs"
FSID=$(blkid -o value -s UUID "$A")
forget "$A"
cp --sparse=always "$SCRATCH/img/a.img" "$SCRATCH/img/b.img" || fail "cp"
B=$(attach "$SCRATCH/img/b.img")
GEN=$(btrfs inspect-internal dump-super "$A" | awk '$1 == "generation" { print $2 }')
mkdir -p "$SCRATCH/m/data" "$SCRATCH/m/other"

note "the fault: with both copies scanned, mount takes one of them without a word"
btrfs device scan "$A" >/dev/null && btrfs device scan "$B" >/dev/null || fail "btrfs device scan"
mount -t btrfs -o ro "UUID=$FSID" "$SCRATCH/m/data" || fail "mount UUID= with both copies"
note "mount UUID=$FSID mounted $(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/data") of $A and $B, silently"
umount "$SCRATCH/m/data"
forget "$A" "$B"

cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/m/data   btrfs  noauto,x-storaged           0 0
tmpfs        $SCRATCH/m/other  tmpfs  size=4M,noauto,x-storaged   0 0
EOT
printf '[storaged]\ndevice-timeout = 5s\n' >"$CONF"

note "storaged: the btrfs entry fails naming both copies, the tmpfs is mounted, exit 1"
run_sd 1 -v start
expect_out "'$A' and '$B' both claim devid 1"
expect_out "generations $GEN and $GEN"
expect_out "$FSID"
expect_no_out "registered btrfs member"
is_mountpoint "$SCRATCH/m/data" && fail "the cloned filesystem was mounted"
is_mountpoint "$SCRATCH/m/other" || fail "the independent tmpfs was not mounted"

note "scan and status show the conflict"
run_scan 1
expect_out "both claim devid 1"
run_sd 1 status # 1: an entry failed
expect_out "both claim devid 1"
run_sd 0 stop

note "one copy detached: the filesystem mounts from the other"
detach "$B"
run_sd 0 start
is_mountpoint "$SCRATCH/m/data" || fail "not mounted once the clone is gone"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/data")" = "$A" ] || fail "not mounted from $A"
run_sd 0 stop
exit 0
