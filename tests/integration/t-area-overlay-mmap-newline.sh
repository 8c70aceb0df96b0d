#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Found by a hostile trial (branch attack4) of aff94bc, which matched the
# overlay's mappings in /proc/PID/maps by their printed path; they are
# matched by the overlay's inode now, and the path is never read.
#
# An overlay area (seed = overlay, persist = yes).  A program maps shared
# a file whose name holds a newline and writes twice; the sync between
# the writes carries the first (ctime).  /proc/PID/maps prints the
# newline as \012 (seq_file_path()): the old code looked up that
# literal name, found nothing and dropped the line, so the file is in neither
# sync's mapped set, its ctime does not move for the second write, and
# the next `sync` exits 0 without it: a power cut then loses it.
# (`stop` compares by content and carries it.)
. "$(dirname "$0")/lib-area.sh"
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
command -v python3 >/dev/null || skip "no python3 (the mmap writer)"

# writer PATH: maps PATH shared, writes "first", says so, waits for the
# go, writes "second" through the same mapping, closes
writer() {
	python3 - "$1" "$SCRATCH/ready" "$SCRATCH/go" <<'PY' &
import mmap, os, sys, time
path, ready, go = sys.argv[1:4]
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, 4096)
m[0:5] = b"first"
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.01)
m[0:6] = b"second"
m.flush()
m.close()
os.close(fd)
PY
	WRITER=$!
	for i in $(seq 1 500); do [ -e "$SCRATCH/ready" ] && break; sleep 0.01; done
	[ -e "$SCRATCH/ready" ] || { kill "$WRITER"; fail "the mmap writer did not start"; }
}

second_write() {
	sleep 0.05
	touch "$SCRATCH/go"
	wait "$WRITER" || fail "the mmap writer failed"
}

P=$SCRATCH/work
N=$'a\nb'
mkdir -p "$P"
head -c 4096 /dev/zero | tr '\0' . >"$P/$N"
persist_conf "$P" overlay
expect_rc 0 start

writer "$P/$N"
expect_rc 0 sync
[ "$(head -c 5 "$RUN/areas/p/lower/$N")" = first ] || fail "the sync did not carry the first write through the mapping"
second_write
[ "$(head -c 6 "$P/$N")" = second ] || fail "the area does not show the second write"
expect_rc 0 sync
got=$(head -c 6 "$RUN/areas/p/lower/$N")
[ "$got" = second ] ||
	fail "a write through a shared mapping of a file whose name holds a newline is not in the directory after a sync that exited 0: '$got' (lost on a power cut)"
pass "the sync carried a write through a mapping of a file named with a newline"
expect_rc 0 stop
[ "$(head -c 6 "$P/$N")" = second ] || fail "stop lost the write through the mapping of a file named with a newline"
pass "stop carried it"
