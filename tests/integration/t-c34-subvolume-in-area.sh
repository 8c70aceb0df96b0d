#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C34: btrfs subvolumes and snapshots below an area's directory (as build
# tools and containers make them: not mounts, but each with a device number
# of its own).  They used to show in the area as empty directories, and what
# was written into one was lost at stop, which exited 0.  They are carried
# into the area as a mounted filesystem is: bound at their place, so that
# what the user sees there is the subvolume and writes land on the disk.
# Neighbours: a subvolume inside a subvolume, a snapshot two directories
# deep, a read-only snapshot, a filesystem mounted inside a subvolume, an
# area whose directory is itself a subvolume, and an area that is not
# persist (seed only).
. "$(dirname "$0")/lib-area.sh"
command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null || skip "btrfs-progs missing"

LOOP=""
cleanup_c34() {
	cleanup # lib-area.sh: unmounts everything below $SCRATCH, removes it
	if [ -n "$LOOP" ]; then
		btrfs device scan --forget "$LOOP" >/dev/null 2>&1
		losetup -d "$LOOP" 2>/dev/null
	fi
}
trap cleanup_c34 EXIT

truncate -s 256M "$SCRATCH/btrfs.img"
LOOP=$(losetup -f --show "$SCRATCH/btrfs.img") || skip "cannot attach a loop device here"
mkfs.btrfs -q -f "$LOOP" >/dev/null || fail "mkfs.btrfs"
mkdir -p "$SCRATCH/m"
mount "$LOOP" "$SCRATCH/m" || skip "cannot mount a btrfs here"
# shared, as every mount is under systemd ("/" shared): the carried clones
# then sit in peer groups, and a busy stop's restore has to cope with that
mount --make-shared "$SCRATCH/m" || fail "cannot make $SCRATCH/m shared"

# subvol? PATH: a subvolume's root has inode 256 (BTRFS_FIRST_FREE_OBJECTID)
subvol() { [ "$(stat -c %i "$1")" = 256 ]; }
dev_of() { stat -c %d "$1"; }

V=$SCRATCH/m/data
mkdir -p "$V/plain" "$V/x/y"
echo plain >"$V/plain/f"
btrfs -q subvolume create "$V/sub" >/dev/null || fail "btrfs subvolume create"
echo kept >"$V/sub/kept"
btrfs -q subvolume create "$V/sub/inner" >/dev/null || fail "nested subvolume"
echo inner >"$V/sub/inner/in"
btrfs -q subvolume snapshot "$V/sub" "$V/x/y/snap" >/dev/null || fail "snapshot"
btrfs -q subvolume snapshot -r "$V/sub" "$V/ro" >/dev/null || fail "read-only snapshot"
mkdir "$V/sub/mnt" && mount -t tmpfs c34mnt "$V/sub/mnt" && echo mounted >"$V/sub/mnt/f" ||
	fail "cannot mount a tmpfs inside the subvolume"
SUBDEV=$(dev_of "$V/sub")
[ "$SUBDEV" != "$(dev_of "$V")" ] || fail "setup: the subvolume has the directory's device number"

write_conf <<EOT
[area data]
path = $V
backend = tmpfs
size = 32M
persist = yes
EOT

expect_rc 0 start
[ "$(findmnt -rn -o FSTYPE --mountpoint "$V" | tail -1)" = tmpfs ] || fail "the area is not over $V"
[ "$(cat "$V/plain/f")" = plain ] || fail "not seeded"
[ "$(cat "$V/sub/kept" 2>/dev/null)" = kept ] ||
	fail "the subvolume $V/sub shows empty in the area: $(ls -A "$V/sub")"
[ "$(cat "$V/sub/inner/in" 2>/dev/null)" = inner ] || fail "the subvolume inside the subvolume is empty in the area"
[ "$(cat "$V/x/y/snap/kept" 2>/dev/null)" = kept ] || fail "the snapshot two deep is empty in the area"
[ "$(cat "$V/ro/kept" 2>/dev/null)" = kept ] || fail "the read-only snapshot is empty in the area"
[ "$(cat "$V/sub/mnt/f" 2>/dev/null)" = mounted ] || fail "the tmpfs mounted inside the subvolume is hidden by the area"
[ "$(dev_of "$V/sub")" = "$SUBDEV" ] && subvol "$V/sub" || fail "$V/sub in the area is not the subvolume"
AREA=$RUN/areas/data/area
[ -z "$(ls -A "$AREA/sub")" ] || fail "the subvolume was copied into RAM: $(ls -A "$AREA/sub")"
expect_rc 0 status
grep -E "^area +data +$V +active" "$OUT" >/dev/null || { cat "$OUT"; fail "status does not show the area active"; }
pass "subvolumes and snapshots below the area show their content at their place, not copied into RAM"

echo new >"$V/sub/new" || fail "cannot write into the subvolume"
echo new2 >"$V/sub/inner/new2" || fail "cannot write into the nested subvolume"
echo new3 >"$V/x/y/snap/new3" || fail "cannot write into the snapshot"
echo beside >"$V/beside"
echo deeper >"$V/x/beside"
if (echo no >"$V/ro/nope") 2>/dev/null; then fail "a write into the read-only snapshot succeeded"; fi
[ -e "$V/ro/nope" ] && fail "the read-only snapshot took a file"
expect_rc 0 sync data
LOWER=$RUN/areas/data/lower
[ "$(cat "$LOWER/beside")" = beside ] && [ "$(cat "$LOWER/x/beside")" = deeper ] || fail "sync did not write back"
[ "$(cat "$LOWER/sub/new" 2>/dev/null)" = new ] || fail "a write into the subvolume is not on the disk"
[ "$(cat "$LOWER/sub/kept")" = kept ] && [ "$(cat "$LOWER/sub/inner/in")" = inner ] ||
	fail "sync changed the subvolume on the disk"
pass "writes into subvolumes go to the disk; files beside them are synced back"

expect_rc 0 stop
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 0 ] || fail "stop left something on $V"
[ "$(findmnt -rn -o TARGET | grep -c "^$V/")" = 1 ] ||
	{ findmnt -rn -o TARGET | grep "^$V"; fail "stop left mounts below $V (only $V/sub/mnt was there)"; }
[ "$(cat "$V/sub/mnt/f" 2>/dev/null)" = mounted ] || fail "stop did not leave the tmpfs inside the subvolume mounted"
for f in sub/new:new sub/inner/new2:new2 x/y/snap/new3:new3 beside:beside x/beside:deeper sub/kept:kept; do
	[ "$(cat "$V/${f%%:*}" 2>/dev/null)" = "${f#*:}" ] || fail "$V/${f%%:*} was lost at stop"
done
subvol "$V/sub" && subvol "$V/sub/inner" && subvol "$V/x/y/snap" && subvol "$V/ro" ||
	fail "a subvolume is no longer one after stop"
[ "$(btrfs property get -ts "$V/ro" ro)" = ro=true ] || fail "the read-only snapshot is writable after stop"
[ -e "$V/ro/nope" ] && fail "the read-only snapshot took a file"
pass "stop exits 0 and every file written into a subvolume or beside it is on the disk"

# a process holds the area: stop fails naming it and the subvolumes (and
# the tmpfs inside one) stay visible; once it is gone stop finishes
expect_rc 0 start
hold_in "$V/plain"
expect_rc 1 stop
grep -q "pid $HOLDER" "$OUT" || { cat "$OUT"; fail "stop does not name the process that holds the area"; }
[ "$(cat "$V/sub/kept" 2>/dev/null)" = kept ] || fail "a stop that failed busy hid the subvolume"
[ "$(cat "$V/sub/mnt/f" 2>/dev/null)" = mounted ] || fail "a stop that failed busy hid the tmpfs inside the subvolume"
echo after >"$V/sub/after" || fail "cannot write into the subvolume after a busy stop"
kill "$HOLDER" && wait "$HOLDER" 2>/dev/null
expect_rc 0 stop
[ "$(cat "$V/sub/after" 2>/dev/null)" = after ] || fail "a write after a busy stop was lost"
[ "$(findmnt -rn -o TARGET | grep -c "^$V/")" = 1 ] || fail "stop left mounts below $V"
pass "stop held by a process: the subvolumes stay visible, then stop finishes"

# a carried subvolume unmounted by someone else: status says so
expect_rc 0 start
umount "$V/x/y/snap" || fail "cannot unmount the carried snapshot"
expect_rc 3 status # degraded (storaged(8), EXIT STATUS)
grep -E "^area +data +$V +degraded" "$OUT" >/dev/null && grep -q "subvolume" "$OUT" ||
	{ cat "$OUT"; fail "status does not say a carried subvolume is gone"; }
expect_rc 0 stop
[ "$(cat "$V/x/y/snap/new3" 2>/dev/null)" = new3 ] || fail "the snapshot lost a file"
pass "a carried subvolume unmounted by someone else: status says degraded"

# the area's directory is itself a subvolume, not persist (seed only): the
# subvolume below it is carried too; what was written in RAM beside it goes
umount "$V/sub/mnt"
btrfs -q subvolume create "$SCRATCH/m/vol" >/dev/null || fail "btrfs subvolume create vol"
W=$SCRATCH/m/vol
echo top >"$W/top"
btrfs -q subvolume create "$W/sv" >/dev/null || fail "btrfs subvolume create vol/sv"
echo old >"$W/sv/old"
write_conf <<EOT
[area vol]
path = $W
backend = tmpfs
size = 32M
EOT
expect_rc 0 start
[ "$(cat "$W/top" 2>/dev/null)" = top ] || fail "the area over a subvolume was not seeded"
[ "$(cat "$W/sv/old" 2>/dev/null)" = old ] || fail "the subvolume below a non-persist area shows empty"
echo written >"$W/sv/written" || fail "cannot write into the subvolume below a non-persist area"
echo ram >"$W/ram"
expect_rc 0 stop
[ "$(cat "$W/sv/written" 2>/dev/null)" = written ] || fail "a write into the subvolume below a non-persist area was lost"
[ -e "$W/ram" ] && fail "a non-persist area wrote back"
[ "$(findmnt -rn -o TARGET | grep -c "^$W")" = 0 ] || fail "stop left mounts on or below $W"
pass "an area that is itself a subvolume, not persist: the subvolume below it is carried, the rest stays in RAM"
