#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Found by a hostile trial (branch attack4) of aff94bc, which matched an
# overlay area's mappings in /proc/PID/maps by their printed path below
# the area's directory and dropped the rest; they are matched by the
# overlay's inode now, and no path is read.
#
# An overlay area (seed = overlay, persist = yes).  A program maps a file
# shared and writes twice; the sync between the writes carries the first
# (ctime).  The second write moves no time: only the mapped set tells
# the next sync to compare the file.  The mapping is made
#  - through a bind mount of the area's directory (a container's volume,
#    a chroot, a backup tool's bind): maps names the bind's path;
#  - of a file whose name holds a newline: maps prints it as \012.
# Either way the old sync dropped the line, and the next `sync` exited 0
# without the second write: a power cut then lost it.  (`stop` compares
# by content and carried it.)
. "$(dirname "$0")/lib-area.sh"
need_overlay

P=$SCRATCH/work
B=$SCRATCH/bind
N=$'a\nb'
mkdir -p "$P" "$B"
head -c 4096 /dev/zero | tr '\0' . >"$P/db"
head -c 4096 /dev/zero | tr '\0' . >"$P/$N"
persist_conf "$P" overlay
expect_rc 0 start
mount --bind "$P" "$B" || fail "cannot bind-mount the area's directory"

# two_writes WHAT NAME MAPPED: the area's file NAME, mapped by the path
# MAPPED, written twice with a sync between; the next sync carries both
two_writes() {
	local what=$1 name=$2 got
	mmap_writer "$3"
	expect_rc 0 sync
	[ "$(head -c 5 "$RUN/areas/p/lower/$name")" = first ] || fail "the sync did not carry the first write ($what)"
	mmap_second_write
	[ "$(head -c 6 "$P/$name")" = second ] || fail "the area does not show the second write ($what)"
	expect_rc 0 sync
	got=$(head -c 6 "$RUN/areas/p/lower/$name")
	[ "$got" = second ] ||
		fail "a write through a shared mapping $what is not in the directory after a sync that exited 0: '$got' (lost on a power cut)"
	pass "the sync carried a write through a shared mapping $what"
}
two_writes "through a bind mount" db "$B/db"
two_writes "of a name with a newline" "$N" "$P/$N"
umount "$B"
expect_rc 0 stop
[ "$(head -c 6 "$P/db")" = second ] && [ "$(head -c 6 "$P/$N")" = second ] ||
	fail "stop lost a write made through a shared mapping"
pass "stop carried both"
