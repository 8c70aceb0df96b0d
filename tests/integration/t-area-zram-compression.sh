#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A zram area's compressor and writeback device, as zram-generator users
# set them: compression-algorithm = is the device's comp_algorithm once
# the area is up; a compressor the kernel does not have is named by check
# and --dry-run with the kernel's own list, and start fails on it with
# that list and leaves no device behind; writeback-device = is the
# device's backing_dev where the kernel has CONFIG_ZRAM_WRITEBACK, and
# elsewhere a failure that says so, which check foretells at the key's
# line; a writeback device that is missing or not a block device is named
# by check.
. "$(dirname "$0")/lib-area.sh"
need_zram
# the writeback device is a loop device of this test's: detached after the
# zram devices that hold it are released
LOOPS_MINE=
cleanup_all() {
	cleanup
	[ -z "$LOOPS_MINE" ] || losetup -d "$LOOPS_MINE"
}
trap cleanup_all EXIT

# a device of this test's own, so that check can read the kernel's list
# (check makes no device to find out)
own=$(cat /sys/class/zram-control/hot_add) || fail "hot_add"
ZRAM_MINE=$own
read -r -a kernel_list <<<"$(tr -d '[]' <"/sys/block/zram$own/comp_algorithm")"
[ ${#kernel_list[@]} -gt 0 ] || fail "zram$own lists no compressor"
# the last one listed: not the default (which is in brackets, usually first)
alg=${kernel_list[${#kernel_list[@]} - 1]}
echo "kernel's compressors: ${kernel_list[*]}; using $alg"

mkdir -p "$SCRATCH/data"
echo d >"$SCRATCH/data/d"
write_conf <<EOT
[area zc]
path = $SCRATCH/data
backend = zram
size = 32M
compression-algorithm = $alg
EOT

expect_rc 0 check
expect_rc 0 --dry-run
grep -q "area zc zram on $SCRATCH/data fs ext4 compressed $alg " "$OUT" || { cat "$OUT"; fail "the plan does not show the compressor"; }
expect_rc 0 start
src=$(findmnt -n -o SOURCE --mountpoint "$SCRATCH/data")
id=${src#/dev/zram}
case $src in /dev/zram[0-9]*) ;; *) fail "area mounted from '$src'" ;; esac
grep -q "\[$alg\]" "/sys/block/zram$id/comp_algorithm" ||
	fail "zram$id: comp_algorithm is '$(cat "/sys/block/zram$id/comp_algorithm")', expected [$alg]"
[ "$(cat "$SCRATCH/data/d")" = d ] || fail "seed content"
expect_rc 0 stop
[ ! -e "/sys/block/zram$id" ] || fail "zram$id left after stop"
pass "compression-algorithm = $alg: zram$id compressed with it"

# a compressor this kernel does not have
write_conf <<EOT
[area zc]
path = $SCRATCH/data
backend = zram
size = 32M
compression-algorithm = nosuchzip
EOT
expect_rc 1 check
key_line=$(grep -n '^compression-algorithm' "$CONF" | cut -d: -f1)
grep -q "compression-algorithm = nosuchzip: this kernel's zram has ${kernel_list[*]}; choose one of them ($CONF:$key_line)" "$OUT" ||
	{ cat "$OUT"; fail "check does not name the kernel's compressors at the key's line $key_line"; }
before=$(ls /sys/block | grep -c '^zram')
expect_rc 1 start
grep -q "compression-algorithm = nosuchzip: not a compressor it has; this kernel's zram has: " "$OUT" ||
	{ cat "$OUT"; fail "start does not say why"; }
[ -z "$(scratch_mounts)" ] || fail "a mount left after the failed start"
[ "$(ls /sys/block | grep -c '^zram')" = "$before" ] || fail "a zram device left after the failed start"
expect_rc 0 stop
pass "an unknown compressor: named by check and start, nothing left"

# tmpfs has no compressor: a configuration error, nothing done (check
# refuses it; start fails that area alone, C35)
write_conf <<EOT
[area zc]
path = $SCRATCH/data
compression-algorithm = $alg
EOT
expect_rc 2 check
expect_rc 1 start
grep -q "sets compression-algorithm, which only backend = zram has (this area's backend is tmpfs)" "$OUT" ||
	{ cat "$OUT"; fail "no configuration error for a tmpfs compressor"; }
expect_rc 2 check
key_line=$(grep -n '^compression-algorithm' "$CONF" | cut -d: -f1)
grep -q "$CONF:$key_line: \[area zc\] sets compression-algorithm" "$OUT" ||
	{ cat "$OUT"; fail "the tmpfs compressor error is not at the key's line $key_line"; }
[ -z "$(scratch_mounts)" ] || fail "mounted despite the configuration error"

# writeback: a loop device of this test's as the backing device
truncate -s 64M "$SCRATCH/wb.img"
wb=$(losetup -f --show "$SCRATCH/wb.img") || fail "losetup"
LOOPS_MINE=$wb
# wb_conf DEVICE: the area with DEVICE as its writeback device; wb_line
# is the key's line
wb_conf() {
	write_conf <<EOT
[area zc]
path = $SCRATCH/data
backend = zram
size = 32M
writeback-device = $1
EOT
	wb_line=$(grep -n '^writeback-device' "$CONF" | cut -d: -f1)
}
wb_conf "$wb"
if [ -e "/sys/block/zram$own/backing_dev" ]; then
	expect_rc 0 check
	expect_rc 0 start
	src=$(findmnt -n -o SOURCE --mountpoint "$SCRATCH/data")
	id=${src#/dev/zram}
	[ "$(cat "/sys/block/zram$id/backing_dev")" = "$wb" ] ||
		fail "zram$id: backing_dev '$(cat "/sys/block/zram$id/backing_dev")', expected $wb"
	expect_rc 0 stop
	pass "writeback-device = $wb: zram$id's backing_dev"
else
	# check refuses what start would fail on, at the key's line
	expect_rc 1 check
	grep -q "writeback-device = $wb: this kernel's zram has no writeback (CONFIG_ZRAM_WRITEBACK is off: its zram devices have no backing_dev); remove writeback-device, or boot a kernel built with CONFIG_ZRAM_WRITEBACK=y ($CONF:$wb_line)" "$OUT" ||
		{ cat "$OUT"; fail "check does not refuse writeback-device at $CONF:$wb_line on a kernel without writeback"; }
	expect_rc 1 --dry-run
	grep -q "will fail.*CONFIG_ZRAM_WRITEBACK is off" "$OUT" || { cat "$OUT"; fail "the plan does not show the writeback failure"; }
	expect_rc 1 start
	grep -q "writeback-device = $wb: this kernel's zram has no writeback (CONFIG_ZRAM_WRITEBACK)" "$OUT" ||
		{ cat "$OUT"; fail "no CONFIG_ZRAM_WRITEBACK, and start does not say so"; }
	[ -z "$(scratch_mounts)" ] || fail "a mount left after the failed start"
	expect_rc 0 stop
	pass "writeback-device without CONFIG_ZRAM_WRITEBACK: a failure that says so (the writeback itself runs where the kernel has it: the Debian 12 guest)"
fi
losetup -d "$wb"
LOOPS_MINE=

# a writeback device that is missing, or not a block device (/dev/null): the
# kernel opens a block device only; check names the key's line
for bad in /dev/storaged-test-no-such-device /dev/null; do
	wb_conf "$bad"
	expect_rc 1 check
	if [ -e "$bad" ]; then
		want="writeback-device = $bad is not a block device (the kernel's zram writes back to a block device only); name a partition or a loop device ($CONF:$wb_line)"
	else
		want="writeback-device = $bad: No such file or directory; correct the device's name, or remove writeback-device ($CONF:$wb_line)"
	fi
	grep -qF "$want" "$OUT" || { cat "$OUT"; fail "check does not say: $want"; }
done
pass "writeback-device missing or not a block device: refused by check at its line"
