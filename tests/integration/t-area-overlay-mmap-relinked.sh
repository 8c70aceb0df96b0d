#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile trial (branch attack4) of aff94bc, "Overlay sync: a file mapped
# shared at this sync or the last one is compared by content".
#
# An overlay area (seed = overlay, persist = yes).  A program maps a file
# shared and writes; the file then gets a second name (ln) and loses the
# first (rm), as a save by link-and-unlink does; `sync` carries the new
# name with the first write.  The program writes again through the same
# mapping: the file's ctime does not move.  /proc/PID/maps names the
# mapping by its old name with " (deleted)": via_ino() finds no file by
# that name and drops the line, so the file is in neither sync's mapped
# set, and the next `sync` exits 0 without the second write: a power cut
# then loses it.  (`stop` compares by content and carries it.)
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
mkdir -p "$P"
head -c 4096 /dev/zero | tr '\0' . >"$P/db"
persist_conf "$P" overlay
expect_rc 0 start

writer "$P/db"
ln "$P/db" "$P/db2" && rm "$P/db" || fail "cannot relink the mapped file"
expect_rc 0 sync
[ "$(head -c 5 "$RUN/areas/p/lower/db2")" = first ] || fail "the sync did not carry the first write under the new name"
second_write
[ "$(head -c 6 "$P/db2")" = second ] || fail "the area does not show the second write"
expect_rc 0 sync
got=$(head -c 6 "$RUN/areas/p/lower/db2")
[ "$got" = second ] ||
	fail "a write through a shared mapping of a file renamed by ln+rm is not in the directory after a sync that exited 0: '$got' (lost on a power cut)"
pass "the sync carried a write through a mapping of a relinked file"
expect_rc 0 stop
[ "$(head -c 6 "$P/db2")" = second ] || fail "stop lost the write through the mapping of a relinked file"
pass "stop carried it"
