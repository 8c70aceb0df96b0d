#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check and --dry-run on a running system: an area start set up (seed =
# overlay, and a copied seed) is a done step, "already set up", as a mount
# already mounted is, and nothing will fail; they said of the overlay
# area that its directory "is itself on an overlay" (its own) and exited
# 1.  An area whose bind someone unmounted fails, in start's words: start
# refuses it (check said nothing will fail).
. "$(dirname "$0")/lib-area.sh"

grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
mkdir -p "$SCRATCH/ov" "$SCRATCH/cp"
echo a >"$SCRATCH/ov/f"
echo b >"$SCRATCH/cp/g"
write_conf <<EOT
[area ov]
path = $SCRATCH/ov
backend = tmpfs
size = 16M
persist = yes
seed = overlay

[area cp]
path = $SCRATCH/cp
backend = tmpfs
size = 16M
persist = yes
seed = yes
EOT

sd --dry-run || { cat "$OUT"; fail "--dry-run before start"; }
grep -q 'done' "$OUT" && { cat "$OUT"; fail "--dry-run before start: a step done"; }
sd start || { cat "$OUT"; fail "start"; }

sd --dry-run || { cat "$OUT"; fail "--dry-run with the areas set up exits 1"; }
grep -q 'will fail\|itself on an overlay' "$OUT" && { cat "$OUT"; fail "--dry-run: a set-up area will fail"; }
for a in ov cp; do
	grep -q "^[12] area $a .*(done: already set up)$" "$OUT" ||
		{ cat "$OUT"; fail "--dry-run: area $a not done"; }
done
sd check || { cat "$OUT"; fail "check with the areas set up exits 1"; }
grep -q 'no step will fail' "$OUT" || { cat "$OUT"; fail "check: not 'no step will fail'"; }
sd start || { cat "$OUT"; fail "start again"; }
[ -s "$OUT" ] && { cat "$OUT"; fail "start again is not quiet"; }
pass "set-up areas are done steps of check and --dry-run"

# someone unmounts the copied area's bind: start refuses it (run stop
# first), and so do check and --dry-run, in start's words
umount "$SCRATCH/cp" || fail "umount the bind"
expect_rc 1 --dry-run
grep -q "^2 area cp .*(will fail: area 'cp' was set up, but .*: run \`.*stop\` first)$" "$OUT" ||
	{ cat "$OUT"; fail "--dry-run: an area whose bind is gone does not fail"; }
grep -q '^1 area ov .*(done: already set up)$' "$OUT" || { cat "$OUT"; fail "--dry-run: area ov not done"; }
expect_rc 1 check
why=$(sed -n "s/.*step 2, area cp .*: will fail: //p" "$OUT")
[ -n "$why" ] || { cat "$OUT"; fail "check: area cp does not fail"; }
expect_rc 1 start
grep -qF "$why" "$OUT" || { cat "$OUT"; fail "start's refusal is not check's: $why"; }
expect_rc 0 stop
pass "an area whose bind is gone fails in check and --dry-run as in start"
