#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C08: two zram areas started and stopped 20 times, each on the device that
# hot_add returned, sized 64M and 16M; a zram device made beforehand by
# someone else (this test) is never touched.
. "$(dirname "$0")/lib-area.sh"
need_zram

# the unrelated device, in use: sized and holding a marker
other=$(cat /sys/class/zram-control/hot_add) || fail "hot_add"
ZRAM_MINE=$other
echo 8M >"/sys/block/zram$other/disksize" || fail "disksize of zram$other"
echo "not storaged's" | dd of="/dev/zram$other" bs=512 conv=sync status=none
marker() { head -c 15 "/dev/zram$other"; }

mkdir -p "$SCRATCH/cache" "$SCRATCH/spool"
echo c >"$SCRATCH/cache/c"
echo s >"$SCRATCH/spool/s"
write_conf <<EOT
[area c08a]
path = $SCRATCH/cache
backend = zram
fs = ext4
size = 64M

[area c08b]
path = $SCRATCH/spool
backend = zram
fs = ext4
size = 16M
EOT

# check_area DIR MIB: DIR is mounted from /dev/zramN whose disksize is MIB
check_area() {
	local src id
	src=$(findmnt -n -o SOURCE --mountpoint "$1" | head -1)
	case $src in /dev/zram[0-9]*) ;; *) fail "$1 mounted from '$src'" ;; esac
	id=${src#/dev/zram}
	[ "$id" != "$other" ] || fail "$1 landed on the unrelated zram$other"
	[ "$(cat "/sys/block/zram$id/disksize")" = $(($2 * 1024 * 1024)) ] ||
		fail "$1 on zram$id: disksize $(cat "/sys/block/zram$id/disksize"), expected ${2}M"
	echo "$id"
}

for i in $(seq 1 20); do
	expect_rc 0 start
	a=$(check_area "$SCRATCH/cache" 64) || exit 1
	b=$(check_area "$SCRATCH/spool" 16) || exit 1
	[ "$a" != "$b" ] || fail "run $i: both areas on zram$a"
	[ "$(cat "$SCRATCH/cache/c")$(cat "$SCRATCH/spool/s")" = cs ] || fail "run $i: seed content"
	expect_rc 0 stop
	[ ! -e "/sys/block/zram$a" ] && [ ! -e "/sys/block/zram$b" ] || fail "run $i: zram$a/zram$b not removed"
	[ -z "$(scratch_mounts)" ] || fail "run $i: mounts left"
	[ -e "/sys/block/zram$other" ] || fail "run $i: unrelated zram$other removed"
	[ "$(marker)" = "not storaged's" ] || fail "run $i: unrelated zram$other changed"
	[ "$(cat "/sys/block/zram$other/disksize")" = $((8 * 1024 * 1024)) ] || fail "run $i: zram$other resized"
done
pass "20 start/stop cycles: 64M and 16M on their own devices, zram$other untouched"
