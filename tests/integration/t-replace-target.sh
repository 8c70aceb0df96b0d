#!/bin/bash
# A `btrfs replace` cut by a power cut: its target carries devid 0 in its
# superblock's device item (BTRFS_DEV_REPLACE_DEVID), the filesystem's
# fsid, and is named by no device item of the chunk tree; the kernel
# resumes the replace at mount and refuses to mount while the target is
# not registered (fs/btrfs/dev-replace.c btrfs_init_dev_replace()).
# storaged must take it as the replace target, not as a stranger: scan
# says so, start registers it and mounts the filesystem.
#
# The power cut: the filesystem frozen (fsfreeze commits a transaction and
# holds the next) while the replace runs, the three images copied as they
# are on disk then; the copies are what a cut at that instant leaves.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v fsfreeze >/dev/null || skip "fsfreeze missing (util-linux)"

mkraid1 rt 2G
C=$(mkloop c 2G)
mkdir -p "$SCRATCH/m" "$SCRATCH/cut" "$SCRATCH/data"
btrfs device scan "$A" "$B" >/dev/null || fail "btrfs device scan"
mount "$A" "$SCRATCH/m" || fail "mount the RAID1"
dd if=/dev/urandom of="$SCRATCH/m/f" bs=1M count=64 status=none || fail "write the data"
sync
# the copy to the target throttled (the per-device scrub limit, since
# Linux 5.14, also paces a replace: fs/btrfs/scrub.c), so that it is not
# over before the freeze: 64 MiB at 4 MiB/s; not persistent, so the
# resumed replace below runs at full speed
speed=/sys/fs/btrfs/$FSID/devinfo/2/scrub_speed_max
[ -w "$speed" ] && echo $((4 << 20)) >"$speed"
sum=$(sha256sum <"$SCRATCH/m/f")
thaw() { fsfreeze -u "$SCRATCH/m" 2>/dev/null; btrfs replace cancel "$SCRATCH/m" 2>/dev/null; umount "$SCRATCH/m" 2>/dev/null; }
CLEANUP_HOOK=thaw
btrfs replace start -f 2 "$C" "$SCRATCH/m" || fail "btrfs replace start"
fsfreeze -f "$SCRATCH/m" || fail "fsfreeze"
for x in a b c; do
	cp --sparse=always "$SCRATCH/img/$x.img" "$SCRATCH/cut/$x.img" || fail "copy $x.img"
done
fsfreeze -u "$SCRATCH/m"
btrfs replace cancel "$SCRATCH/m" >/dev/null 2>&1
# the `btrfs replace start` left in the background holds the mount a moment
for _ in $(seq 100); do umount "$SCRATCH/m" 2>/dev/null && break; sleep 0.1; done
is_mountpoint "$SCRATCH/m" && fail "umount"
CLEANUP_HOOK=
for d in "$A" "$B" "$C"; do detach "$d"; done
devid=$(btrfs inspect-internal dump-super "$SCRATCH/cut/c.img" | awk '$1 == "dev_item.devid" { print $2 }')
[ "$devid" = 0 ] || skip "the replace ended before the freeze (the target's devid is '$devid'): nothing to test"

A=$(attach "$SCRATCH/cut/a.img")
B=$(attach "$SCRATCH/cut/b.img")
C=$(attach "$SCRATCH/cut/c.img")
forget "$A" "$B" "$C"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged,x-storaged.device-timeout=3s  0 0" >"$FSTAB"

note "scan: two members and the replace target, no stranger"
run_sd 0 scan
expect_out "$C (replace target of devid 2)"
run_sd 0 scan --json
printf '%s\n' "$OUT" | python3 -c '
import json, sys
fs = [f for f in json.load(sys.stdin)["filesystems"] if f["fsid"] == sys.argv[2]][0]
sys.exit(0 if fs["replace_target"] == sys.argv[1] and fs["replace_of"] == 2 and not fs["strangers"] else 1)' "$C" "$FSID" ||
	fail "scan --json does not name the replace target of devid 2"
printf '%s\n' "$OUT" | grep -q "carries .*fsid.*not one of its devices" && fail "scan calls the replace target a stranger"
note "start: the target registered, the filesystem mounted, the kernel resumes the replace"
run_sd 0 start
is_mountpoint "$SCRATCH/data" || { dmesg | tail -5; fail "the RAID1 was not mounted"; }
for _ in $(seq 200); do
	btrfs replace status -1 "$SCRATCH/data" 2>/dev/null | grep -q "finished" && break
	sleep 0.1
done
btrfs replace status -1 "$SCRATCH/data" | sed 's/^/  | /'
btrfs replace status -1 "$SCRATCH/data" | grep -q "finished" || fail "the resumed replace did not finish"
[ "$(sha256sum <"$SCRATCH/data/f")" = "$sum" ] || fail "the data is not what was written"
run_sd 0 status
run_sd 0 stop
is_mountpoint "$SCRATCH/data" && fail "stop left the RAID1 mounted"
forget "$A" "$B" "$C"

note "after the replace: the target is devid 2, the replaced device is no btrfs any more"
run_sd 0 scan
expect_out "$A $C"
exit 0
