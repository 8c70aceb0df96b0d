#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An active persist area whose [area] section was taken out of the
# configuration still holds its data in RAM: `sync NAME` syncs it as it
# was set up, with a warning naming the configuration, as `sync` without
# NAME and `stop` do; a name that was never set up stays an error.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
mkdir -p "$P"
echo before >"$P/file"
persist_conf "$P"
expect_rc 0 start
echo changed >"$P/file"

: >"$CONF" # the section is gone; the area is still set up
expect_rc 0 sync p
grep -q "no \[area p\] in $CONF any more" "$OUT" || { cat "$OUT"; fail "sync p of an unconfigured area gave no warning naming $CONF"; }
[ "$(cat "$RUN/areas/p/lower/file")" = changed ] || fail "sync p of an unconfigured area did not reach the directory"
pass "sync NAME of an active area out of the configuration syncs it, and says so"

expect_rc 2 sync nosuch
grep -q "no \[area nosuch\]" "$OUT" || { cat "$OUT"; fail "sync of an unknown area: no error naming it"; }
pass "sync NAME of an area never set up is still refused"

expect_rc 0 stop
! mountpoint -q "$P" || fail "stop left the unconfigured area mounted"
[ "$(cat "$P/file")" = changed ] || fail "the change is not in the directory after stop"
pass "stop removes it, the change kept"
