#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A persist area's directory on a filesystem with whole-second times
# (ext4 with 128-byte inodes), written underneath (through a bind of its
# parent made before `start`) just after a sync, in the same second as
# that sync's end.  The directory's baseline (trusted.storaged.lower-synced)
# was a nanosecond reading of the clock, past the floor of that second
# which the filesystem gives the write: the write looked older than the
# sync, the next sync put the area's version over the file and deleted a
# file made there, exit 0 (found by a hostile trial, branch attack2).  The
# baseline is now a time the directory's filesystem itself gives, once
# past the sync's renames (fs_time_past()): the write is at or past it.
. "$(dirname "$0")/lib-area.sh"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"

truncate -s 64M "$SCRATCH/disk.img"
mkfs.ext4 -q -F -I 128 "$SCRATCH/disk.img" >/dev/null 2>&1 || skip "mkfs.ext4 -I 128 failed"
W=$SCRATCH/work
V=$SCRATCH/view
mkdir -p "$W" "$V"
mount -o loop "$SCRATCH/disk.img" "$W" || skip "cannot mount the image"
P=$W/proj
mkdir -p "$P"
echo original >"$P/f"
persist_conf "$P"
mount --bind "$W" "$V" && mount --make-private "$V" || fail "cannot bind $W at $V"
expect_rc 0 start
# whole-second times there
touch "$V/proj/probe" && [ "$(stat -c %z "$V/proj/probe" | sed 's/.*\.\([0-9]*\) .*/\1/')" = 000000000 ] ||
	skip "the filesystem keeps finer times than seconds"
rm -f "$V/proj/probe"
echo area >"$P/g"
expect_rc 0 sync

# write_after WHAT ARGS...: at the start of a second, storaged ARGS, then at
# once (in that second) f rewritten and a file made underneath; the next
# sync, a second later, must keep both as the directory's
write_after() {
	local what=$1 i ns t1 bad=""
	shift
	for i in $(seq 1 200); do
		ns=$(date +%N)
		[ "${ns:0:1}" = 0 ] && break
		sleep 0.005
	done
	expect_rc 0 "$@"
	t1=$(date +%s)
	echo "written after $what" >"$V/proj/f"
	echo made >"$V/proj/made-after-$what"
	[ "$(date +%s)" = "$t1" ] || skip "the writes after $what took past its second (slow machine): not the same second"
	sleep 1.1
	expect_rc 0 sync
	[ "$(cat "$V/proj/f")" = "written after $what" ] ||
		bad="f written in the directory just after $what (same second) was replaced by the area's version: '$(cat "$V/proj/f")'; "
	[ "$(cat "$V/proj/made-after-$what" 2>/dev/null)" = made ] ||
		bad="${bad}a file made in the directory just after $what (same second) was deleted by the next sync"
	[ -z "$bad" ] || fail "$bad"
	pass "a write just after $what on a whole-second filesystem is the directory's"
}

write_after sync sync
# the seed's baseline of the directory
expect_rc 0 stop
write_after start start
umount "$V"
expect_rc 0 stop
