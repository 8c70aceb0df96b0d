#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 42 item 3 (found by the hostile trial attack4 of aff94bc).
#
# An overlay area (seed = overlay, persist = yes).  A program maps a file
# shared and writes twice; the sync between the writes carries the first
# (ctime); the second moves no time, so only the mapping tells the next
# sync to compare the file.  From Linux 6.8 /proc/PID/maps names the
# mapping by the overlay's inode, numbered by the lower file it was copied
# up from, and the sync matches it by stat'ing the upper files through
# the overlay.  For a file with another name that stat reports the upper
# file's inode instead, and nothing matched the mapping:
#  - a file linked under a new name and unlinked from the old in the area
#    (ln a b && rm a, as a save by link and unlink does);
#  - a file with a second name (a hard link) in the directory itself.
# The second `sync` exited 0 without the second write: a power cut then
# lost it (`stop` compares by content and carried it).  On Linux 6.1 maps
# names the upper file, which the sync matches directly.
. "$(dirname "$0")/lib-area.sh"
need_overlay

P=$SCRATCH/work
mkdir -p "$P"
head -c 4096 /dev/zero | tr '\0' . >"$P/a"
head -c 4096 /dev/zero | tr '\0' . >"$P/h"
ln "$P/h" "$P/h2"
persist_conf "$P" overlay
expect_rc 0 start

# second_write WHAT NAME: the second write through the mapping of the
# area's file NAME reaches the directory at the next sync, and the sync
# after it has nothing to say
second_write() {
	local got
	[ "$(head -c 5 "$RUN/areas/p/lower/$2")" = first ] || fail "the sync did not carry the first write ($1)"
	mmap_second_write
	expect_rc 0 sync
	got=$(head -c 6 "$RUN/areas/p/lower/$2")
	[ "$got" = second ] ||
		fail "a write through a shared mapping of $1 is not in the directory after a sync that exited 0: '$got' (lost on a power cut)"
	expect_rc 0 sync
	[ ! -s "$OUT" ] || { cat "$OUT"; fail "a sync with nothing changed printed the above ($1)"; }
	pass "the sync carried a write through a shared mapping of $1"
}

mmap_writer "$P/a"
ln "$P/a" "$P/b" && rm "$P/a" || fail "cannot relink the mapped file"
expect_rc 0 sync
second_write "a file linked under a new name and unlinked from the old" b

mmap_writer "$P/h"
expect_rc 0 sync
second_write "a file with a second name in the directory" h

expect_rc 0 stop
[ "$(head -c 6 "$P/b")" = second ] && [ "$(head -c 6 "$P/h")" = second ] ||
	fail "stop lost a write made through a shared mapping"
pass "stop carried both"
