#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 42 (a fresh user's trial): a file deleted in the directory (through
# another path to it) and not changed in the area stays deleted, at every
# later sync and at stop, as storaged(8) says of every change made in the
# directory alone.  The sync after the deletion kept it (the directory's
# names had changed since its baseline), but recorded nothing: the sync
# after that, past the new baseline, took the area's file for new there
# and put it back, exit 0.  At the root and in a subdirectory; a file the
# area changes after the deletion comes back, as where both sides changed.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/proj
mkdir -p "$P/sub"
quiet_persist_conf "$P"
expect_rc 0 start
for f in r sub/r c; do echo "area $f" >"$P/$f"; done
sleep 0.1
expect_rc 0 sync p
for f in r sub/r c; do [ -f "$LOWER/$f" ] || fail "the first sync did not carry $f"; done
rm "$LOWER/r" "$LOWER/sub/r" "$LOWER/c"
for i in 1 2 3; do
	sleep 0.1
	echo "$i" >>"$P/other" # an unrelated change: the syncs have work
	expect_rc 0 sync p
	for f in r sub/r c; do
		[ -e "$LOWER/$f" ] && fail "sync $i after the deletion put '$f' back into the directory"
	done
done
pass "deleted in the directory, unchanged in the area: deleted at every later sync"

echo "changed" >>"$P/c"
sleep 0.1
sd sync p
[ "$(tail -n 1 "$LOWER/c" 2>/dev/null)" = changed ] || { cat "$OUT"; fail "c, changed in the area after its deletion there, did not come back"; }
expect_rc 0 stop
for f in r sub/r; do [ -e "$P/$f" ] && fail "stop put '$f' back into the directory"; done
[ -f "$P/c" ] || fail "stop lost c"
pass "one changed in the area afterwards comes back; stop keeps the deletions"
