#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# grow = yes (storaged.conf(5)): a resident storaged raises a tmpfs area's
# size= and nr_inodes= before either runs out.  An area that starts at
# 32 MiB and 1k inodes takes 20 000 files / 160 MiB written at 2 000 files
# a second without one ENOSPC, keeps every file, logs each growth and
# shows start, current and ceiling in status and --json.  With growth
# barred by memory-reserve the resident names the limit hit within
# seconds of it (log, status, --json, metric); so it does for an area
# without grow.  zram and brd cannot grow: check refuses at the line.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/build
F=$SCRATCH/fixed
mkdir -p "$P" "$F"
echo seed >"$P/seed"

grow_conf() { # $1: memory-reserve
	write_conf <<EOT
[storaged]
sync-interval = 0
memory-reserve = $1

[area build]
path = $P
size = 32M
inodes = 1k
grow = yes

[area fixed]
path = $F
size = 4M
EOT
}

SD=
resident() {
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" --foreground start >"$SCRATCH/resident.log" 2>&1 &
	SD=$!
	for _ in $(seq 100); do is_mountpoint "$P" && is_mountpoint "$F" && [ -f "$RUN/storaged.pid" ] && break; sleep 0.1; done
	is_mountpoint "$P" && kill -0 "$SD" 2>/dev/null || { cat "$SCRATCH/resident.log"; fail "resident storaged did not set up the areas and stay"; }
}
leave() {
	[ -n "$SD" ] && kill "$SD" 2>/dev/null && wait "$SD" 2>/dev/null
	SD=
}
trap 'leave; cleanup' EXIT

# writer DIR FILES BYTES RATE: FILES files of BYTES bytes, RATE a second,
# in directories of 1000; prints "written N enospc M"; stops at the first
# error other than ENOSPC
writer() {
	python3 - "$@" <<'PY'
import errno, os, sys, time
top, files, size, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
data = b"x" * size
written = enospc = 0
t0 = time.monotonic()
for i in range(files):
    d = os.path.join(top, "d%03d" % (i // 1000))
    try:
        if i % 1000 == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%05d" % i), "wb") as f:
            f.write(data)
        written += 1
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        enospc += 1
    ahead = t0 + (i + 1) / rate - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)
print("written %d enospc %d seconds %.1f" % (written, enospc, time.monotonic() - t0))
PY
}

# ------------------------------------------------------------ check
write_conf <<EOT
[area z]
path = $P
backend = zram

grow = yes
EOT
expect_rc 2 check
grep -q "$CONF:5: \[area z\] sets grow = yes, but a zram area cannot grow" "$OUT" ||
	{ cat "$OUT"; fail "check does not refuse grow = yes on zram at its line"; }
pass "check refuses grow = yes for a zram area, at its line"

# ------------------------------------------------------------ growth
grow_conf 20%
sd check || { cat "$OUT"; fail "check refuses grow = yes on tmpfs"; }
resident
[ "$(stat -f -c %b "$P")" -le $((32 * 1024 * 1024 / $(stat -f -c %S "$P"))) ] || fail "the area did not start at 32M"
out=$(writer "$P" 20000 8192 2000) || fail "the writer failed: $out"
echo "$out"
set -- $out
[ "$2" = 20000 ] && [ "$4" = 0 ] || { cat "$SCRATCH/resident.log"; fail "grow = yes: $out (every file written, no ENOSPC wanted)"; }
[ "$(find "$P" -type f -name 'f*' | wc -l)" = 20000 ] || fail "files missing from the area"
[ "$(cat "$P/seed")" = seed ] || fail "the seed is gone after growing"
cmp -s <(head -c 8192 /dev/zero | tr '\0' x) "$P/d019/f19999" || fail "a file's content changed"
grep -qE "area build: grown to [0-9.]+[KMGT] and [0-9]+ inodes" "$SCRATCH/resident.log" || { cat "$SCRATCH/resident.log"; fail "no growth logged"; }
grep "area build: grown to" "$SCRATCH/resident.log" | head -3
! grep -q "No space left\|before it grew" "$SCRATCH/resident.log" || { cat "$SCRATCH/resident.log"; fail "the area was full between two looks"; }
# the bind over the directory and the private mount are one superblock:
# both show the new limits; the mount's flags stay
[ "$(stat -f -c %b "$P")" -gt $((160 * 1024 * 1024 / $(stat -f -c %S "$P"))) ] || fail "the area is not above 160M"
findmnt -n -o OPTIONS --mountpoint "$P" | grep -q "nosuid,nodev" || fail "the growth dropped nosuid,nodev: $(findmnt -n -o OPTIONS --mountpoint "$P")"
pass "grow = yes: 20000 files / 160M at 2000 a second into 32M and 1k inodes, no ENOSPC"

expect_rc 0 status
grep -E "^area +build .*grows: started at 32M and 1024 inodes, ceiling [0-9.]+[KMGT]? and [0-9]+ inodes" "$OUT" ||
	{ cat "$OUT"; fail "status does not show start and ceiling of the growing area"; }
expect_rc 0 status --json
python3 - "$OUT" <<'PY' || { cat "$OUT"; fail "status --json: start, current, ceiling"; }
import json, sys
rows = {r["what"]: r for r in json.load(open(sys.argv[1]))["status"] if r["kind"] == "area"}
b = rows["build"]
assert b["grow"] is True, b
assert b["start_size_bytes"] == 32 << 20 and b["start_inodes"] == 1024, b
assert b["size_bytes"] > 160 << 20 and b["inodes"] > 20000, b
assert b["ceiling_bytes"] >= b["size_bytes"] and b["ceiling_inodes"] >= b["inodes"], b
assert b["full"] is False and b["full_limit"] is None, b
f = rows["fixed"]
assert f["grow"] is False and f["ceiling_bytes"] is None, f
PY
pass "status and --json show start, current and ceiling"
leave
expect_rc 0 stop

# ------------------------------------------------------------ barred
# all of RAM reserved: the area cannot grow; filled, the resident names the
# limit it hit within seconds
grow_conf 100%
resident
out=$(writer "$P" 1100 16 10000)
echo "$out"
filled=$(date +%s.%N)
set -- $out
[ "$4" -gt 0 ] || fail "memory-reserve = 100% did not bar the growth: $out"
want="area build: out of inodes (1024 of 1024): writers see 'No space left on device'; it cannot grow further: memory-reserve = 100%"
for _ in $(seq 50); do grep -qF "$want" "$SCRATCH/resident.log" && break; sleep 0.1; done
grep -qF "$want" "$SCRATCH/resident.log" || { cat "$SCRATCH/resident.log"; fail "the resident did not name the limit within 5 s"; }
awk -v a="$filled" -v b="$(date +%s.%N)" 'BEGIN { printf "named within %.1f s\n", b - a }'
[ "$(grep -cF "area build: out of inodes" "$SCRATCH/resident.log")" = 1 ] || fail "the limit was named more than once"
grep -q "area build: grown" "$SCRATCH/resident.log" && fail "the area grew in spite of memory-reserve = 100%"
pass "growth barred by memory-reserve: the resident names the limit hit"

# a fixed area filled in bytes: named too, with the key to raise
dd if=/dev/zero of="$F/big" bs=1M count=8 2>/dev/null && fail "4M took 8M"
want="area fixed: out of bytes (4M of 4M): writers see 'No space left on device'; raise size= in [area fixed] ($CONF:11), or set grow = yes there"
for _ in $(seq 50); do grep -qF "$want" "$SCRATCH/resident.log" && break; sleep 0.1; done
grep -qF "$want" "$SCRATCH/resident.log" || { cat "$SCRATCH/resident.log"; fail "the resident did not name the byte limit of a fixed area"; }
pass "a full fixed area names its limit and what to raise"

expect_rc 1 status
grep -E "^area +build .*\(FULL: out of inodes \(1024 of 1024\)\)" "$OUT" || { cat "$OUT"; fail "status: no FULL with its limit"; }
grep -q "out of inodes (1024 of 1024): writers see 'No space left on device'); it grows no further than memory-reserve allows" "$OUT" || { cat "$OUT"; fail "status: the warning does not name the limit"; }
expect_rc 1 status --json
python3 - "$OUT" <<'PY' || { cat "$OUT"; fail "status --json: full_limit"; }
import json, re, sys
text = open(sys.argv[1]).read()
rows = {r["what"]: r for r in json.loads(text[re.search(r"^\{", text, re.M).start():])["status"] if r["kind"] == "area"}
assert rows["build"]["full"] is True and rows["build"]["full_limit"] == "inodes", rows["build"]
assert rows["build"]["ceiling_inodes"] == 1024, rows["build"]
assert rows["fixed"]["full"] is True and rows["fixed"]["full_limit"] == "bytes", rows["fixed"]
PY
sd status --format=prometheus
grep -qx "storaged_area_full{area=\"build\",path=\"$P\",limit=\"inodes\"} 1" "$OUT" &&
	grep -qx "storaged_area_full{area=\"build\",path=\"$P\",limit=\"bytes\"} 0" "$OUT" &&
	grep -qx "storaged_area_full{area=\"fixed\",path=\"$F\",limit=\"bytes\"} 1" "$OUT" ||
	{ cat "$OUT"; fail "the metric does not name the full limit"; }
pass "status, --json and the metric name the full limit"

# room again: said again when it fills again
rm -rf "$P/d000"
sleep 1.5
writer "$P" 1100 16 10000 >/dev/null
for _ in $(seq 50); do [ "$(grep -cF "area build: out of inodes" "$SCRATCH/resident.log")" = 2 ] && break; sleep 0.1; done
[ "$(grep -cF "area build: out of inodes" "$SCRATCH/resident.log")" = 2 ] || { cat "$SCRATCH/resident.log"; fail "an area full again is not named again"; }
pass "named again when it fills again"
leave
expect_rc 0 stop

# full below its ceiling (no resident to grow it, or a writer faster than
# its looks): the advice is to start it larger, not memory-reserve
grow_conf 20%
expect_rc 0 start
writer "$P" 1100 16 10000 >/dev/null
expect_rc 1 status
grep -q "out of inodes (1024 of 1024): writers see 'No space left on device'); the resident storaged grows it at its next look" "$OUT" &&
	grep -q "start it larger (size=, inodes= in its \[area\] section)" "$OUT" &&
	! grep -q "lower memory-reserve" "$OUT" ||
	{ cat "$OUT"; fail "a full area below its ceiling is blamed on memory-reserve"; }
grep -q "area 'build' says grow = yes, but no resident storaged runs to grow it" "$OUT" ||
	{ cat "$OUT"; fail "status does not say no resident runs to grow it"; }
expect_rc 0 stop
pass "a full area below its ceiling: start it larger, and no resident said"
