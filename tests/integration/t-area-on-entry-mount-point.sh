#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An [area] whose path is the mount point of an fstab entry storaged mounts
# itself: the area is bound over the entry's filesystem once it is mounted,
# and the next start finds "something else mounted" there (the area), fails
# the entry and lost the record of its mount: stop left it mounted.  Such a
# configuration is refused before anything is done (check and --dry-run
# exit 2 naming the area's file:line and the entry's; start refuses that
# area alone, exit 1, and mounts the entry, C35), whatever the
# filesystem, and however the mount point is spelt.
#
# And what storaged mounted in one pass stays storaged's to undo when a
# later pass fails it: a first start mounts two entries, someone mounts
# over the first, a second start fails it ("something else is mounted");
# stop must not forget storaged's mount under theirs (it used to exit 0
# and leave it), and the second entry, mounted and fine, is not "skipped".
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/m" "$SCRATCH/real/l"
ln -s real "$SCRATCH/link"
before=$(mount_snapshot)

# refuse CONF_LINE FSTAB_LINE: check and --dry-run exit 2, with the
# area's file:line, the entry's and what to do, and change nothing; start
# fails the area alone (exit 1, the same words) and binds nothing over the
# entry, which its stop undoes
refuse() {
	local cmd
	for cmd in check --dry-run; do
		run_sd 2 $cmd
		expect_out "$CONF:$1: .*area 'on'.*$FSTAB:$2"
		expect_out "directory below the mount point"
		[ "$(mount_snapshot)" = "$before" ] || fail "storaged $cmd changed the mounts"
		[ ! -e "$STATE" ] || fail "storaged $cmd made the state directory"
	done
	run_sd 1 start
	expect_out "refused, $CONF:$1: .*area 'on'.*$FSTAB:$2"
	findmnt -rn -o SOURCE | grep -qx "storaged-on" && fail "start set up the refused area"
	sd stop >/dev/null 2>&1
	[ "$(mount_snapshot)" = "$before" ] || fail "start and stop changed the mounts"
	rm -rf "$STATE"
}

note "an area on an x-storaged tmpfs's mount point"
echo "tmpfs  $SCRATCH/m  tmpfs  size=8M,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\n\n[area on]\npath = %s\nsize = 4M\nseed = no\n' "$SCRATCH/m" >"$CONF"
refuse 4 1

note "spelt otherwise in the fstab, and through a symbolic link"
printf '# a comment\ntmpfs  %s//m/  tmpfs  size=8M,noauto,x-storaged  0 0\n' "$SCRATCH" >"$FSTAB"
refuse 4 2
echo "tmpfs  $SCRATCH/link/l  tmpfs  size=8M,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\n\n[area on]\npath = %s\nsize = 4M\nseed = no\n' "$SCRATCH/real/l" >"$CONF"
refuse 4 1

if command -v mkfs.btrfs >/dev/null; then
	note "an area on an x-storaged btrfs's mount point"
	DEV=$(mkloop b 128M)
	mkfs.btrfs -q -f "$DEV" >/dev/null || fail "mkfs.btrfs"
	FSID=$(blkid -s UUID -o value "$DEV")
	echo "UUID=$FSID  $SCRATCH/m  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
	printf '[storaged]\n\n[area on]\npath = %s\nsize = 4M\nseed = no\n' "$SCRATCH/m" >"$CONF"
	refuse 4 1
else
	note "mkfs.btrfs missing: the btrfs case is not run"
fi

note "an area on a directory below the mount point is fine"
mkdir -p "$SCRATCH/src/sub"
echo "$SCRATCH/src  $SCRATCH/m  none  bind,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\n\n[area on]\npath = %s\nsize = 4M\nseed = no\n' "$SCRATCH/m/sub" >"$CONF"
run_sd 0 check

note "a later pass fails a mount of an earlier one: stop still undoes it"
printf '[storaged]\n' >"$CONF"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/m      tmpfs  size=8M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/real/l  tmpfs  size=8M,noauto,x-storaged,x-storaged.requires=$SCRATCH/m  0 0
EOT
run_sd 0 start
mount -t tmpfs -o size=1M theirs "$SCRATCH/m" || fail "cannot mount over $SCRATCH/m"
run_sd 1 start
expect_out "something else is mounted on $SCRATCH/m: theirs"
expect_no_out "not done"
run_sd 1 status
expect_out "^mount *$SCRATCH/real/l .* done"
run_sd 1 stop
expect_out "$SCRATCH/m: another filesystem (theirs, tmpfs) is mounted on top of storaged's; unmount it first"
is_mountpoint "$SCRATCH/real/l" && fail "stop left the second entry mounted"
[ "$(mount_count "$SCRATCH/m")" = 2 ] || fail "stop did not leave both mounts on $SCRATCH/m: $(findmnt -rn --mountpoint "$SCRATCH/m")"
run_sd 1 status
expect_out "$SCRATCH/m"
umount "$SCRATCH/m" || fail "umount theirs"
run_sd 0 stop
is_mountpoint "$SCRATCH/m" && fail "stop left storaged's tmpfs on $SCRATCH/m (forgotten after the second start failed it)"
run_sd 0 status
expect_out "storaged has set up nothing"
[ "$(mount_snapshot)" = "$before" ] || fail "mounts left: $(mount_snapshot)"

command -v mkfs.ext4 >/dev/null || { note "mkfs.ext4 missing: the area below an entry is not run"; exit 0; }
note "an area below an entry that a later pass fails: listed once, undone in order"
VOL=$(mkloop vol 64M)
mkfs.ext4 -q -F -L amp-vol "$VOL" || fail "mkfs.ext4"
mount "$VOL" "$SCRATCH/m" && mkdir "$SCRATCH/m/sub" && umount "$SCRATCH/m" || fail "prepare the volume"
echo "LABEL=amp-vol  $SCRATCH/m  ext4  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\n\n[area below]\npath = %s\nsize = 4M\nseed = no\n' "$SCRATCH/m/sub" >"$CONF"
run_sd 0 start
mount -t tmpfs -o size=1M theirs "$SCRATCH/m" || fail "cannot mount over $SCRATCH/m"
run_sd 1 start
run_sd 1 status
[ "$(printf '%s\n' "$OUT" | grep -c "^area *below ")" = 1 ] || fail "status lists the area twice"
run_sd 1 stop
umount "$SCRATCH/m" || fail "umount theirs"
run_sd 0 start
run_sd 0 status
run_sd 0 stop
expect_out "area below: removed"
[ "$(mount_snapshot)" = "$before" ] || fail "mounts left: $(mount_snapshot)"
exit 0
