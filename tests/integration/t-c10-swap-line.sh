#!/bin/bash
# C10: lines other tools own never stop the pass.  A swap line carries
# `_netdev` (swap on an iSCSI LUN, as systemd supports), and `_netdev` is
# one of storaged's default select options.  The swap line is swapon(8)'s:
# left alone with a note under -v; the RAID1 is assembled and mounted.
# Also a `none` line that is no bind and a type `ignore` line.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v mkswap >/dev/null || skip "mkswap missing (util-linux)"

mkraid1 c10raid 256M
SWAP=$(mkloop swap 16M)
mkswap -q "$SWAP" >/dev/null || fail "mkswap"
mkdir -p "$SCRATCH/raid"

# no peer fault: systemd makes a swap unit of the line, swapon(8) activates it
cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/raid  btrfs  defaults,noauto,x-storaged  0 0
$SWAP       none           swap   sw,_netdev  0 0
none        $SCRATCH/x     none   x-storaged  0 0
$SWAP       $SCRATCH/y     ignore _netdev  0 0
EOT

run_sd 0 check -v
expect_out "$FSTAB:2"
expect_out "swap"
expect_out "left alone"
expect_no_out "error"

run_sd 0 --dry-run start
expect_no_out "$SWAP"

run_sd 0 start
[ "$(findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/raid")" = btrfs ] || fail "RAID1 not mounted"
grep -q "^$SWAP " /proc/swaps && fail "storaged activated the swap line"
run_sd 0 stop
is_mountpoint "$SCRATCH/raid" && fail "stop left the RAID1 mounted"

note "a line storaged cannot read is still an error: check refuses it, start fails that line alone (C35)"
echo "/dev/null $SCRATCH/broken line ext4 x-storaged 0 0" >>"$FSTAB"
run_sd 2 check
expect_out "$FSTAB:5"
run_sd 1 start
expect_out "refused, $FSTAB:5"
exit 0
