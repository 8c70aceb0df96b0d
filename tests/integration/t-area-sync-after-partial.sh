#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 42 (a fresh user's trial): a sync that left one entry out (the
# directory's copy immutable: EPERM) committed all else but kept the old
# baseline, so every later sync took all it had put for changed in the
# area again: a file it put and the directory then edited was called a
# conflict (NAME.storaged-area), one the directory then deleted came
# back.  Now the baseline moves past such a sync and the entries it left
# out go on a retry list: the next syncs keep the directory's edit and
# deletion, retry the entry left out until it goes through, and carry a
# new file left out even where the directory's names changed since (by
# the times alone it would look deleted there).
. "$(dirname "$0")/lib-area.sh"
command -v chattr >/dev/null || skip "chattr missing (e2fsprogs)"

P=$SCRATCH/proj
mkdir -p "$P/sub" "$P/sub2"
for f in put gone; do echo "old $f" >"$P/$f"; done
quiet_persist_conf "$P"
unlock() { chattr -i "$LOWER/sub" "$LOWER/sub2" 2>/dev/null; }
trap 'unlock; cleanup' EXIT
chattr +i "$P/sub" 2>/dev/null && chattr -i "$P/sub" ||
	skip "the scratch directory's filesystem has no immutable flag"
expect_rc 0 start

# two directories of the directory's made immutable: a new name in each
# is refused (EPERM)
chattr +i "$LOWER/sub" "$LOWER/sub2" || fail "chattr +i in the directory"
sleep 0.1
for f in put gone; do echo "area $f" >"$P/$f"; done
echo "area new" >"$P/sub/new"
echo "area new2" >"$P/sub2/new2"
expect_rc 1 sync p
grep -q "'sub/new'" "$OUT" && grep -q "'sub2/new2'" "$OUT" || { cat "$OUT"; fail "the sync does not name the two entries it left out"; }
[ "$(cat "$LOWER/put")" = "area put" ] || fail "the partial sync did not carry put"
pass "a sync that leaves two entries out (EPERM) carries the rest, exit 1"

# the directory edits one file the partial sync put, deletes another,
# and gets a new name beside one left out, now writable
chattr -i "$LOWER/sub" || fail "chattr -i sub"
echo "directory's edit" >"$LOWER/put"
rm "$LOWER/gone"
echo x >"$LOWER/sub/other"
sleep 0.1
expect_rc 1 sync p
grep -q "'sub2/new2'" "$OUT" || { cat "$OUT"; fail "the entry still left out is not named"; }
grep -Eq "'(put|gone|sub/new)'" "$OUT" && { cat "$OUT"; fail "the sync named what it carried before, or a conflict"; }
[ "$(cat "$LOWER/put")" = "directory's edit" ] || fail "the directory's edit of put was replaced: '$(cat "$LOWER/put")'"
[ -e "$LOWER/put.storaged-area" ] && fail "the directory's edit of put was called a conflict"
[ -e "$LOWER/gone" ] && fail "gone, deleted in the directory, came back"
[ "$(cat "$LOWER/sub/new" 2>/dev/null)" = "area new" ] || fail "sub/new, left out, was not retried"
pass "the next sync keeps the directory's edit and deletion, retries what was left out"

unlock
sleep 0.1
expect_rc 0 sync p
[ "$(cat "$LOWER/sub2/new2")" = "area new2" ] || fail "sub2/new2, once writable, was not carried"
expect_rc 0 sync p
[ -s "$OUT" ] && { cat "$OUT"; fail "the sync after was not silent"; }
expect_rc 0 stop
[ "$(cat "$P/put")" = "directory's edit" ] && [ ! -e "$P/gone" ] || fail "after stop: put or gone"
pass "once writable it is carried; the syncs after are silent"
