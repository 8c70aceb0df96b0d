#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Found by a hostile trial (branch attack3) of ae67ad8, "Overlay stop:
# applies only what changed in the upper layer since the last sync",
# reverted for it (8209e0c): the stop applies the whole upper layer.
#
# An overlay area (seed = overlay, persist = yes).  A program maps a file
# of the area shared (mmap(2), as sqlite in WAL mode, LMDB, a compiler's
# output or any editor with mmap do) and writes through the mapping; the
# page fault of that first write sets the file's ctime.  `sync` carries
# that version and stamps the time.  The program then writes again
# through the same mapping, closes, exits: a tmpfs page that is already
# dirty and writable takes no fault again (tmpfs never writes it back,
# so it is never write-protected again), and the file's ctime does not
# move.  `stop` unmounts the overlay, reads the last sync's stamp, finds
# the file's ctime before it, skips it, exits 0 and tears the area down:
# the second write, which succeeded, is not in the directory.  Before
# ae67ad8 the stop applied the whole upper layer and carried it.
#
# The mounted `sync` judged the same way and missed the write too: a
# power cut after it lost the write.  It now compares by content the
# files mapped shared at that sync or at the one before (as the copying
# sync does, C31), found by /proc/PID/maps: on Linux 6.1 a mapping shows
# the upper layer's file, from 6.8 the overlay's inode.
. "$(dirname "$0")/lib-area.sh"
need_overlay

P=$SCRATCH/work
mkdir -p "$P"
head -c 4096 /dev/zero | tr '\0' . >"$P/db"
persist_conf "$P" overlay
expect_rc 0 start

mmap_writer "$P/db"
expect_rc 0 sync
[ "$(head -c 5 "$RUN/areas/p/lower/db")" = first ] || fail "the sync did not carry the first write through the mapping"
mmap_second_write
[ "$(head -c 6 "$P/db")" = second ] || fail "the area does not show the second write"
pass "the area shows a write made through a shared mapping after the sync"

# the writer has gone: the file was mapped at the last sync, not now
expect_rc 0 sync
got=$(head -c 6 "$RUN/areas/p/lower/db")
[ "$got" = second ] ||
	fail "the sync after a second write through a shared mapping (ctime unchanged) left the directory with '$got'"
pass "the next sync carried a write made through a shared mapping after the last sync"
# the file was compared, not copied again: a sync with nothing new says nothing
expect_rc 0 sync
[ ! -s "$OUT" ] || { cat "$OUT"; fail "a sync with nothing changed printed the above"; }
pass "the sync after it, with nothing changed, is silent"

expect_rc 0 stop
got=$(head -c 6 "$P/db")
[ "$got" = second ] ||
	fail "the write made through a shared mapping after a sync (the file's ctime unchanged) is not in the directory after stop, which exited 0: '$got' (lost)"
pass "stop carried a write made through a shared mapping after the last sync"
