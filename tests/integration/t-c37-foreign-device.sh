#!/bin/bash
# C37: a device that carries a RAID1's fsid but is not one of its devices
# (any user can read an fsid and make a btrfs with it elsewhere: a USB
# stick at boot, a loop device from an active seat).  Which devices are
# members is decided by the filesystem's own record of them (the chunk
# tree's device items: devid, dev_uuid, fsid), so the stranger is reported
# with what it claims and why it is not a member, and ignored: the healthy
# RAID1 mounts.  A true clone (the same dev_uuid) is still refused (C13).
#
# Strangers made here, each with the RAID1's fsid:
#   - devid 2 of a 3-device btrfs made with `mkfs.btrfs -U` (another
#     dev_uuid): storaged took it for a clone of devid 2 and mounted nothing;
#   - devid 3 of it, written to after it was made (a higher generation, and
#     num_devices 3): storaged counted "2/3", called both real members
#     stale and, with stale-member = refuse, mounted nothing;
#   - a forged one: devid 1's superblock with devid 2 written in (the
#     checksum recomputed): it names devid 2 as another dev_uuid;
#   and each once more after `btrfs device scan` told the kernel of it, as
#   udev does when a device appears.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v python3 >/dev/null || skip "python3 missing (forging a superblock)"

gen() {
	btrfs inspect-internal dump-super "$1" | awk '$1 == "generation" { print $2 }'
}
devuuid() {
	btrfs inspect-internal dump-super "$1" | awk '$1 == "dev_item.uuid" { print $2 }'
}

note "the stranger's filesystem first (mkfs.btrfs refuses an fsid it sees on a device)"
FSID=$(cat /proc/sys/kernel/random/uuid)
for i in x1 x2 x3 a b; do
	truncate -s 256M "$SCRATCH/img/$i.img" || fail "truncate"
done
mkfs.btrfs -q -f -U "$FSID" -d single -m raid1 "$SCRATCH/img/x1.img" "$SCRATCH/img/x2.img" \
	"$SCRATCH/img/x3.img" >/dev/null 2>&1 || fail "mkfs.btrfs (the stranger's)"
note "the stranger's generation raised: mounted and written to"
X1=$(attach "$SCRATCH/img/x1.img")
X2=$(attach "$SCRATCH/img/x2.img")
X3=$(attach "$SCRATCH/img/x3.img")
forget "$X1" "$X2" "$X3"
btrfs device scan "$X1" "$X2" "$X3" >/dev/null || fail "btrfs device scan (stranger)"
mkdir -p "$SCRATCH/m/x" "$SCRATCH/m/data"
mount -t btrfs "$X1" "$SCRATCH/m/x" || fail "mount the stranger's filesystem"
for i in $(seq 1 12); do
	echo "$i" >"$SCRATCH/m/x/f$i"
	sync
done
umount "$SCRATCH/m/x" || fail "umount"
detach "$X1"
detach "$X2"
detach "$X3"

note "the RAID1, with the same fsid"
mkfs.btrfs -q -f -U "$FSID" -L c37 -d raid1 -m raid1 "$SCRATCH/img/a.img" "$SCRATCH/img/b.img" \
	>/dev/null 2>&1 || fail "mkfs.btrfs (the RAID1)"
A=$(attach "$SCRATCH/img/a.img")
B=$(attach "$SCRATCH/img/b.img")
forget "$A" "$B"
GA=$(gen "$A")
GX=$(gen "$SCRATCH/img/x3.img")
[ "$GX" -gt "$GA" ] || fail "the stranger's generation $GX is not above the RAID1's $GA"
UB=$(devuuid "$B")
echo hello >"$SCRATCH/hello"

note "a forged stranger: devid 1's superblocks with devid 2 written in"
cp --sparse=always "$SCRATCH/img/a.img" "$SCRATCH/img/f.img" || fail "cp"
python3 - "$SCRATCH/img/f.img" <<'PY' || fail "forging the superblock"
import struct, sys

def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff

with open(sys.argv[1], "r+b") as f:
    for off in (64 << 10, 64 << 20):
        f.seek(off)
        sb = bytearray(f.read(4096))
        if sb[64:72] != b"_BHRfS_M":
            continue
        sb[201:209] = struct.pack("<Q", 2)  # dev_item.devid (btrfs_super_block.dev_item at 201)
        sb[0:4] = struct.pack("<I", crc32c(bytes(sb[32:])))
        f.seek(off)
        f.write(sb)
PY

cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 5s\nstale-member = refuse\n' >"$CONF"

# try NAME IMAGE: the RAID1 with the stranger IMAGE beside it mounts, the
# stranger named with the devid it claims; then once more with the
# stranger registered with the kernel beforehand (as udev would).
try() {
	local name=$1 x src
	X=$(attach "$2")
	forget "$X"
	note "$name: start mounts the RAID1, reports the stranger and ignores it"
	run_sd 0 start
	is_mountpoint "$SCRATCH/m/data" || fail "$name: the RAID1 was not mounted"
	src=$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/data")
	[ "$src" = "$A" ] || [ "$src" = "$B" ] || fail "$name: mounted from '$src', not a member"
	expect_out "'$X' carries its fsid and claims devid $3"
	expect_no_out "both claim"
	expect_no_out "is stale"
	btrfs filesystem show "$SCRATCH/m/data" | grep -q "$X" && fail "$name: the stranger is in the mounted filesystem"
	cp "$SCRATCH/hello" "$SCRATCH/m/data/" || fail "$name: cannot write to the RAID1"
	note "$name: scan shows the complete RAID1 and the stranger"
	run_scan 0
	expect_out "'$X' carries its fsid and claims devid $3"
	run_sd 0 status
	run_sd 0 stop
	is_mountpoint "$SCRATCH/m/data" && fail "$name: still mounted after stop"

	note "$name: the kernel told of the stranger first (udev scans every new device)"
	btrfs device scan "$X" >/dev/null 2>&1
	run_sd 0 start
	is_mountpoint "$SCRATCH/m/data" || fail "$name (registered): the RAID1 was not mounted"
	btrfs filesystem show "$SCRATCH/m/data" | grep -q "$X" && fail "$name (registered): the stranger is in the mounted filesystem"
	cmp -s "$SCRATCH/hello" "$SCRATCH/m/data/hello" || fail "$name (registered): not the RAID1's files"
	run_sd 0 stop
	detach "$X"
}

try "devid 2 of another filesystem" "$SCRATCH/img/x2.img" 2
try "devid 3 of another filesystem, generation $GX" "$SCRATCH/img/x3.img" 3
try "devid 1's superblock forged to devid 2" "$SCRATCH/img/f.img" 2

note "a true clone (a copy of devid 2, the same dev_uuid $UB) is still refused"
forget "$A" "$B"
cp --sparse=always "$SCRATCH/img/b.img" "$SCRATCH/img/c.img" || fail "cp"
C=$(attach "$SCRATCH/img/c.img")
forget "$C"
run_sd 1 start
expect_out "both claim devid 2"
is_mountpoint "$SCRATCH/m/data" && fail "the cloned filesystem was mounted"
run_sd 0 stop
exit 0
