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

# wait for the start of a second, then sync and write underneath at once
# (all within that second)
for i in $(seq 1 200); do
	ns=$(date +%N)
	[ "${ns#0}" != "$ns" ] && [ "${ns:0:1}" = 0 ] && break
	sleep 0.005
done
expect_rc 0 sync
t1=$(date +%s)
echo "the directory's version" >"$V/proj/f"
echo made >"$V/proj/made"
[ "$(date +%s)" = "$t1" ] || skip "the writes after the sync took past its second (slow machine): not the same second"
sleep 1.1
expect_rc 0 sync
bad=""
[ "$(cat "$V/proj/f")" = "the directory's version" ] ||
	bad="f written in the directory just after a sync (same second) was replaced by the area's version: '$(cat "$V/proj/f")'; "
[ "$(cat "$V/proj/made" 2>/dev/null)" = made ] ||
	bad="${bad}made, made in the directory just after a sync (same second), was deleted by the next sync"
[ -z "$bad" ] || fail "$bad"
pass "a write just after a sync on a whole-second filesystem is the directory's"

# the same just after start: the seed's baseline of the directory
expect_rc 0 stop
for i in $(seq 1 200); do
	ns=$(date +%N)
	[ "${ns#0}" != "$ns" ] && [ "${ns:0:1}" = 0 ] && break
	sleep 0.005
done
expect_rc 0 start
t1=$(date +%s)
echo "written after start" >"$V/proj/f"
echo made >"$V/proj/made-after-start"
[ "$(date +%s)" = "$t1" ] || skip "the writes after start took past its second (slow machine): not the same second"
sleep 1.1
expect_rc 0 sync
bad=""
[ "$(cat "$V/proj/f")" = "written after start" ] ||
	bad="f written in the directory just after start (same second) was replaced by the area's version: '$(cat "$V/proj/f")'; "
[ "$(cat "$V/proj/made-after-start" 2>/dev/null)" = made ] ||
	bad="${bad}a file made in the directory just after start (same second) was deleted by the next sync"
[ -z "$bad" ] || fail "$bad"
umount "$V"
expect_rc 0 stop
pass "a write just after start on a whole-second filesystem is the directory's"
