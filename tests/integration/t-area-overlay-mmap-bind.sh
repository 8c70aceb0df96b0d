#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Found by a hostile trial (branch attack4) of aff94bc, which matched the
# overlay's mappings in /proc/PID/maps by their printed path; they are
# matched by the overlay's inode now, and the path is never read.
#
# An overlay area (seed = overlay, persist = yes) whose directory is also
# bind-mounted elsewhere (a container's volume, a chroot, mount --bind for
# a backup tool).  A program maps a file shared through the bind mount and
# writes twice; the sync between the writes carries the first (ctime).
# /proc/PID/maps names the mapping by the bind mount's path, which is not
# below the area's directory: mapped_scan() dropped the line,
# the file is in neither sync's mapped set, its ctime does not move for
# the second write, and the next `sync` exits 0 without it: a power cut
# then loses a write that succeeded.  (`stop` compares by content and
# carries it.)
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
B=$SCRATCH/bind
mkdir -p "$P" "$B"
head -c 4096 /dev/zero | tr '\0' . >"$P/db"
persist_conf "$P" overlay
expect_rc 0 start
mount --bind "$P" "$B" || fail "cannot bind-mount the area's directory"

writer "$B/db"
expect_rc 0 sync
[ "$(head -c 5 "$RUN/areas/p/lower/db")" = first ] || fail "the sync did not carry the first write through the mapping"
second_write
[ "$(head -c 6 "$P/db")" = second ] || fail "the area does not show the second write"
expect_rc 0 sync
got=$(head -c 6 "$RUN/areas/p/lower/db")
[ "$got" = second ] ||
	fail "a write through a shared mapping made via a bind mount of the area's directory is not in the directory after a sync that exited 0: '$got' (lost on a power cut)"
pass "the sync carried a write through a mapping made via a bind mount"
umount "$B"
expect_rc 0 stop
[ "$(head -c 6 "$P/db")" = second ] || fail "stop lost the write through the mapping made via a bind mount"
pass "stop carried it"
