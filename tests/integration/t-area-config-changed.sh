#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The configuration changed under an active persist area, whose data is
# in RAM.  Its path changed: `start` leaves it where it is and says so
# (FILE:LINE, what to run).  Renamed over it: check, --dry-run and start
# refuse the new one.  Its [area] section was taken out: `sync NAME`
# and `sync` without NAME sync it as it was set up, each with a warning
# naming the configuration (`sync` said nothing), as `stop` syncs it; a
# name never set up stays an error.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
mkdir -p "$P" "$SCRATCH/moved"
echo before >"$P/file"
persist_conf "$P"
expect_rc 0 start
echo changed >"$P/file"

persist_conf "$SCRATCH/moved"
expect_rc 0 start
grep -q "area 'p' is set up on '$P', while $CONF:2 now says path = $SCRATCH/moved" "$OUT" ||
	{ cat "$OUT"; fail "start said nothing of the area's changed path"; }
mountpoint -q "$P" && ! mountpoint -q "$SCRATCH/moved" || fail "start moved the area"
pass "start with the area's path changed: it stays, and start says so with FILE:LINE"

# the section renamed: a second area over the first would take its RAM for
# the directory and sync into it.  check and --dry-run know it beforehand
# (they said "no step will fail")
persist_conf "$P"
sed -i 's/^\[area p\]$/[area q]/' "$CONF"
expect_rc 1 check
grep -q "area 'q' ($CONF:1): '$P' is covered by area 'p'" "$OUT" ||
	{ cat "$OUT"; fail "check does not say the renamed area's start will fail"; }
expect_rc 1 --dry-run
grep -q "covered by area 'p'" "$OUT" || { cat "$OUT"; fail "--dry-run does not say the renamed area's start will fail"; }
expect_rc 1 start
grep -q "area 'q' ($CONF:1): '$P' is covered by area 'p'" "$OUT" ||
	{ cat "$OUT"; fail "start set up a renamed area over the active one, or said nothing"; }
[ ! -e "$RUN/areas/q" ] || ! mountpoint -q "$RUN/areas/q/area" || fail "start mounted area q"
pass "start of a renamed area over the active one is refused, naming both"

: >"$CONF" # the section is gone; the area is still set up
expect_rc 0 sync p
grep -q "no \[area p\] in $CONF any more" "$OUT" || { cat "$OUT"; fail "sync p of an unconfigured area gave no warning naming $CONF"; }
[ "$(cat "$RUN/areas/p/lower/file")" = changed ] || fail "sync p of an unconfigured area did not reach the directory"
pass "sync NAME of an active area out of the configuration syncs it, and says so"

echo again >"$P/file"
expect_rc 0 sync
grep -q "no \[area p\] in $CONF any more" "$OUT" || { cat "$OUT"; fail "sync of an unconfigured area gave no warning naming $CONF"; }
[ "$(cat "$RUN/areas/p/lower/file")" = again ] || fail "sync of an unconfigured area did not reach the directory"
pass "sync without NAME says it of the area as sync NAME does"

expect_rc 2 sync nosuch
grep -q "no \[area nosuch\]" "$OUT" || { cat "$OUT"; fail "sync of an unknown area: no error naming it"; }
pass "sync NAME of an area never set up is still refused"

expect_rc 0 stop
! mountpoint -q "$P" || fail "stop left the unconfigured area mounted"
[ "$(cat "$P/file")" = again ] || fail "the change is not in the directory after stop"
pass "stop removes it, the change kept"
