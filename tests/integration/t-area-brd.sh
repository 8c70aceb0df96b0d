#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# backend = brd, the ramdisk of the original workaround (ramdisk_size=,
# mkfs, seed, bind): with the brd driver loaded (modprobe brd, unloaded
# again when this test loaded it) an area is made on a free /dev/ramN,
# seeded identical to its directory, and stop discards it (persist = no)
# and frees the ramdisk; an area larger than every ramdisk is refused
# naming the size and how to get one, nothing covered.
# (t-area-brd-missing.sh covers the driver's absence.)  The ramdisk is
# loaded as storaged's hint says, rd_size= the area's size: on a larger
# ramdisk the filesystem is made on the whole device and the area is
# refused for its effective limits.
. "$(dirname "$0")/lib-area.sh"

RD_KIB=32768
BRD_MINE=0
if [ ! -e /sys/module/brd ]; then
	command -v modprobe >/dev/null || skip "modprobe missing (kmod): cannot load the brd driver"
	modprobe brd rd_nr=1 rd_size=$RD_KIB 2>"$SCRATCH/modprobe.err" ||
		skip "no brd driver in this kernel (CONFIG_BLK_DEV_RAM): modprobe brd: $(head -n 1 "$SCRATCH/modprobe.err")"
	BRD_MINE=1
fi
brd_cleanup() {
	cleanup
	[ $BRD_MINE = 1 ] && rmmod brd 2>/dev/null
}
trap brd_cleanup EXIT
[ -b /dev/ram0 ] || skip "the brd driver is loaded but has no /dev/ram0 (rd_nr=0)"

P=$SCRATCH/ram
make_tree "$P"
xattr=no
set_xattr "$P/file" user.storaged "kept" 2>/dev/null && xattr=yes
tree_stat "$P" >"$SCRATCH/before"
write_conf <<EOT
[area ramdisk]
path = $P
backend = brd
size = 32M
inodes = 1000
persist = no
EOT
expect_rc 0 start
is_mountpoint "$P" || { cat "$OUT"; fail "$P is not covered"; }
src=$(findmnt -n -o SOURCE "$P")
case $src in /dev/ram[0-9]*) ;; *) fail "the area is mounted from '$src', not a /dev/ramN" ;; esac
tree_stat "$P" >"$SCRATCH/after"
diff -u "$SCRATCH/before" "$SCRATCH/after" || fail "the seeded tree differs (stat)"
[ -u "$P/setuid" ] || fail "setuid bit lost"
[ "$(stat -c %i "$P/file")" = "$(stat -c %i "$P/sub/hardlink")" ] || fail "hard link split"
if [ $xattr = yes ]; then
	[ "$(get_xattr "$P/file" user.storaged)" = kept ] || fail "xattr lost"
fi
pass "seeded on $src ($(findmnt -n -o FSTYPE "$P")), identical (xattrs: $xattr)"
expect_rc 0 status
grep -q ramdisk "$OUT" || { cat "$OUT"; fail "status does not show the area"; }

echo changed >"$P/file"
expect_rc 0 stop
is_mountpoint "$P" && fail "stop left $P covered"
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"
tree_stat "$P" >"$SCRATCH/stopped"
diff -u "$SCRATCH/before" "$SCRATCH/stopped" || fail "persist = no, yet the directory changed"
# the ramdisk is free again: no one holds it (O_EXCL succeeds)
python3 -c 'import os,sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))' "$src" 2>/dev/null ||
	{ command -v python3 >/dev/null && fail "$src is still held after stop"; }
pass "stop discarded the area and freed $src"

note "an area larger than every ramdisk"
sed -i 's/^size = 32M$/size = 128M/' "$CONF"
expect_rc 1 start
grep -q "no free /dev/ramN of at least 131072 KiB" "$OUT" || { cat "$OUT"; fail "the error does not name the size"; }
grep -q "modprobe brd rd_nr=1 rd_size=131072" "$OUT" || { cat "$OUT"; fail "the error does not say how to get one"; }
is_mountpoint "$P" && fail "directory covered"
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"
pass "$(grep -o "no free /dev/ramN.*" "$OUT" | head -1)"
