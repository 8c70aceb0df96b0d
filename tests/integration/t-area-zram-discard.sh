#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A zram area gives the memory of a deleted file back (issue 39 item 4):
# the area's fs is mounted with discard, as zram-generator mounts it, so
# that the zram device frees the pages of the blocks a deletion frees.
# Measured from the device's mm_stat (mem_used_total, its third field:
# Documentation/admin-guide/blockdev/zram.rst): a 64 MiB file of random
# bytes (incompressible) raises it by about 64 MiB, its deletion takes
# that back, with no fstrim.  ext2, which has no online discard, is named
# by check.  A seeded one with fs = btrfs starts.
. "$(dirname "$0")/lib-area.sh"
need_zram

mem_used() { awk '{ print $3 }' "/sys/block/$1/mm_stat"; }
MIB=$((1024 * 1024))

mkdir -p "$SCRATCH/data"
echo d >"$SCRATCH/data/d"
write_conf <<EOT
[area zd]
path = $SCRATCH/data
backend = zram
size = 256M
EOT
expect_rc 0 check
expect_rc 0 start
src=$(findmnt -n -o SOURCE --mountpoint "$SCRATCH/data")
case $src in /dev/zram[0-9]*) ;; *) fail "area mounted from '$src'" ;; esac
dev=${src#/dev/}
findmnt -n -o OPTIONS --mountpoint "$SCRATCH/data" | tr , '\n' | grep -qx discard ||
	fail "$src is not mounted with discard: $(findmnt -n -o OPTIONS --mountpoint "$SCRATCH/data")"

sync
before=$(mem_used "$dev")
head -c $((64 * MIB)) /dev/urandom >"$SCRATCH/data/big" || fail "writing 64 MiB into the area"
sync
written=$(mem_used "$dev")
echo "$dev mem_used_total: $before before, $written with the 64 MiB file"
[ "$written" -ge $((before + 60 * MIB)) ] ||
	fail "$dev holds only $((written - before)) more bytes with a 64 MiB file of random bytes"
rm "$SCRATCH/data/big"
sync
after=$(mem_used "$dev")
echo "$dev mem_used_total: $after after the deletion"
# zsmalloc keeps some pages of its pools: most of the 64 MiB comes back
[ "$after" -le $((before + 8 * MIB)) ] ||
	fail "$dev still uses $(((after - before) / MIB)) MiB more than before, after the 64 MiB file was deleted (no discard?)"
[ "$(cat "$SCRATCH/data/d")" = d ] || fail "the seed's file"
expect_rc 0 stop
pass "a deleted 64 MiB file's memory is given back ($(((written - after) / MIB)) MiB), without fstrim"

# btrfs makes its inodes as needed (statvfs f_files 0): a seeded area on
# it is not refused for want of free inodes (a fresh user's trial: start
# always failed, "btrfs has 175M and 1 inodes free")
if command -v mkfs.btrfs >/dev/null; then
	write_conf <<EOT
[area zd]
path = $SCRATCH/data
backend = zram
size = 256M
fs = btrfs
EOT
	expect_rc 0 start
	[ "$(findmnt -n -o FSTYPE --mountpoint "$SCRATCH/data")" = btrfs ] || fail "the area is not btrfs"
	[ "$(cat "$SCRATCH/data/d")" = d ] || fail "the seed's file on btrfs"
	# btrfs shows stat(2) another device than mountinfo: the area is
	# still told by its source, active, and stop takes it down
	expect_rc 0 status
	grep -E "^area +zd +.* active +zram /dev/zram[0-9]+: .* inodes as needed" "$OUT" >/dev/null ||
		{ cat "$OUT"; fail "status does not show the btrfs area active"; }
	expect_rc 0 stop
	[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
	pass "a seeded zram area with fs = btrfs starts, shows active, stops"
else
	echo "# mkfs.btrfs missing: no btrfs case"
fi

# ext2 has no online discard: check says what it costs
command -v mkfs.ext2 >/dev/null || skip "mkfs.ext2 missing (the ext2 part)"
write_conf <<EOT
[area zd]
path = $SCRATCH/data
backend = zram
size = 64M
fs = ext2
EOT
expect_rc 0 check
fs_line=$(grep -n '^fs = ext2' "$CONF" | cut -d: -f1)
grep -q "$CONF:$fs_line: .*\[area zd\] puts ext2 on zram, which has no online discard: the memory of deleted files stays in use until the area is stopped; use fs = ext4" "$OUT" ||
	{ cat "$OUT"; fail "check does not name ext2's missing discard at line $fs_line"; }
expect_rc 0 start
findmnt -n -o OPTIONS --mountpoint "$SCRATCH/data" | tr , '\n' | grep -qx discard &&
	fail "ext2 mounted with discard"
expect_rc 0 stop
pass "ext2 on zram: mounted without discard, and check says what that costs"
