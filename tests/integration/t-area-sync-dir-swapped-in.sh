#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hostile trial of f1b8090 (the span rule of the sync back, issue 42): no write underneath at all.  A sync
# puts D/b in the directory (its ctime falls between the area's baseline
# and the lower one, as every sync's own renames do), then in the area D
# is moved away (mv D Dold) and an older directory E, unchanged since
# that sync, is renamed to D (a rename does not move a directory's own
# mtime).  sync_lower_made_during() takes the lower D/b, which the area's
# D lacks, in a directory whose mtime says the area removed no name, for
# one made in the directory during the last sync, and keeps it: the next
# sync and stop leave D/b in the directory, where the area has none (and
# Dold/b beside it), exit 0: the directory ends unlike the area though
# nothing but the area changed. 
# Passed before f1b8090; fixed by leaving the span rule out below a
# directory moved in the area (it or one above it changed since the
# baseline).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/proj
mkdir -p "$P/D" "$P/E"
echo a >"$P/D/a"
echo e >"$P/E/e"
persist_conf "$P"
expect_rc 0 start
sleep 0.1
echo b >"$P/D/b"
expect_rc 0 sync
sleep 0.1
mv "$P/D" "$P/Dold" && mv "$P/E" "$P/D"
expect_rc 0 sync
expect_rc 0 stop
got=$(cd "$P" && find . | LC_ALL=C sort | tr '\n' ' ')
[ "$got" = ". ./D ./D/e ./Dold ./Dold/a ./Dold/b " ] ||
	fail "after mv D Dold; mv E D in the area and a sync, the directory holds: $got(expected: . ./D ./D/e ./Dold ./Dold/a ./Dold/b)"
pass "a directory renamed over a synced one: the directory ends like the area"
