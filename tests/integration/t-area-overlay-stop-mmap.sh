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
# (The mounted `sync` judges the same way and misses the write too, but
# the area still held it then; now the stop is the last chance and
# misses it as well.)
. "$(dirname "$0")/lib-area.sh"
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
command -v python3 >/dev/null || skip "no python3 (the mmap writer)"

P=$SCRATCH/work
mkdir -p "$P"
head -c 4096 /dev/zero | tr '\0' . >"$P/db"
persist_conf "$P" overlay
expect_rc 0 start

# writes "first" through a shared mapping, says so, waits for the go,
# writes "second" through the same mapping, closes
python3 - "$P/db" "$SCRATCH/ready" "$SCRATCH/go" <<'PY' &
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
writer=$!
for i in $(seq 1 500); do [ -e "$SCRATCH/ready" ] && break; sleep 0.01; done
[ -e "$SCRATCH/ready" ] || { kill "$writer"; fail "the mmap writer did not start"; }
expect_rc 0 sync
[ "$(head -c 5 "$RUN/areas/p/lower/db")" = first ] || fail "the sync did not carry the first write through the mapping"
sleep 0.05
touch "$SCRATCH/go"
wait "$writer" || fail "the mmap writer failed"
[ "$(head -c 6 "$P/db")" = second ] || fail "the area does not show the second write"
pass "the area shows a write made through a shared mapping after the sync"

expect_rc 0 stop
got=$(head -c 6 "$P/db")
[ "$got" = second ] ||
	fail "the write made through a shared mapping after a sync (the file's ctime unchanged) is not in the directory after stop, which exited 0: '$got' (lost)"
pass "stop carried a write made through a shared mapping after the last sync"
