#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A filesystem a user can write, mounted without nosuid or nodev, gives
# that user root (issue 39 item 5): they put a set-user-ID root shell or a
# device node of the disks into the image's bytes.  mount(8) run by root
# mounts such a line without a word, and so does storaged; check names it
# at its line with the options to add:
#  - a loop image owned by a user, without nosuid,nodev / without nodev;
#  - an image others can write (root's, mode 0666);
#  - a device a user owns (a loop device chowned to them);
#  - an area whose writeback device a user owns, with nosuid = no;
# and says nothing of root's own image, or of a line with both options.
. "$(dirname "$0")/lib-area.sh"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
NOBODY=$(id -u nobody) || skip "no user nobody"
LOOP=
cleanup_all() {
	cleanup
	# the node outlives the test: root's again
	[ -z "$LOOP" ] || { chown root "$LOOP"; losetup -d "$LOOP"; }
}
trap cleanup_all EXIT

IMG=$SCRATCH/user.img
truncate -s 16M "$IMG"
mkfs.ext4 -q -F "$IMG" || fail "mkfs.ext4"
mkdir -p "$SCRATCH/mnt" "$SCRATCH/data"
write_conf </dev/null

# fstab_line OPTIONS [SOURCE]: the only line of the fstab
fstab_line() {
	echo "${2:-$IMG} $SCRATCH/mnt ext4 $1,noauto,x-storaged 0 0" >"$FSTAB"
}
# expect_named LACKS WHAT
expect_named() {
	expect_rc 0 check
	grep -qF "$FSTAB:1: " "$OUT" && grep -qF "'$SCRATCH/mnt' mounts $2, which a user other than root can write" "$OUT" &&
		grep -qF "without $1: whoever writes it can put a set-user-ID root program or a device node in it and become root; add $1 to the options" "$OUT" ||
		{ cat "$OUT"; fail "check does not name $2 without $1 at $FSTAB:1"; }
}
expect_quiet() {
	expect_rc 0 check
	! grep -q "a user other than root can write" "$OUT" || { cat "$OUT"; fail "check warns of $1"; }
}

chown nobody "$IMG"
fstab_line loop
expect_named nosuid,nodev "the image '$IMG'"
fstab_line loop,nosuid
expect_named nodev "the image '$IMG'"
fstab_line loop,nodev,nosuid,suid
expect_named nosuid "the image '$IMG'"
fstab_line loop,nosuid,nodev
expect_quiet "an image mounted nosuid,nodev"
pass "a loop image uid $NOBODY owns: named at its line unless nosuid,nodev"

chown root "$IMG"
chmod 0644 "$IMG"
fstab_line loop
expect_quiet "root's image, mode 0644"
chmod 0666 "$IMG"
expect_named nosuid,nodev "the image '$IMG'"
chmod 0644 "$IMG"
pass "root's image: quiet at 0644, named at 0666"

LOOP=$(losetup -f --show "$IMG") || fail "losetup"
chown nobody "$LOOP"
fstab_line defaults "$LOOP"
expect_named nosuid,nodev "the device '$LOOP'"
pass "a device uid $NOBODY owns: named"

: >"$FSTAB"
write_conf <<EOT
[area wb]
path = $SCRATCH/data
backend = zram
size = 32M
nosuid = no
writeback-device = $LOOP
EOT
wb_line=$(grep -n '^writeback-device' "$CONF" | cut -d: -f1)
sd check
grep -qF "$CONF:$wb_line: " "$OUT" &&
	grep -qF "[area wb]: writeback-device $LOOP is owned by uid $NOBODY, mode " "$OUT" &&
	grep -qF "and the area is mounted without nosuid: whoever writes the device can change the area's files and become root; give the device to root, or set nosuid = yes" "$OUT" ||
	{ cat "$OUT"; fail "check does not name the user's writeback device at $CONF:$wb_line"; }
chown root "$LOOP"
sd check
! grep -q "writeback-device $LOOP is owned by" "$OUT" || { cat "$OUT"; fail "check warns of root's writeback device"; }
pass "an area with nosuid = no writing back to a device uid $NOBODY owns: named at the key's line"
