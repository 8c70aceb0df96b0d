#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C05: an area smaller than its seed is refused up front with both sizes;
# a process holding a file open under the directory is named in a warning.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/logs
mkdir -p "$P"
head -c $((80 * 1024 * 1024)) /dev/urandom >"$P/big.bin"
echo "small text" >"$P/notes.txt"
sum_before=$(cd "$P" && md5sum big.bin notes.txt)

conf() {
	write_conf <<EOT
[area c05]
path = $P
backend = tmpfs
size = $1
EOT
}

conf 32M
expect_rc 1 --dry-run
grep -q "does not fit" "$OUT" || { cat "$OUT"; fail "dry-run does not predict the failure"; }
grep -q "storaged: error: 1 step will fail$" "$OUT" || { cat "$OUT"; fail "dry-run exit status unexplained"; }
[ -z "$(scratch_mounts)" ] || fail "dry-run mounted something"
# check names where to change it: the [area] section's file and line
expect_rc 1 check
grep -q "^storaged: error: $CONF:1: step 1, area c05 .*: will fail: seed needs " "$OUT" ||
	{ cat "$OUT"; fail "check does not name the area's file and line in its 'will fail' error"; }
expect_rc 1 start
# units_format_size(): 80 MiB and the few KiB of the directory and the text
# file print exactly in KiB ("81928K"), or with one decimal in MiB
grep -Eq "seed needs (8[0-9]{4}K|8[0-9]\.[0-9]M) but the area has 32M" "$OUT" ||
	{ cat "$OUT"; fail "message lacks the seed and area sizes"; }
grep -Eq "(4[89][0-9]{3}K|4[89]\.[0-9]M) short" "$OUT" || { cat "$OUT"; fail "message lacks the shortfall"; }
is_mountpoint "$P" && fail "directory covered"
[ -z "$(scratch_mounts)" ] || fail "tmpfs left mounted: $(scratch_mounts)"
[ ! -e "$RUN/areas/c05" ] || fail "half-made state left"
[ "$(cd "$P" && md5sum big.bin notes.txt)" = "$sum_before" ] || fail "data changed"
pass "32M refused: $(grep -o 'seed needs.*' "$OUT")"

conf 128M
# a writer holding a file open under the directory
sleep 300 3>>"$P/notes.txt" &
holder=$!
expect_rc 0 start
kill $holder 2>/dev/null
wait $holder 2>/dev/null
is_mountpoint "$P" || fail "128M: not covered"
grep -q "pid $holder (sleep) has files open under $P: its writes go to the hidden copy" "$OUT" || { cat "$OUT"; fail "no warning naming pid $holder"; }
[ "$(cd "$P" && md5sum big.bin notes.txt)" = "$sum_before" ] || fail "seeded data differs"
expect_rc 0 stop
pass "128M seeded and bound; warned about pid $holder"
