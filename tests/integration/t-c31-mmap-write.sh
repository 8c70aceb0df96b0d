#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C31: "changed since the last sync" is never decided from times the kernel
# does not move.  A program maps a file of a persist area MAP_SHARED and
# writes through the mapping (as databases and journal writers do): on
# tmpfs that moves neither mtime nor ctime nor size.  Each write must reach
# the directory at the next sync or at stop: one made before a sync, one
# after it through the same mapping by a program that then exits, one
# through a mapping still there at stop, one through a mapping made and
# gone between a sync and stop (at stop).  The other direction: a sync right
# after a change (in the same clock tick, as on a fast quiet machine) and a
# file mapped but not written make no later sync copy anything again: it
# prints nothing, on every machine.
. "$(dirname "$0")/lib-area.sh"
command -v python3 >/dev/null || skip "python3 missing (the mapping writer)"

P=$SCRATCH/db
mkdir -p "$P"
head -c 65536 /dev/zero >"$P/data"
head -c 8192 /dev/zero >"$P/idle"
head -c 8192 /dev/zero >"$P/page"
write_conf <<EOT
[storaged]
sync-interval = 0

[area db]
path = $P
backend = tmpfs
size = 16M
persist = yes
EOT
LOWER=$RUN/areas/db/lower
expect_rc 0 start

# mapper FILE: maps FILE shared; each line on its stdin "OFFSET TEXT"
# is written through the mapping; "exit" ends it (munmap, close)
FIFO=$SCRATCH/cmd
mkfifo "$FIFO"
python3 -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "exit":
        break
    off, text = line.split(" ", 1)
    m[int(off):int(off) + len(text.strip())] = text.strip().encode()
    print("wrote", flush=True)
m.close()
os.close(fd)
print("closed", flush=True)
' "$P/data" <"$FIFO" >"$SCRATCH/mapper.out" 2>&1 &
MAPPER=$!
exec 9>"$FIFO"
trap 'exec 9>&-; kill $MAPPER 2>/dev/null; cleanup' EXIT
wait_for() { for i in $(seq 100); do [ "$(grep -c "$1" "$SCRATCH/mapper.out")" -ge "$2" ] && return 0; sleep 0.05; done; fail "the mapper did not say '$1' $2 times: $(cat "$SCRATCH/mapper.out")"; }
wait_for ready 1
st0=$(stat -c '%Y.%y %Z %s' "$P/data")
echo "0 AAAA" >&9
wait_for wrote 1
expect_rc 0 sync db
[ "$(head -c 4 "$LOWER/data")" = AAAA ] || fail "a write through a mapping made before the sync was not synced"
pass "a write through a shared mapping before a sync is synced"

echo "0 BBBB" >&9
wait_for wrote 2
[ "$(stat -c '%Y.%y %Z %s' "$P/data")" = "$st0" ] ||
	echo "# this kernel moved the file's times for a write through the mapping"
echo "exit" >&9
wait_for closed 1
exec 9>&-
wait $MAPPER
expect_rc 0 sync db
[ "$(head -c 4 "$LOWER/data")" = BBBB ] || fail "a write through a mapping gone by the next sync was not synced"
pass "a write through a mapping that was there at the last sync and is gone now is synced"

# a mapping still there at stop
mkfifo "$FIFO.2"
python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[100:104] = b"CCCC"
print("wrote", flush=True)
sys.stdin.read()
' "$P/data" <"$FIFO.2" >"$SCRATCH/mapper2.out" 2>&1 &
MAPPER=$!
exec 9>"$FIFO.2"
for i in $(seq 100); do grep -q wrote "$SCRATCH/mapper2.out" && break; sleep 0.05; done
expect_rc 0 sync db
[ "$(dd if="$LOWER/data" bs=1 skip=100 count=4 2>/dev/null)" = CCCC ] ||
	fail "a write through a mapping opened after the last sync, still there, was not synced"
pass "a write through a mapping made after the last sync, still there, is synced"
exec 9>&-
wait $MAPPER

echo "# quiet: a sync right after a change, many times over (a tie of the change and the sync's baseline)"
quiet_sync() {
	expect_rc 0 sync db
	[ ! -s "$OUT" ] || { cat "$OUT"; fail "$1: a sync printed this, though nothing changed since the last one"; }
}
for i in $(seq 1 30); do
	echo "change $i" >"$P/file"
	expect_rc 0 sync db
	[ "$(cat "$LOWER/file")" = "change $i" ] || fail "change $i was not synced"
	quiet_sync "round $i"
done
pass "a sync right after a change, 30 times: the change synced once, the next sync silent"

# mapped, never written: compared, never copied
python3 -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
print("mapped", flush=True)
sys.stdin.read()
' "$P/idle" <"$FIFO" >"$SCRATCH/mapper3.out" 2>&1 &
MAPPER=$!
exec 9>"$FIFO"
for i in $(seq 100); do grep -q mapped "$SCRATCH/mapper3.out" && break; sleep 0.05; done
quiet_sync "a file mapped, not written"
quiet_sync "a file mapped, not written, again"
exec 9>&-
wait $MAPPER
quiet_sync "a file mapped at the last sync, not written"
pass "a file mapped but not written is compared, not copied: the syncs are silent"

# made after the last sync, gone before stop, a page read before it is
# written: the read maps the page writable, so the write takes no fault and
# moves no time, and no process names the file any more; stop compares
# every file by content
st0=$(stat -c '%Y.%y %Z %s' "$P/page")
python3 -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
assert m[300:304] == bytes(4)
m[300:304] = b"EEEE"
m.close()
os.close(fd)
' "$P/page" || fail "the mapping writer failed"
[ "$(stat -c '%Y.%y %Z %s' "$P/page")" = "$st0" ] ||
	echo "# this kernel moved the file's times for a write after a read through the mapping"

echo "DDDD" | dd of="$P/data" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_rc 0 stop
[ "$(dd if="$P/data" bs=1 skip=200 count=4 2>/dev/null)" = DDDD ] && [ "$(head -c 4 "$P/data")" = BBBB ] ||
	fail "stop lost a change"
[ "$(dd if="$P/page" bs=1 skip=300 count=4 2>/dev/null)" = EEEE ] ||
	fail "stop lost a write through a mapping made and gone since the last sync (a page read, then written)"
pass "stop: every write on the disk, the one of a mapping gone since the last sync too"
