#!/bin/bash
# A member that comes back while its filesystem is mounted degraded: the
# kernel takes it off the missing list when it is registered again (udev,
# btrfs device scan) but does not open it, and `btrfs filesystem show`
# lists it beside the other.  status says what the kernel did (not "2/2"):
# still degraded, the member not in use, and what takes it back (unmount
# and mount, or btrfs replace), naming the real mount point; after a stop
# and a start it is in use again.  Written to while away, it is stale
# too: no warning advises a scrub while the mounted filesystem does not
# use it (no scrub reaches it), but the unmount and mount first.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v btrfs >/dev/null || skip "btrfs missing (btrfs-progs)"

mkraid1 back 512M
MP=$SCRATCH/data
mkdir -p "$MP"
echo "UUID=$FSID  $MP  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 2s\ndegraded = after-timeout\n' >"$CONF"
SYS=/sys/fs/btrfs/$FSID

note "devid 2 away: mounted degraded"
detach "$B"
run_sd 3 start
run_sd 3 status
expect_out "the kernel reports devid 2 missing: mounted degraded; once it is back, unmount $MP and mount it again"
expect_out "btrfs replace start 2 NEWDEV $MP"
expect_no_out "MOUNTPOINT"
dd if=/dev/urandom of="$MP/written-while-away" bs=1M count=4 status=none || fail "write"
sync -f "$MP/written-while-away"

note "devid 2 back and registered while mounted"
B=$(attach "$SCRATCH/img/b.img")
btrfs device scan "$B" >/dev/null || fail "btrfs device scan $B"
[ "$(cat "$SYS/devinfo/2/missing")" = 0 ] || fail "the kernel still marks devid 2 missing: this test is about the other case"
bname=$(basename "$(realpath "$B")")
[ -e "$SYS/devices/$bname" ] && fail "the kernel opened $bname: this kernel takes a returning member back"
run_sd 3 status
expect_out "degraded"
expect_out "the kernel does not use devid 2: it came back while the filesystem was mounted degraded"
expect_out "unmount $MP and mount it again to take it back, then scrub it (btrfs scrub start $MP)"
expect_no_out "2/2 members"
expect_no_out "the kernel reports devid 2 missing"
FIX="the mounted filesystem does not use it (it came back while mounted degraded), so no scrub reaches it: run \`umount $MP && $(sd_self) start\`, then \`btrfs scrub start $MP\`"
expect_no_out "only a scrub rewrites what it missed: run"
note "start (nothing to do) warns of the stale member, with the unmount and mount before the scrub"
OUT=$(sd start 2>&1)
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "warning: \*\*\* btrfs $FSID: devid 2 ('$B') is stale: .*: $FIX \*\*\*"
expect_no_out "only a scrub rewrites what it missed: run"

note "stop and start: devid 2 in use again"
run_sd 0 stop
forget "$A" "$B"
run_sd 0 start
[ -e "$SYS/devices/$bname" ] || fail "devid 2 ($bname) is not in use after stop and start"
run_sd 0 status
expect_out "2/2 members"
expect_no_out "does not use devid"
expect_out "only a scrub rewrites what it missed: run \`btrfs scrub start $MP\`"
run_sd 0 stop
exit 0
